"""A precision target on the comparison itself: more trials for the families whose paired speedups are
not yet precise enough (experiment keys `comparison_target_ci` and `comparison_budget_s`, copied onto
each case of a family as `comparison`).

It comes after today's per-case rule (sbcore/sampling.py): the runner first measures every case as its
own `target_ci`/`min_reps`/`max_reps`/`budget_s` ask (in trials); then, while the campaign's comparison
budget lasts, it picks the family whose widest paired speedup is furthest from the target and runs one
more trial of it (one process of every member that still has room under `max_reps`, in a fresh random
order), and decides again. A family is done when every speedup against its baseline (its serial member)
has a 95 % CI half-width within the target, or when its baseline has no room left. Oversubscribed
cases (more workers than the node type's cores, marked by the plan) are not sampled for it: their
speedups are reported but outside the campaign's precision count (analysis/stats/comparison_precision.py).

The runner's decision uses the distribution-free CI of the median of the per-trial ratios (baseline
time / case time within a trial, sbcore/sampling.py's median_ci: microseconds, no resampling); the
analysis reports its bootstrap CI over the same trials (analysis/stats/paired.py).
"""

from __future__ import annotations

from pathlib import Path
from statistics import median

from jobs.status import ok_records
from sbcore import sampling


def comparison_target(cases: list[dict]) -> dict | None:
    """The campaign's comparison target ({"target_ci", "budget_s"}), None without one."""
    return next((c["comparison"] for c in cases if c.get("comparison")), None)


def process_times(records: dict[int, dict]) -> dict[int, float]:
    """Invocation (trial) -> the median wall time of its repetitions."""
    walls: dict[int, list[float]] = {}
    for k, record in records.items():
        if isinstance(record.get("wall_s"), int | float):
            walls.setdefault(record.get("invocation", k), []).append(record["wall_s"])
    return {p: median(ws) for p, ws in walls.items()}


def speedup_halfwidth(base: dict[int, float], case: dict[int, float]) -> float:
    """The relative CI half-width of the paired speedup base/case over their common trials (infinite
    while they have too few for an interval)."""
    ratios = [base[p] / case[p] for p in base.keys() & case.keys() if case[p] > 0]
    halfwidth = sampling.relative_halfwidth(ratios)
    return float("inf") if halfwidth is None else halfwidth


def has_room(case: dict, measured: set[int], p: int) -> bool:
    """Invocation p is one the case's planned repetitions hold and has not been measured."""
    return p < sampling.blocks(sampling.case_rule(case)) and p not in measured


def family_need(
    campaign_dir: Path, members: list[dict], target: float
) -> tuple[float, list[dict], int] | None:
    """(widest half-width above target, the baseline and the members whose speedup is that imprecise
    and that have room, the next trial's invocation number); None when the family needs no trial."""
    baseline = next((c for c in members if c.get("model") == "serial"), None)
    if baseline is None:
        return None
    times = {c["case_id"]: process_times(ok_records(campaign_dir, c)) for c in members}
    p = 1 + max((q for t in times.values() for q in t), default=-1)  # the same trial number for all
    base = times[baseline["case_id"]]
    if not has_room(baseline, set(base), p):
        return None
    imprecise = [
        (speedup_halfwidth(base, times[c["case_id"]]), c)
        for c in members
        if c is not baseline
        and not c["comparison"].get("oversubscribed")
        and has_room(c, set(times[c["case_id"]]), p)
    ]
    imprecise = [(hw, c) for hw, c in imprecise if hw > target]
    if not imprecise:
        return None
    return max(hw for hw, _ in imprecise), [baseline, *(c for _, c in imprecise)], p


def next_trial(campaign_dir: Path, cases: list[dict], target: float) -> tuple[list[dict], int] | None:
    """The members and invocation number of the next trial: of the family whose widest paired speedup
    lies furthest above `target`; None when every family meets it or has no room left."""
    families: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("family"):
            families.setdefault(case["family"], []).append(case)
    needs = [n for n in (family_need(campaign_dir, m, target) for m in families.values()) if n]
    if not needs:
        return None
    _, members, p = max(needs, key=lambda n: n[0])
    return members, p
