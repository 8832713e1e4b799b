"""How strongly the repetitions of one kernel process resemble each other, over the whole campaign.

The runner measures a case in several kernel processes (invocations) of a few repetitions each. The
repetitions of one process share its start (memory layout, the CPUs' state) and a few seconds of the
host's state, which on a shared host changes over minutes: they are not independent draws. The median
CIs treat them as independent; when repetitions within a process correlate (intraclass correlation ICC),
a sample of n repetitions in processes of m carries about as much information as n / (1 + (m - 1) ICC)
independent ones (the design effect), and the CIs are about sqrt(design effect) too narrow. This module
measures that, so the report can say so.

Estimator: one-way random-effects ANOVA on log time, processes nested in cases (each case centred on
its own mean, so differences between cases never count as correlation); only cases measured in at
least two processes, and processes with at least two repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.categorical import case_categories


@dataclass(frozen=True)
class ProcessCorrelation:
    icc: float  # intraclass correlation of log times within a process (clipped at 0)
    reps_per_process: float  # mean repetitions per process (m)
    processes: int
    cases: int

    @property
    def design_effect(self) -> float:
        return 1.0 + (self.reps_per_process - 1.0) * self.icc

    @property
    def ci_narrowing(self) -> float:
        """How many times too narrow a CI is that takes the repetitions for independent."""
        return float(np.sqrt(self.design_effect))


def within_process_correlation(records: pd.DataFrame) -> ProcessCorrelation | None:
    """The ICC of repetitions within kernel processes, or None where it cannot be estimated (records
    without `invocation`, no case measured in two processes of two or more repetitions)."""
    if records.empty or not {"case_id", "invocation", "wall_s"} <= set(records.columns):
        return None
    case = case_categories(records["case_id"]).cat.codes.to_numpy().astype(np.int64)
    process = pd.to_numeric(records["invocation"], errors="coerce").to_numpy(dtype=float)
    wall = pd.to_numeric(records["wall_s"], errors="coerce").to_numpy(dtype=float)
    keep = (wall > 0) & np.isfinite(process)
    case, process, wall = case[keep], process[keep].astype(np.int64), wall[keep]
    if not len(wall):
        return None
    # Integer group ids, one pass each (a million records: no pandas groupby per statistic).
    _, group = np.unique(case * (int(process.max()) + 1) + (process - process.min()), return_inverse=True)
    keep = np.bincount(group)[group] >= 2  # processes of at least two repetitions
    case, group, wall = case[keep], group[keep], wall[keep]
    _, first = np.unique(group, return_index=True)
    keep = np.bincount(case[first], minlength=case.max(initial=0) + 1)[case] >= 2  # cases of 2+ processes
    if not keep.any():
        return None
    log = np.log(wall[keep])
    case_codes, case_index = np.unique(case[keep], return_inverse=True)
    group_codes, group_index = np.unique(group[keep], return_inverse=True)
    n, n_cases, n_processes = len(log), len(case_codes), len(group_codes)
    case_n = np.bincount(case_index)
    log = log - (np.bincount(case_index, weights=log) / case_n)[case_index]  # centred within each case
    counts = np.bincount(group_index).astype(float)
    means = np.bincount(group_index, weights=log) / counts
    within = float(((log - means[group_index]) ** 2).sum()) / (n - n_processes)
    # Between processes of the same case (case means are 0 after centring).
    between = float((counts * means**2).sum()) / (n_processes - n_cases)
    # Unequal process sizes: the usual n0 of the one-way ANOVA estimator.
    n0 = (n - float((counts**2).sum()) / n) / (n_processes - 1)
    denominator = between + (n0 - 1.0) * within
    icc = (between - within) / denominator if denominator > 0 else 0.0
    return ProcessCorrelation(
        icc=float(max(0.0, icc)),
        reps_per_process=float(counts.mean()),
        processes=int(n_processes),
        cases=int(n_cases),
    )
