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
    largest over those cases of (median flagged time / median clean time - 1)."""
    needed = {"case_id", "wall_s", "disturbed_reason", "kernel"}
    if flagged.empty or not needed <= set(flagged.columns):
        return pd.DataFrame(columns=COLUMNS)
    inner = flagged["inner_path"] if "inner_path" in flagged else pd.Series(None, index=flagged.index)
    if "inner" in flagged:  # records of kernels older than inner_path: the inner loop asked for
        inner = inner.astype(object).fillna(flagged["inner"].astype(object))
    rows = pd.DataFrame(
        {
            "case_id": flagged["case_id"].astype(str).to_numpy(),
            "kernel": flagged["kernel"].astype(str).to_numpy(),
            "inner_path": inner.fillna("-").astype(str).to_numpy(),
            "reason": flagged["disturbed_reason"].fillna(CLEAN).astype(str).to_numpy(),
            "wall_s": pd.to_numeric(flagged["wall_s"], errors="coerce").to_numpy(),
        }
    ).dropna(subset=["wall_s"])
    per_case = rows.groupby(["case_id", "kernel", "inner_path", "reason"], observed=True)["wall_s"].agg(
        ["median", "size"]
    )
    per_case = per_case.reset_index()
    clean = per_case[per_case["reason"] == CLEAN].set_index("case_id")
    hit = per_case[per_case["reason"] != CLEAN]
    hit = hit[hit["case_id"].isin(clean.index)]
    if hit.empty:
        return pd.DataFrame(columns=COLUMNS)
    base = clean.loc[hit["case_id"]]
    hit = hit.assign(
        change=hit["median"].to_numpy() / base["median"].to_numpy() - 1.0,
        clean_reps=base["size"].to_numpy(),
    )
    table = hit.groupby(["kernel", "inner_path", "reason"], observed=True).agg(
        cases=("case_id", "size"),
        reps_flagged=("size", "sum"),
        reps_clean=("clean_reps", "sum"),
        change_median=("change", "median"),
        change_min=("change", "min"),
        change_max=("change", "max"),
    )
    table = table.reset_index().sort_values(["kernel", "inner_path", "reason"], ignore_index=True)
    return table[COLUMNS].astype({"cases": np.int64, "reps_flagged": np.int64, "reps_clean": np.int64})
