"""How well a rule of the machine-state probe tells the repetitions a kernel ran slowly, judged on a noise
trace: one kernel run back to back on each CPU of a node, one row per repetition with its `cpu`, its
order `seq` on that CPU, its `wall_s` and the probe's block times right before and after it
(`probe_before_<block>_s`, `probe_after_<block>_s`; perf/record_noise_trace.py records one).

A repetition is slow when it took more than SLOW_RATIO times the median of its CPU's repetitions (the
same kernel, the same work: only the machine differs); its time is `wall_s`, or `cpu_user_s` to leave
out the time it waited for a CPU (on a machine loaded by other processes those waits are most of what
slows it, and no block of the probe is meant to see them). A rule flags repetitions; judged, it gives the
share of the slow repetitions it flags (what it catches) and the share of the others it flags (its false
alarms). Two kinds of rule:
- `block_over_median`: one block's time on one side of the repetition over a ratio of that block's
  median on its CPU (how the traces' own notes count what a block sees);
- `analysis_rule`: the analysis's own flags (analysis/stats/disturbance.py) on the trace taken as
  records of one host, so that a rule is judged exactly as a campaign applies it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.disturbance import SCALING_KERNELS, flag_disturbed

SLOW_RATIO = 1.15  # a repetition this much slower than its CPU's median one is slow
SIDES = ("before", "after")
REASON_SEPARATOR = " + "  # between the names of a record's raised flags (disturbed_reason)

Rule = Callable[[pd.DataFrame], pd.Series]


@dataclass(frozen=True)
class Shares:
    caught: float  # share of the slow repetitions the rule flags (NaN without slow ones)
    false_alarms: float  # share of the other repetitions it flags (NaN without others)
    n_slow: int
    n_other: int


def slow_repetitions(trace: pd.DataFrame, ratio: float = SLOW_RATIO, time: str = "wall_s") -> pd.Series:
    """Per repetition: whether its `time` was more than `ratio` times its CPU's median one."""
    times = pd.to_numeric(trace[time], errors="coerce")
    return times > ratio * times.groupby(trace["cpu"]).transform("median")


def judge(trace: pd.DataFrame, rule: Rule, ratio: float = SLOW_RATIO, time: str = "wall_s") -> Shares:
    """The shares of the slow repetitions of `trace` (by `time`) and of its others that `rule` flags."""
    slow = slow_repetitions(trace, ratio, time).to_numpy(dtype=bool)
    flagged = rule(trace).fillna(False).to_numpy(dtype=bool)
    n_slow, n_other = int(slow.sum()), int((~slow).sum())
    caught = flagged[slow].mean() if n_slow else np.nan
    false_alarms = flagged[~slow].mean() if n_other else np.nan
    return Shares(float(caught), float(false_alarms), n_slow, n_other)


def judge_per_cpu(
    trace: pd.DataFrame, rule: Rule, ratio: float = SLOW_RATIO, time: str = "wall_s"
) -> dict[int, Shares]:
    """`judge` on each CPU's repetitions alone (the rule sees the whole trace: the analysis learns a
    host's normal from all its CPUs)."""
    flagged = rule(trace)
    return {
        int(cpu): judge(rows, lambda r: flagged.loc[r.index], ratio, time)
        for cpu, rows in trace.groupby("cpu")
    }


def block_over_median(block: str, ratio: float, side: str = "after") -> Rule:
    """A rule: the block's time on `side` of the repetition (before, after) over `ratio` times that
    block's median time on the same CPU."""
    if side not in SIDES:
        raise ValueError(f"side {side!r}: one of {', '.join(SIDES)}")
    column = f"probe_{side}_{block}_s"

    def rule(trace: pd.DataFrame) -> pd.Series:
        times = pd.to_numeric(trace[column], errors="coerce")
        return times > ratio * times.groupby(trace["cpu"]).transform("median")

    return rule


def blocks_of(trace: pd.DataFrame) -> list[str]:
    """The probe blocks a trace holds both sides of, in its column order."""
    found = []
    for column in trace.columns:
        if column.startswith("probe_before_") and column.endswith("_s"):
            block = column.removeprefix("probe_before_").removesuffix("_s")
            if f"probe_after_{block}_s" in trace:
                found.append(block)
    return found


def as_records(trace: pd.DataFrame) -> pd.DataFrame:
    """The trace as the analysis's record columns: one host, one single-threaded case, each block's
    fastest and slowest time over both sides as probe_<block>_min_s / _max_s, the run-queue wait where
    the trace has it."""
    records = pd.DataFrame(
        {
            "case_id": "trace",
            "hostname": "trace",
            "kernel": SCALING_KERNELS[0],  # one thread per CPU: the run-queue rule applies
            "threads": 1,
            "wall_s": pd.to_numeric(trace["wall_s"], errors="coerce"),
            "probe_cpus": 1,
        },
        index=trace.index,
    )
    for block in blocks_of(trace):
        sides = [pd.to_numeric(trace[f"probe_{side}_{block}_s"], errors="coerce") for side in SIDES]
        records[f"probe_{block}_min_s"] = np.fmin(*sides)
        records[f"probe_{block}_max_s"] = np.fmax(*sides)
    if "probe_runq_wait_s" in trace:
        records["probe_runq_wait_s"] = pd.to_numeric(trace["probe_runq_wait_s"], errors="coerce")
    return records


def analysis_rule(reasons: Iterable[str]) -> Rule:
    """A rule: the analysis flags the repetition for one of `reasons` (disturbed_reason's names, e.g.
    "slow probe", PIPES_REASON, ALU_REASON of analysis/stats/disturbance.py)."""
    wanted = set(reasons)

    def rule(trace: pd.DataFrame) -> pd.Series:
        named = flag_disturbed(as_records(trace))["disturbed_reason"].astype(str)
        return named.map(lambda text: bool(wanted & set(text.split(REASON_SEPARATOR))))

    return rule
