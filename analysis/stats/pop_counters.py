"""Instruction and IPC scaling of the POP metrics, where likwid-perfctr counted the compute region
(docs/pop-metrics.md): per hardware thread, likwid's metrics `CPI` and `Runtime unhalted [s]` (every
group prints both on x86) give its cycles (unhalted runtime x the nominal clock) and its instructions
(cycles / CPI); the nominal clock cancels in every ratio below. Over a repetition's hardware threads,
instructions I = sum of unhalted / CPI and cycles C = sum of unhalted; per case, their means over the
repetitions with counters status ok. Against the case's 1-worker case (of the same variant):

    instruction_scaling = I(1 worker) / I        (more instructions in all with more workers: < 1)
    ipc_scaling         = (I / C) / (I(1) / C(1)) (fewer instructions per cycle: < 1)

Each with _lo/_hi: the percentile bootstrap of pop_metrics (its resamples and confidence), resampling
the repetitions with counters of the case and, independently, of its 1-worker case. With one counter
reading in either case there is nothing to resample: the factor is given, its interval is empty.
Where either case has no such counters, both are missing and `counter_scaling` says why:
"unavailable: <reason>" (the records' counters reason, e.g. no access to the MSRs, or no counter group
measured); "measured" otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.per_case import CONFIDENCE
from analysis.stats.pop_metrics import RESAMPLES
from analysis.stats.speedup import self_rows

CPI = "CPI"
UNHALTED = "Runtime unhalted [s]"
NO_GROUP = "no counter group measured (counter_group in the experiment)"
NO_METRICS = f"the counter group printed no {CPI!r} and {UNHALTED!r} per hardware thread"


def _per_rep(counters: pd.DataFrame) -> pd.DataFrame:
    """(case_id, rep) -> (instructions, cycles) in units of the nominal clock, summed over the
    repetition's hardware threads."""
    wanted = counters[counters["metric"].isin([CPI, UNHALTED])]
    if wanted.empty:
        return pd.DataFrame(columns=["instructions", "cycles"])
    wide = wanted.pivot_table(
        index=["case_id", "rep", "hwthread"], columns="metric", values="value", observed=True
    ).dropna()
    if not {CPI, UNHALTED} <= set(wide.columns):
        return pd.DataFrame(columns=["instructions", "cycles"])
    wide = wide[wide[CPI] > 0]
    return (
        pd.DataFrame({"instructions": wide[UNHALTED] / wide[CPI], "cycles": wide[UNHALTED]})
        .groupby(level=["case_id", "rep"], observed=True)
        .sum()
    )


def _scaling(case: np.ndarray, one: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(instruction_scaling, ipc_scaling) from the means of (instructions, cycles) of a case and of its
    1-worker case (point estimates or rows of replicates)."""
    (i, c), (i1, c1) = case, one
    return i1 / i, (i / c) / (i1 / c1)


def _bootstrap(case: np.ndarray, one: np.ndarray, rng: np.random.Generator) -> list[float]:
    """[instruction lo, hi, ipc lo, hi] over resampled repetitions; empty with one reading."""
    if len(case) < 2 or len(one) < 2:
        return [np.nan] * 4
    draws = rng.integers(0, len(case), (RESAMPLES, len(case)))
    draws_1 = rng.integers(0, len(one), (RESAMPLES, len(one)))
    alpha = (1 - CONFIDENCE) / 2
    spread = _scaling(case[draws].mean(axis=1).T, one[draws_1].mean(axis=1).T)
    return [q for values in spread for q in np.quantile(values, [alpha, 1 - alpha])]


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
    pop: pd.DataFrame, summary: pd.DataFrame, records: pd.DataFrame, counters: pd.DataFrame, seed: int = 0
) -> pd.DataFrame:
    """pop_metrics' table with instruction_scaling, ipc_scaling (each with _lo/_hi) and counter_scaling
    added."""
    if pop.empty:
        return pop
    per_rep = _per_rep(counters) if not counters.empty else pd.DataFrame()
    readings = {
        str(case): group.to_numpy(dtype=float)
        for case, group in (per_rep.groupby(level="case_id", observed=True) if len(per_rep) else [])
    }
    reasons = _reasons(records)
    case_ids = summary["case_id"].astype(str).to_numpy()
    one = dict(zip(case_ids, [case_ids[r] if r >= 0 else None for r in self_rows(summary)], strict=True))
    rng = np.random.default_rng(seed)
    columns = ["instruction_scaling", "ipc_scaling", "instruction_scaling_lo", "instruction_scaling_hi"]
    columns += ["ipc_scaling_lo", "ipc_scaling_hi"]
    values, status = [], []
    for case_id in pop["case_id"].astype(str):
        base = one.get(case_id)
        missing = [c for c in (case_id, base) if c is None or c not in readings]
        if missing:
            values.append([np.nan] * len(columns))
            why = "no 1-worker case" if missing[0] is None else reasons.get(missing[0], NO_GROUP)
            status.append(f"unavailable: {why}")
            continue
        case, case_1 = readings[case_id], readings[base]
        instruction, ipc = _scaling(case.mean(axis=0), case_1.mean(axis=0))
        i_lo, i_hi, ipc_lo, ipc_hi = _bootstrap(case, case_1, rng)
        values.append([instruction, ipc, i_lo, i_hi, ipc_lo, ipc_hi])
        status.append("measured")
    added = pd.DataFrame(values, columns=columns, index=pop.index)
    return pop.assign(**{name: added[name] for name in columns}, counter_scaling=status)
