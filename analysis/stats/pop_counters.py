"""Instruction and IPC scaling of the POP metrics, where likwid-perfctr counted the compute region
(docs/pop-metrics.md): per hardware thread, likwid's metrics `CPI` and `Runtime unhalted [s]` (every
group prints both on x86) give its cycles (unhalted runtime x the nominal clock) and its instructions
(cycles / CPI); the nominal clock cancels in every ratio below. Over a repetition's hardware threads,
instructions I = sum of unhalted / CPI and cycles C = sum of unhalted; per case, their means over the
repetitions with counters status ok. Against the case's 1-worker case (of the same variant):

    instruction_scaling = I(1 worker) / I        (more instructions in all with more workers: < 1)
    ipc_scaling         = (I / C) / (I(1) / C(1)) (fewer instructions per cycle: < 1)

Where either case has no such counters, both are missing and `counter_scaling` says why:
"unavailable: <reason>" (the records' counters reason, e.g. no access to the MSRs, or no counter group
measured); "measured" otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.speedup import self_rows

CPI = "CPI"
UNHALTED = "Runtime unhalted [s]"
NO_GROUP = "no counter group measured (counter_group in the experiment)"
NO_METRICS = f"the counter group printed no {CPI!r} and {UNHALTED!r} per hardware thread"


def _per_case(counters: pd.DataFrame) -> pd.DataFrame:
    """case_id -> mean over repetitions of (instructions, cycles) in units of the nominal clock."""
    wanted = counters[counters["metric"].isin([CPI, UNHALTED])]
    if wanted.empty:
        return pd.DataFrame(columns=["instructions", "cycles"])
    wide = wanted.pivot_table(
        index=["case_id", "rep", "hwthread"], columns="metric", values="value", observed=True
    ).dropna()
    if not {CPI, UNHALTED} <= set(wide.columns):
        return pd.DataFrame(columns=["instructions", "cycles"])
    wide = wide[wide[CPI] > 0]
    per_rep = (
        pd.DataFrame({"instructions": wide[UNHALTED] / wide[CPI], "cycles": wide[UNHALTED]})
        .groupby(level=["case_id", "rep"], observed=True)
        .sum()
    )
    return per_rep.groupby(level="case_id", observed=True).mean()


def _reasons(records: pd.DataFrame) -> dict[str, str]:
    """case_id -> why its records carry no usable counters (the first reason its records give)."""
    if records.empty or "counters_status" not in records:
        return {}
    reasons = {}
    for case_id, group in records.groupby("case_id", observed=True):
        if (group["counters_status"] == "ok").any():
            reasons[str(case_id)] = NO_METRICS
            continue
        given = group["counters_reason"].dropna() if "counters_reason" in group else pd.Series()
        reasons[str(case_id)] = str(given.iloc[0]) if len(given) else NO_GROUP
    return reasons


def counter_scaling(
    pop: pd.DataFrame, summary: pd.DataFrame, records: pd.DataFrame, counters: pd.DataFrame
) -> pd.DataFrame:
    """pop_metrics' table with instruction_scaling, ipc_scaling and counter_scaling added."""
    if pop.empty:
        return pop
    measured = _per_case(counters) if not counters.empty else pd.DataFrame()
    reasons = _reasons(records)
    case_ids = summary["case_id"].astype(str).to_numpy()
    one = dict(zip(case_ids, [case_ids[r] if r >= 0 else None for r in self_rows(summary)], strict=True))
    instruction, ipc, status = [], [], []
    for case_id in pop["case_id"].astype(str):
        base = one.get(case_id)
        missing = [c for c in (case_id, base) if c is None or c not in measured.index]
        if missing:
            instruction.append(np.nan)
            ipc.append(np.nan)
            why = "no 1-worker case" if missing[0] is None else reasons.get(missing[0], NO_GROUP)
            status.append(f"unavailable: {why}")
            continue
        i, c = measured.loc[case_id, "instructions"], measured.loc[case_id, "cycles"]
        i1, c1 = measured.loc[base, "instructions"], measured.loc[base, "cycles"]
        instruction.append(i1 / i)
        ipc.append((i / c) / (i1 / c1))
        status.append("measured")
    return pop.assign(instruction_scaling=instruction, ipc_scaling=ipc, counter_scaling=status)
