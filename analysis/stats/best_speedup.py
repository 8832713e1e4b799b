"""The speedup every figure leads with: where a case's speedup was paired within trials
(stats/paired.py) and the paired estimate has an interval (at least MIN_TRIALS trials), that estimate;
elsewhere the unpaired ratio of medians (stats/speedup.py). The speedup table's `speedup`,
`speedup_ci_low`, `speedup_ci_high`, the efficiencies and Karp–Flatt then hold the best estimate,
`estimate` says which one ("paired" or "unpaired"; `estimate_trials`, the trials behind a paired
one), and `unpaired_speedup*` keep the ratio of medians beside it. The paired estimate is the one
the precision target judges (PAIRED_ESTIMATE: every trial measured together, disturbed ones too), so
the headline, the findings table, the scaling plots, the plausibility check and the performance gate
read the same figure the runner sampled for."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.comparison_precision import PAIRED_ESTIMATE
from analysis.stats.speedup import karp_flatt, weak_factor

PAIRED, UNPAIRED = "paired", "unpaired"
VALUE = ["speedup", "speedup_ci_low", "speedup_ci_high"]
UNPAIRED_VALUE = [f"unpaired_{c}" for c in VALUE]
TRIALS = {"paired_together_": "trials_together", "paired_": "trials"}  # the trials behind each estimate


def estimate_text(row) -> str:
    """'paired, N trials' or 'unpaired' for one speedup row (a mapping or a named tuple)."""
    get = row.get if hasattr(row, "get") else lambda k, d=None: getattr(row, k, d)
    if get("estimate") != PAIRED:
        return UNPAIRED
    trials = get("estimate_trials")
    return f"{PAIRED}, {int(trials)} trials" if trials == trials and trials is not None else PAIRED


def estimate_counts(sp: pd.DataFrame) -> str:
    """'N paired, M unpaired' over the rows that have a speedup."""
    has = sp[sp["speedup"].notna()]
    paired = int((has.get("estimate", pd.Series(dtype=object)) == PAIRED).sum())
    return f"{paired} paired within trials, {len(has) - paired} unpaired"


def best_speedups(speedup: pd.DataFrame, paired: pd.DataFrame, prefix: str = PAIRED_ESTIMATE) -> pd.DataFrame:
    sp = speedup.copy()
    sp["estimate"] = UNPAIRED
    sp["estimate_trials"] = np.nan
    sp[UNPAIRED_VALUE] = sp[VALUE].to_numpy()
    if paired.empty:
        return sp
    source = [f"{prefix}speedup", f"{prefix}ci_low", f"{prefix}ci_high", TRIALS[prefix]]
    estimates = paired[["case_id", "baseline_case_id", *source]].dropna(subset=source[:3])
    key = pd.MultiIndex.from_frame(sp[["case_id", "baseline_case_id"]].astype(object))
    found = estimates.set_index(["case_id", "baseline_case_id"])[source]
    found = found[~found.index.duplicated()].reindex(key)
    use = found[source[0]].notna().to_numpy()
    if not use.any():
        return sp
    weak = weak_factor(sp)[use][:, None]  # a paired ratio of times, as a speedup (weak scaling)
    sp.loc[use, VALUE] = found[source[:3]].to_numpy()[use] * weak
    sp.loc[use, "estimate"] = PAIRED
    sp.loc[use, "estimate_trials"] = found[source[3]].to_numpy()[use]
    workers = sp["workers"].astype(float)
    for column in ("", "_ci_low", "_ci_high"):
        sp[f"efficiency{column}"] = sp[f"speedup{column}"] / workers
    sp["karp_flatt"] = karp_flatt(sp["speedup"], workers)
    return sp
