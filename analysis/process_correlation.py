"""How strongly the repetitions of one kernel process resemble each other, over the whole campaign.

The runner measures a case in several kernel processes (invocations) of a few repetitions each. The
repetitions of one process share its start (memory layout, the CPUs' state) and a few seconds of the
host's state, which on a shared host changes over minutes: they are not independent draws. The median
CIs treat them as independent; when repetitions within a process correlate (intraclass correlation ICC),
a sample of n repetitions in processes of m carries about as much information as n / (1 + (m - 1) ICC)
independent ones (the design effect), and the CIs are about sqrt(design effect) too narrow. This module
measures that, so the report can say so.

Estimator: one-way random-effects ANOVA on log(time / case median), processes nested in cases (each
case centred on its own mean, so differences between cases never count as correlation); only cases
measured in at least two processes, and processes with at least two repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


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
    frame = pd.DataFrame(
        {
            "case": records["case_id"].astype(str).to_numpy(),
            "process": pd.to_numeric(records["invocation"], errors="coerce").to_numpy(),
            "wall": pd.to_numeric(records["wall_s"], errors="coerce").to_numpy(),
        }
    )
    frame = frame[(frame["wall"] > 0) & frame["process"].notna()]
    sizes = frame.groupby(["case", "process"])["wall"].transform("size")
    frame = frame[sizes >= 2]
    processes_of = frame.groupby("case")["process"].transform("nunique")
    frame = frame[processes_of >= 2]
    if frame.empty:
        return None
    log = np.log(frame["wall"]) - np.log(frame.groupby("case")["wall"].transform("median"))
    frame = frame.assign(log=log - log.groupby(frame["case"]).transform("mean"))
    by_process = frame.groupby(["case", "process"])["log"]
    process_mean, size = by_process.transform("mean"), by_process.transform("size")
    n, n_processes, n_cases = len(frame), by_process.ngroups, frame["case"].nunique()
    within = float(((frame["log"] - process_mean) ** 2).sum()) / (n - n_processes)
    means = by_process.mean()
    counts = by_process.size()
    # Between processes of the same case: case means are 0 after centring.
    between = float((counts * means**2).sum()) / (n_processes - n_cases)
    # Unequal process sizes: the usual n0 of the one-way ANOVA estimator.
    n0 = (n - float((counts**2).sum()) / n) / (n_processes - 1) if n_processes > 1 else float(size.mean())
    denominator = between + (n0 - 1.0) * within
    icc = (between - within) / denominator if denominator > 0 else 0.0
    return ProcessCorrelation(
        icc=float(max(0.0, icc)),
        reps_per_process=float(counts.mean()),
        processes=int(n_processes),
        cases=int(n_cases),
    )
