"""A precision target on the comparison itself: more trials for the families whose paired speedups or
variant ratios are not yet precise enough (experiment keys `comparison_target_ci` and
`comparison_budget_s`, copied onto each case of a family as `comparison`).

It comes after today's per-case rule (sbcore/sampling.py): the runner first measures every case as its
own `target_ci`/`min_reps`/`max_reps`/`budget_s` ask (in trials); then, while the campaign's comparison
budget lasts, it picks the family whose widest paired comparison is furthest from the target and runs
one more trial of it (a process of each case of the comparisons still too wide that all have room
under `max_reps`, the baseline as often as it runs in a trial, jobs/families.py; in the trial order
of jobs/families.py), and decides again. Such a trial runs that family alone, also in a trial group
of several families (jobs/families.py), and takes a trial number no case of the group has yet: the
analysis pairs across a group's families (analysis/stats/paired_cross.py) only processes of one trial.
The comparisons are the analysis' (analysis/stats/paired.py):
each member's speedup against the family's baseline (its serial member) and each variant ratio (two
members that differ in exactly one of schedule or sync, analysis/stats/variant_tests.py); and across a
trial group each language or inner-loop ratio (sbcore/cross_pairs.py), whose extra trial runs its two
cases (of two families) together, under a trial number new to the group. A family is
done when every one of them has a 95 % CI half-width within the target, or when no case of one that
does not has room left. Oversubscribed
cases (more workers than the node type's cores, marked by the plan) are not sampled for it: their
comparisons are reported but outside the campaign's precision count (analysis/stats/comparison_precision.py).

The runner's decision uses the distribution-free CI of the median of the per-trial ratios (the two
times at the same moment of a trial, sbcore/trial_pairing.py; sbcore/sampling.py's median_ci:
microseconds, no resampling); the analysis reports its bootstrap CI over the same trials
(analysis/stats/paired.py).
"""

from __future__ import annotations

from pathlib import Path
from statistics import median

from jobs.families import is_baseline, trial_runs
from jobs.status import ok_records
from sbcore import sampling
from sbcore.cross_pairs import cross_pairs
from sbcore.trial_pairing import Run, times_together
from sbcore.variant_dimensions import VARIANT_DIMENSIONS


def comparison_target(cases: list[dict]) -> dict | None:
    """The campaign's comparison target ({"target_ci", "budget_s"}), None without one."""
    return next((c["comparison"] for c in cases if c.get("comparison")), None)


def process_times(records: dict[int, dict]) -> dict[int, list[Run]]:
    """Trial -> the case's processes in it: (place in the trial, the median wall time of its
    repetitions). Records without a trial (older campaigns) count their invocation as their trial."""
    walls: dict[tuple[int, int], list[float]] = {}
    places: dict[tuple[int, int], tuple[int, float]] = {}
    for k, record in records.items():
        if isinstance(record.get("wall_s"), int | float):
            p = record.get("invocation", k)
            walls.setdefault(p, []).append(record["wall_s"])
            places[p] = (record.get("trial", p), record.get("trial_slot", 0))
    times: dict[int, list[Run]] = {}
    for p, ws in walls.items():
        trial, slot = places[p]
        times.setdefault(trial, []).append(Run(slot, median(ws)))
    return times


def ratio_halfwidth(num: dict[int, list[Run]], den: dict[int, list[Run]]) -> float:
    """The relative CI half-width of the paired ratio num/den (times at the same moment of each common
    trial, sbcore/trial_pairing.py); infinite while they have too few trials for an interval."""
    ratios = []
    for t in num.keys() & den.keys():
        a, b = times_together(num[t], den[t])
        if b > 0:
            ratios.append(a / b)
    halfwidth = sampling.relative_halfwidth(ratios)
    return float("inf") if halfwidth is None else halfwidth


def has_room(case: dict, measured: set[int], p: int) -> bool:
    """Invocation p is one the case's planned repetitions hold and has not been measured."""
    return p < sampling.blocks(sampling.case_rule(case)) and p not in measured


def trial_invocations(case: dict, t: int) -> list[int]:
    """The invocations of the case in trial t (several for a baseline that runs more than once)."""
    runs = trial_runs(case)
    return list(range(t * runs, (t + 1) * runs))


class RecordCache:
    """Each case's process times, read once and then only again for a case that ran since."""

    def __init__(self, campaign_dir: Path):
        self.campaign_dir = Path(campaign_dir)
        self.times: dict[str, tuple[dict[int, list[Run]], set[int]]] = {}

    def get(self, case: dict) -> tuple[dict[int, list[Run]], set[int]]:
        """(trial -> runs, measured invocations) of the case."""
        if case["case_id"] not in self.times:
            records = ok_records(self.campaign_dir, case)
            invocations = {r.get("invocation", k) for k, r in records.items()}
            self.times[case["case_id"]] = (process_times(records), invocations)
        return self.times[case["case_id"]]

    def forget(self, case: dict) -> None:
        """The case ran: read its records again when next asked."""
        self.times.pop(case["case_id"], None)


