"""Tables of cases as a person reads them on the console (`compare`, `check`, `history`): the
parameters that tell the cases apart as columns (not hashes alone), ratios with their CI as one text."""

from __future__ import annotations

import json

import pandas as pd

from analysis.stats.verdicts import reps_for_rank_test, smallest_rank_test_p


def varying_params(params_json: pd.Series) -> pd.DataFrame:
    """One column per kernel parameter whose value differs between the rows (schedule, samples, ...)."""
    params = pd.DataFrame(
        [json.loads(p) if isinstance(p, str) else {} for p in params_json], index=params_json.index
    )
    varying = [c for c in params.columns if params[c].astype(str).nunique() > 1]
    return params[varying].astype(object).where(params[varying].notna(), "-")


def ratio_text(ratio, low, high) -> list[str]:
    return [f"{r:.3f} [{lo:.3f}-{hi:.3f}]" for r, lo, hi in zip(ratio, low, high, strict=True)]


def reps_needed_text(needed) -> list[str]:
    return ["" if n == 0 else "?" if n != n else f"{int(n)}" for n in needed]


def show(table: pd.DataFrame) -> str:
    with pd.option_context("display.max_rows", 500, "display.width", 250, "display.max_columns", 40):
        return table.to_string(index=False, float_format=lambda v: f"{v:.4g}")


def rank_test_warning(n_a: pd.Series, n_b: pd.Series, alpha: float = 0.05) -> str | None:
    """A warning when some pairs have too few repetitions for the Mann–Whitney test to ever reach alpha."""
    floors = [smallest_rank_test_p(a, b) for a, b in zip(n_a, n_b, strict=True)]
    hopeless = [p for p in floors if p >= alpha]
    if not hopeless:
        return None
    return (
        f"{len(hopeless)} of {len(floors)} pairs have too few repetitions for the Mann-Whitney test: its "
        f"p-value cannot fall below {min(hopeless):.3g} (>= {alpha:g}), so no difference can be significant "
        f"however large; measure at least {reps_for_rank_test(alpha)} repetitions per case, or judge by the "
        "verdict column (the CI of the ratio against the band)"
    )
