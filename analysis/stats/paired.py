"""Paired speedups from trials: the baseline's time over the case's time within one trial of their
comparison family (jobs/families.py: members measured back to back, seconds apart), a median over
trials and a bootstrap CI over trials. A slow phase of the host that lasts longer than a trial slows
both members of it alike, so it cancels in the ratio instead of widening the interval.

A trial is one invocation number of the two cases (a record's `invocation`); one kernel process's
repetitions count as one time: the median of those not flagged as disturbed (stats/disturbance.py).
A trial is left out when a member has no such repetition, or when the two processes started more than
MAX_APART_S apart (measured in different host phases: a resumed campaign, or Slurm array tasks);
the table says how many of each, and gives the paired ratio over every trial measured together
(disturbed ones too: `paired_together_*`) separately, for a host disturbed all the time. Cases
without a family, or whose baseline is in another family, get no paired speedup (the unpaired one in
speedup.csv stays, as do all summaries of absolute times).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.variant_tests import COLUMNS as VARIANT_TEST_COLUMNS

CONFIDENCE = 0.95
MAX_APART_S = 30.0
MIN_TRIALS = 3  # fewer paired trials: no interval
COLUMNS = [
    "case_id",
    "baseline_case_id",
    "family",
    "trials",
    "left_out_disturbed",
    "left_out_apart",
    "paired_speedup",
    "paired_ci_low",
    "paired_ci_high",
    "paired_halfwidth_rel",
    "trials_together",
    "paired_together_speedup",
    "paired_together_ci_low",
    "paired_together_ci_high",
    "paired_together_halfwidth_rel",
]


def trial_times(records: pd.DataFrame) -> pd.DataFrame:
    """Per (case_id, invocation): the median wall time of the clean repetitions (of all when none is
    clean: `disturbed`), and when the process started (seconds since the epoch; NaN when unknown)."""
    disturbed = records["disturbed"] if "disturbed" in records else pd.Series(False, index=records.index)
    started = (
        records["started"].astype(object) if "started" in records else pd.Series(None, index=records.index)
    )
    df = pd.DataFrame(
        {
            "case_id": records["case_id"].astype(str),
            "invocation": records["invocation"],
            "wall_s": records["wall_s"].astype(float),
            "disturbed": disturbed.astype(bool).to_numpy(),
            "started": pd.to_datetime(started, utc=True, errors="coerce"),
        }
    ).dropna(subset=["invocation", "wall_s"])
    # A process's time: the median of its clean repetitions; disturbed when it has none.
    df["clean_wall_s"] = df["wall_s"].where(~df["disturbed"])
    grouped = df.groupby(["case_id", "invocation"], sort=True)
    out = grouped.agg(
        clean=("clean_wall_s", "median"), all_s=("wall_s", "median"), started=("started", "min")
    )
    out["disturbed"] = out["clean"].isna()
    out["wall_s"] = out["clean"].fillna(out["all_s"])
    out["started_s"] = (out["started"] - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    return out[["wall_s", "disturbed", "started_s"]]


def median_ci(
    ratios: np.ndarray, rng: np.random.Generator, n_resamples: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Percentile bootstrap CI of the median of `ratios`, resampling whole trials (the one paired
    bootstrap: the reproductions' paired factors use it at their own confidence)."""
    draws = rng.integers(0, len(ratios), size=(n_resamples, len(ratios)))
    medians = np.median(ratios[draws], axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


def ratio_summary(ratios: np.ndarray, rng: np.random.Generator, n_resamples: int, prefix: str) -> dict:
    """{prefix}speedup (median of the per-trial ratios), its CI and relative half-width."""
    median = float(np.median(ratios)) if len(ratios) else np.nan
    low = high = np.nan
    if len(ratios) >= MIN_TRIALS:
        low, high = median_ci(ratios, rng, n_resamples)
    return {
        f"{prefix}speedup": median,
        f"{prefix}ci_low": low,
        f"{prefix}ci_high": high,
        f"{prefix}halfwidth_rel": (high - low) / 2 / median,
    }


def paired_ratio(
    base: pd.DataFrame, case: pd.DataFrame, rng: np.random.Generator, n_resamples: int = 2000
) -> dict:
    """base, case: trial_times rows of two cases (index: invocation). The paired ratio base/case over
    the clean trials, and shown separately over every trial measured together (disturbed ones too)."""
    both = base.merge(case, left_index=True, right_index=True, suffixes=("_base", "_case"))
    disturbed = both["disturbed_base"] | both["disturbed_case"]
    apart = (both["started_s_base"] - both["started_s_case"]).abs() > MAX_APART_S
    ratios = (both["wall_s_base"] / both["wall_s_case"]).to_numpy(dtype=float)
    clean = (~disturbed & ~apart).to_numpy()
    return {
        "trials": int(clean.sum()),
        "left_out_disturbed": int(disturbed.sum()),
        "left_out_apart": int((apart & ~disturbed).sum()),
        **ratio_summary(ratios[clean], rng, n_resamples, "paired_"),
        "trials_together": int((~apart).sum()),
        **ratio_summary(ratios[(~apart).to_numpy()], rng, n_resamples, "paired_together_"),
    }


def paired_rows(
    pairs: pd.DataFrame, num: str, den: str, records: pd.DataFrame, families: dict[str, str], rng
) -> list[dict]:
    """For each row of `pairs` whose cases `num` and `den` share a family (and differ): the row, its
    family and paired_ratio(num's trials, den's trials), i.e. num's time over den's within a trial."""
    pairs = pairs[pairs[num].notna() & pairs[den].notna() & (pairs[num] != pairs[den])]
    family = pairs[den].map(families)
    pairs = pairs[family.notna() & (family == pairs[num].map(families))]
    if pairs.empty or records.empty:
        return []
    times = trial_times(records[records["case_id"].isin(set(pairs[num]) | set(pairs[den]))])
    rows = []
    for pair in pairs.to_dict("records"):
        if pair[num] not in times.index or pair[den] not in times.index:
            continue
        ratio = paired_ratio(times.loc[pair[num]], times.loc[pair[den]], rng)
        rows.append({**pair, "family": families[pair[den]], **ratio})
    return rows


def paired_speedups(
    speedup: pd.DataFrame, records: pd.DataFrame, families: dict[str, str], rng: np.random.Generator
) -> pd.DataFrame:
    """One row per speedup row whose case and baseline share a family (and are not the same case)."""
    pairs = speedup[["case_id", "baseline_case_id"]]
    rows = paired_rows(pairs, "baseline_case_id", "case_id", records, families, rng)
    return pd.DataFrame(rows, columns=COLUMNS)


# A variant comparison's identity: the columns of comparisons.csv up to its two cases.
VARIANT_KEY = VARIANT_TEST_COLUMNS[: VARIANT_TEST_COLUMNS.index("case_b") + 1]
VARIANT_COLUMNS = [
    *VARIANT_KEY,
    "family",
    *[c.replace("speedup", "ratio_b_over_a") for c in COLUMNS[3:]],
]


def paired_variant_ratios(
    comparisons: pd.DataFrame, records: pd.DataFrame, families: dict[str, str], rng: np.random.Generator
) -> pd.DataFrame:
    """The variant comparisons (stats/variant_tests.py: two cases differing in one of schedule or sync
    at the same workers) whose cases share a family, paired: case_b's time over case_a's within a
    trial (above 1: b is slower), as ratio_b_over_a in comparisons.csv."""
    if comparisons.empty or "dimension" not in comparisons:
        return pd.DataFrame(columns=VARIANT_COLUMNS)
    pairs = comparisons[comparisons["dimension"].isin(["schedule", "sync"])][VARIANT_KEY]
    rows = paired_rows(pairs, "case_b", "case_a", records, families, rng)
    table = pd.DataFrame(rows)
    return table.rename(columns=lambda c: c.replace("speedup", "ratio_b_over_a")).reindex(
        columns=VARIANT_COLUMNS
    )
