"""The POP efficiency metrics per case, with bootstrap CIs over repetitions (docs/pop-metrics.md).

From the per-worker measurements of each repetition (records' worker_* fields: mean and maximum over
the workers of useful time U and work) and its wall time W (the compute region):

    load_balance         = mean U / max U            (time balance, as POP)
    work_balance         = mean work / max work      (work is counted, not timed)
    sync_efficiency      = max U / W                 (synchronisation and scheduling)
                         = serialisation_efficiency x transfer_efficiency   (MPI only, below)
    parallel_efficiency  = mean U / W                = load_balance x sync_efficiency
    computation_scaling  = U(1 worker) / (p x mean U)
    frequency_scaling    = clock / clock(1 worker), clock = the workers' mean core clock
                           (worker_clock_ghz_mean), else the first thread's (clock_ghz)
    other_scaling        = computation_scaling / frequency_scaling (instructions x IPC: no counters)
    efficiency           = W(1 worker) / (p x W)     (measured, against the variant's 1-worker case)
                         = parallel_efficiency x computation_scaling / one_worker_parallel_efficiency

MPI splits sync_efficiency as POP does, approximated without an ideal-network replay: with w the
waiting inside MPI calls of the worker whose useful time is max U (records' worker_wait_at_useful_max_s,
the critical path), serialisation_efficiency = max U / (max U + w) and transfer_efficiency =
(max U + w) / W: waiting for another rank is serialisation, the rest of the critical path outside
useful time is transfer (docs/pop-metrics.md says what this approximation cannot see).

one_worker_parallel_efficiency is the 1-worker case's own mean U / W (the harness's share at one
worker). Against the serial baseline the efficiency carries one more factor, serial_cost = the serial
case's median wall time / this variant's 1-worker median (efficiency_vs_serial). Every quantity is a
ratio of means over repetitions; each bootstrap replicate resamples the repetitions of the case and,
independently, of its 1-worker case, so the identities hold in every replicate as in the estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.categorical import numeric
from analysis.stats.per_case import CONFIDENCE
from analysis.stats.speedup import baseline_rows, self_rows

RESAMPLES = 400
# (column, name used in sentences) of the factors whose product is the efficiency
LOSS_FACTORS = {
    "load_balance": "load imbalance",
    "sync_efficiency": "synchronisation and scheduling",
    "computation_scaling": "computation scaling",
}
MEASURED = ["worker_useful_mean_s", "worker_useful_max_s", "worker_work_mean", "worker_work_max"]
TIMED = MEASURED[:2]  # a user's program has no work count: its work balance stays empty
METHOD = "pop_method"  # a user's program: where its per-worker times come from (docs/own-programs.md)
HARNESS = "harness"  # the kernels' own per-worker timing
POP_WALL = "pop_wall_s"  # a program's whole process, where its figure of merit times only a part
CRITICAL_WAIT = "worker_wait_at_useful_max_s"  # optional: records before it lack it
WORKER_CLOCK = "worker_clock_ghz_mean"  # optional: every worker's clock; else the first thread's
SPLIT_MODELS = {"mpi"}  # models whose sync_efficiency is split into serialisation and transfer
FACTORS = [
    "work_balance",
    "load_balance",
    "sync_efficiency",
    "serialisation_efficiency",
    "transfer_efficiency",
    "parallel_efficiency",
    "one_worker_parallel_efficiency",
    "computation_scaling",
    "frequency_scaling",
    "other_scaling",
    "efficiency",
]


def _means(values: np.ndarray, draws: np.ndarray | None) -> np.ndarray:
    """(quantities,) means over repetitions, or (quantities, resamples) over resampled repetitions."""
    return values.mean(axis=0) if draws is None else values[draws].mean(axis=1).T


def _factors(case: np.ndarray, one: np.ndarray, workers: int) -> dict[str, np.ndarray]:
    """Factors from the means of (wall, useful mean, useful max, work mean, work max, clock, critical
    path's wait) of a case and of its 1-worker case (point estimates or rows of replicates)."""
    wall, useful, useful_max, work, work_max, clock, critical_wait = case
    wall_1, useful_1, _, _, _, clock_1, _ = one
    computation = useful_1 / (workers * useful)
    frequency = clock / clock_1
    return {
        "work_balance": work / work_max,
        "load_balance": useful / useful_max,
        "sync_efficiency": useful_max / wall,
        "serialisation_efficiency": useful_max / (useful_max + critical_wait),
        "transfer_efficiency": (useful_max + critical_wait) / wall,
        "parallel_efficiency": useful / wall,
        "one_worker_parallel_efficiency": useful_1 / wall_1,
        "computation_scaling": computation,
        "frequency_scaling": frequency,
        "other_scaling": computation / frequency,
        "efficiency": wall_1 / (workers * wall),
    }


def pop_metrics(summary: pd.DataFrame, records: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """One row per case whose records carry per-worker measurements and whose scaling series has a
    1-worker case: the factors above, each with _lo/_hi (95 % percentile bootstrap), serial_cost,
    efficiency_vs_serial and largest_loss (the factor furthest below 1 of LOSS_FACTORS)."""
    columns = ["wall_s", *MEASURED, "clock", CRITICAL_WAIT]
    if records.empty or not set(TIMED) <= set(records.columns):
        return pd.DataFrame()
    records = records.assign(**{c: records.get(c, np.nan) for c in MEASURED[2:]})
    if POP_WALL in records:
        records = records.assign(wall_s=numeric(records[POP_WALL]).fillna(numeric(records["wall_s"])))
    measured = records.dropna(subset=["wall_s", *TIMED])
    if CRITICAL_WAIT not in measured:
        measured = measured.assign(**{CRITICAL_WAIT: np.nan})
    workers_clock = numeric(measured.get(WORKER_CLOCK, pd.Series(np.nan, measured.index, dtype=float)))
    first_clock = numeric(measured.get("clock_ghz", pd.Series(np.nan, measured.index, dtype=float)))
    measured = measured.assign(clock=workers_clock.fillna(first_clock))
    reps = {
        case: group[columns].to_numpy(dtype=float)
        for case, group in measured.groupby("case_id", observed=True)
    }
    methods = (
        measured.dropna(subset=[METHOD]).groupby("case_id", observed=True)[METHOD].first().to_dict()
        if METHOD in measured
        else {}
    )
    one_row = self_rows(summary)
    serial_row, _ = baseline_rows(summary, "serial")
    median = summary["median_s"].to_numpy(dtype=float)
    case_ids = summary["case_id"].to_numpy()
    rng = np.random.default_rng(seed)
    alpha = (1 - CONFIDENCE) / 2
    rows = []
    for i, case_id in enumerate(case_ids):
        base = one_row.iloc[i]
        if case_id not in reps or base < 0 or case_ids[base] not in reps:
            continue
        values, values_1 = reps[case_id], reps[case_ids[base]]
        workers = int(summary["workers"].iloc[i])
        if "scaling" in summary and summary["scaling"].iloc[i] == "weak":
            workers = 1  # each worker has the 1-worker case's whole problem: ideal times are equal
        point = _factors(_means(values, None), _means(values_1, None), workers)
        if summary["model"].iloc[i] not in SPLIT_MODELS:
            point["serialisation_efficiency"] = point["transfer_efficiency"] = np.nan
        draws = rng.integers(0, len(values), (RESAMPLES, len(values)))
        draws_1 = rng.integers(0, len(values_1), (RESAMPLES, len(values_1)))
        spread = _factors(_means(values, draws), _means(values_1, draws_1), workers)
        row = {
            "case_id": case_id,
            "workers": int(summary["workers"].iloc[i]),
            "method": methods.get(case_id, HARNESS),
        }
        for name in FACTORS:
            row[name] = point[name]
            low, high = (
                np.nanquantile(spread[name], [alpha, 1 - alpha])
                if np.isfinite(point[name])
                else (np.nan,) * 2
            )
            row[f"{name}_lo"], row[f"{name}_hi"] = low, high
        serial = serial_row.iloc[i]
        row["serial_cost"] = median[serial] / median[base] if serial >= 0 else np.nan
        row["efficiency_vs_serial"] = row["efficiency"] * row["serial_cost"]
        row["largest_loss"] = min(LOSS_FACTORS, key=lambda name: row[name])
        rows.append(row)
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    described = summary[["case_id", "node_type", "binary", "kernel", "lang", "model", "schedule", "sync"]]
    return described.merge(table, on="case_id")
