"""What each disturbance flag costs, measured in the campaign itself: within every case that has
repetitions flagged for a reason and clean ones, the median time of the flagged ones over the median of
the clean ones, summarised per kernel, inner loop and reason.

A flag says that the machine was in another state; whether that state slowed a kernel down depends on
the kernel (a shared FP pipe slows a vector loop, barely a scalar one). This table lets the reader see
which flags matter for which results, instead of taking every flag for a slower repetition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.categorical import case_categories

COLUMNS = [
    "kernel",
    "inner_path",
    "reason",
    "cases",
    "reps_flagged",
    "reps_clean",
    "change_median",
    "change_min",
    "change_max",
]
CLEAN = ""  # disturbed_reason of an undisturbed repetition


def disturbance_effect(flagged: pd.DataFrame) -> pd.DataFrame:
    """One row per (kernel, inner loop, reason) with at least one case holding both repetitions flagged
    for that reason and clean ones: how many such cases and repetitions, and the median, smallest and
    largest over those cases of (median flagged time / median clean time - 1).

    Grouped by integer codes (case, reason): a million records are never turned into strings."""
    needed = {"case_id", "wall_s", "disturbed_reason", "kernel"}
    if flagged.empty or not needed <= set(flagged.columns):
        return pd.DataFrame(columns=COLUMNS)
    case = case_categories(flagged["case_id"])
    reason_codes, reasons = pd.factorize(flagged["disturbed_reason"].fillna(CLEAN), sort=True)
    rows = pd.DataFrame(
        {
            "case": case.cat.codes.to_numpy(),
            "reason": reason_codes,
            "wall_s": pd.to_numeric(flagged["wall_s"], errors="coerce").to_numpy(),
        }
    ).dropna(subset=["wall_s"])
    per_case = rows.groupby(["case", "reason"], sort=False)["wall_s"].agg(["median", "size"]).reset_index()
    clean_code = reasons.get_loc(CLEAN) if CLEAN in reasons else -1
    clean = per_case[per_case["reason"] == clean_code].set_index("case")
    hit = per_case[(per_case["reason"] != clean_code) & per_case["case"].isin(clean.index)]
    if hit.empty:
        return pd.DataFrame(columns=COLUMNS)
    base = clean.loc[hit["case"]]
    kernel, inner = _per_case(flagged, case)
    hit = hit.assign(
        change=hit["median"].to_numpy() / base["median"].to_numpy() - 1.0,
        clean_reps=base["size"].to_numpy(),
        kernel=kernel[hit["case"].to_numpy()],
        inner_path=inner[hit["case"].to_numpy()],
        reason=np.asarray(reasons, dtype=object)[hit["reason"].to_numpy()],
    )
    table = hit.groupby(["kernel", "inner_path", "reason"]).agg(
        cases=("case", "size"),
        reps_flagged=("size", "sum"),
        reps_clean=("clean_reps", "sum"),
        change_median=("change", "median"),
        change_min=("change", "min"),
        change_max=("change", "max"),
    )
    table = table.reset_index().sort_values(["kernel", "inner_path", "reason"], ignore_index=True)
    return table[COLUMNS].astype({"cases": np.int64, "reps_flagged": np.int64, "reps_clean": np.int64})


def _per_case(flagged: pd.DataFrame, case: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each case's kernel and inner loop (as its first record says), indexed by case code. The inner
    loop is `inner_path` (the loop that ran), for records of older kernels the `inner` asked for."""
    first = np.unique(case.cat.codes.to_numpy(), return_index=True)[1]
    picked = flagged.iloc[first]
    inner = picked["inner_path"] if "inner_path" in picked else pd.Series(None, index=picked.index)
    if "inner" in picked:
        inner = inner.astype(object).fillna(picked["inner"].astype(object))
    kernel = picked["kernel"].astype(object).fillna("-").astype(str).to_numpy()
    return kernel, inner.astype(object).fillna("-").astype(str).to_numpy()