VARIANT_MATCH = (
    "binary",
    "pin",
    "counter_group",
    "threads",
    "ranks",
)  # with the family: the same measurement


def variant_pairs(members: list[dict]) -> list[tuple[dict, dict]]:
    """The members the analysis compares as variants (analysis/stats/variant_tests.py): the same
    measurement but for exactly one of schedule or sync; serial members take no part."""
    others = [c for c in members if not is_baseline(c)]
    pairs = []
    for i, a in enumerate(others):
        for b in others[i + 1 :]:
            differ = [d for d in VARIANT_DIMENSIONS if a["params"].get(d) != b["params"].get(d)]
            if len(differ) == 1 and all(a.get(k) == b.get(k) for k in VARIANT_MATCH):
                pairs.append((a, b))
    return pairs


def counted(case: dict) -> bool:
    """In the campaign's precision count (oversubscribed cases are reported, not sampled for it)."""
    return not case["comparison"].get("oversubscribed")


def family_need(
    cache: RecordCache, members: list[dict], target: float, group: list[dict] = ()
) -> tuple[float, list[tuple[dict, int]]] | None:
    """(widest half-width above target, the next trial's work): the paired speedups (baseline / member)
    and variant ratios of the family whose CI is wider than the target and whose cases all have room
    for one more trial; the trial runs those cases (the baseline's runs when a speedup is among them).
    None when the family needs no trial. `group`: the other cases of its trial group (jobs/families.py);
    the new trial takes a number none of them has either, as it runs this family alone."""
    times = {c["case_id"]: cache.get(c) for c in members}
    taken = [q for c in (*members, *group) for q in cache.get(c)[0]]
    t = 1 + max(taken, default=-1)  # one new trial for all

    def room(case: dict) -> bool:
        return all(has_room(case, times[case["case_id"]][1], p) for p in trial_invocations(case, t))

    baseline = next((c for c in members if is_baseline(c)), None)
    comparisons = [
        (baseline, c) for c in members if baseline is not None and c is not baseline and counted(c)
    ]
    comparisons += [(a, b) for a, b in variant_pairs(members) if counted(a) and counted(b)]
    imprecise = [
        (ratio_halfwidth(times[a["case_id"]][0], times[b["case_id"]][0]), a, b)
        for a, b in comparisons
        if room(a) and room(b)
    ]
    imprecise = [(hw, a, b) for hw, a, b in imprecise if hw > target]
    if not imprecise:
        return None
    cases = {c["case_id"]: c for _, a, b in imprecise for c in (a, b)}
    work = [(c, p) for c in cases.values() for p in trial_invocations(c, t)]
    return max(hw for hw, _, _ in imprecise), work


def cross_needs(cache: RecordCache, cases: list[dict], target: float) -> list[tuple[float, list]]:
    """(half-width above target, the next trial's work) of each cross pair (sbcore/cross_pairs.py: two
    cases of a trial group that differ in language or inner loop) whose paired ratio is wider than the
    target and whose two cases have room: a trial of the group that runs just those two, numbered new
    to the group."""
    groups: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("trial_group"):
            groups.setdefault(case["trial_group"], []).append(case)
    new_trial = {
        name: 1 + max((q for c in members for q in cache.get(c)[0]), default=-1)
        for name, members in groups.items()
    }
    needs = []
    for pair in cross_pairs(cases):
        work = [(c, p) for c in (pair.a, pair.b) for p in trial_invocations(c, new_trial[c["trial_group"]])]
        if not (counted(pair.a) and counted(pair.b)):
            continue
        if not all(has_room(c, cache.get(c)[1], p) for c, p in work):
            continue
        halfwidth = ratio_halfwidth(cache.get(pair.a)[0], cache.get(pair.b)[0])
        if halfwidth > target:
            needs.append((halfwidth, work))
    return needs


def next_trial(cache: RecordCache, cases: list[dict], target: float) -> list[tuple[dict, int]] | None:
    """The (case, invocation) pairs of the next trial: of the family whose widest paired speedup or
    variant ratio, or of the cross pair whose ratio, lies furthest above `target`; None when every
    comparison meets it or has no room left."""
    families: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("family"):
            families.setdefault(case["family"], []).append(case)
    groups: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("trial_group"):
            groups.setdefault(case["trial_group"], []).append(case)
    needs = [
        family_need(cache, m, target, groups.get(m[0].get("trial_group"), [])) for m in families.values()
    ]
    needs = [n for n in needs if n] + cross_needs(cache, cases, target)
    if not needs:
        return None
    return max(needs, key=lambda n: n[0])[1]
