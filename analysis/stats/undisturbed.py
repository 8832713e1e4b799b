"""The repetitions a verdict rests on: by default only those the machine-state probe did not flag.

On a shared host the slow phases (another tenant on the core's pipes, a core taken away) last seconds
to minutes, so a rerun of ten repetitions can lie wholly in one phase and its reference in the other: a
verdict from all repetitions then reports the host, not the code. `check` and `compare` therefore judge
each case on its undisturbed repetitions (analysis/stats/disturbance.py decides which), and a case with
fewer than MIN_UNDISTURBED of them gets no verdict but `inconclusive`, with the reason "host disturbed"
(its figures are then shown over all its repetitions, basis "all").
Records without a probe are never flagged: all their repetitions count. `--repetitions all` judges on
every repetition, as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.disturbance import flag_disturbed

BASES = ("undisturbed", "all")  # what `--repetitions` may name; the first is the default
MIN_UNDISTURBED = 5  # fewer undisturbed repetitions than this: inconclusive (host disturbed)
COUNT_COLUMNS = ["case_id", "reps_measured", "reps_disturbed", "basis"]


def measured_only(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty or "warmup" not in records:
        return records
    return records[~records["warmup"].astype(bool).to_numpy()]


def keep(records: pd.DataFrame, basis: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the measured records of `basis`, per case: COUNT_COLUMNS: its measured and disturbed repetitions
    and the basis its figures are over: `basis`, or "all" for a case too disturbed to judge)."""
    if basis not in BASES:
        raise ValueError(f"repetitions {basis!r}: expected one of {', '.join(BASES)}")
    measured = measured_only(records)
    if measured.empty:
        return measured, pd.DataFrame(columns=COUNT_COLUMNS)
    flagged = flag_disturbed(measured)
    disturbed = flagged["disturbed"].fillna(False).to_numpy(dtype=bool)
    case = measured["case_id"].astype(str).to_numpy()
    counts = (
        pd.DataFrame({"case_id": case, "reps_measured": 1, "reps_disturbed": disturbed.astype(int)})
        .groupby("case_id", sort=True, as_index=False)
        .sum()
    )
    short = too_disturbed(counts["reps_measured"], counts["reps_disturbed"], basis)
    counts["basis"] = np.where(short, "all", basis)
    if basis == "all":
        return measured, counts[COUNT_COLUMNS]
    keep_all = np.isin(case, counts.loc[short, "case_id"].to_numpy())
    return measured[~disturbed | keep_all], counts[COUNT_COLUMNS]


def too_disturbed(reps_measured, reps_disturbed, basis: str) -> np.ndarray:
    """Per case: True where the basis leaves fewer than MIN_UNDISTURBED repetitions to judge."""
    if basis == "all":
        return np.zeros(np.shape(reps_measured), dtype=bool)
    left = np.asarray(reps_measured, dtype=float) - np.asarray(reps_disturbed, dtype=float)
    return ~(left >= MIN_UNDISTURBED)


def disturbed_reason(reps_measured, reps_disturbed, basis: str) -> list[str]:
    """Per case: "" or the one line saying why it has no verdict."""
    short = too_disturbed(reps_measured, reps_disturbed, basis)
    return [
        f"host disturbed: {int(n - d)} of {int(n)} repetitions undisturbed, fewer than {MIN_UNDISTURBED}"
        if s
        else ""
        for s, n, d in zip(short, np.nan_to_num(reps_measured), np.nan_to_num(reps_disturbed), strict=True)
    ]
