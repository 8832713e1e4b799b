"""One case across campaigns: each campaign's value against the previous one's, judged by the verdict
engine (analysis/stats/verdicts.py). No file I/O.

History works from the analysis tables, not raw records, so there are no bootstrap replicates to pair:
the CI of the ratio of two medians is taken from their two CIs on the log scale (independent, each
half-width a normal 1.96 sigma): log r +- sqrt(a^2 + b^2), a and b the two CIs' log half-widths. That
is an approximation of `check --against` (which resamples the records); it is said where shown."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.verdicts import Band, judge


def ratio_ci_from_cis(
    value, low, high, prev, prev_low, prev_high
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    value, low, high, prev, prev_low, prev_high = (
        np.asarray(x, dtype=float) for x in (value, low, high, prev, prev_low, prev_high)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = value / prev
        half = lambda v, lo, hi: np.fmax(np.log(hi / v), np.log(v / lo))  # noqa: E731
        spread = np.sqrt(half(value, low, high) ** 2 + half(prev, prev_low, prev_high) ** 2)
    return ratio, ratio * np.exp(-spread), ratio * np.exp(spread)


def trend(points: pd.DataFrame, band: Band, higher_is_better: bool) -> pd.DataFrame:
    """points: one row per (series, campaign) with series, date, value, ci_low, ci_high, n; adds the
    time-like ratio to the series' previous campaign, its CI and the verdict (first point: none)."""
    out = points.sort_values(["series", "date", "campaign"], ignore_index=True)
    previous = out.groupby("series", sort=False)[["value", "ci_low", "ci_high", "n"]].shift(1)
    if higher_is_better:  # a speedup: previous / current, so that above 1 is slower
        ratio, low, high = ratio_ci_from_cis(
            previous["value"],
            previous["ci_low"],
            previous["ci_high"],
            out["value"],
            out["ci_low"],
            out["ci_high"],
        )
    else:
        ratio, low, high = ratio_ci_from_cis(
            out["value"],
            out["ci_low"],
            out["ci_high"],
            previous["value"],
            previous["ci_low"],
            previous["ci_high"],
        )
    verdict, needed = judge(ratio, low, high, band, np.fmin(out["n"], previous["n"]))
    first = previous["value"].isna().to_numpy()
    out["ratio_to_previous"] = np.where(first, np.nan, ratio)
    out["ratio_ci_low"] = np.where(first, np.nan, low)
    out["ratio_ci_high"] = np.where(first, np.nan, high)
    out["verdict"] = np.where(first, None, verdict)
    out["reps_needed"] = np.where(first, np.nan, needed)
    return out
