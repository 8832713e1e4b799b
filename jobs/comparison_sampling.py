"""A precision target on the comparison itself: more trials for the families whose paired speedups or
variant ratios are not yet precise enough (experiment keys `comparison_target_ci`,
`comparison_budget_s` and `comparison_wait_s`, copied onto each case of a family as `comparison`).

It comes after today's per-case rule (sbcore/sampling.py): the runner first measures every case as its
own `target_ci`/`min_reps`/`max_reps`/`budget_s` ask (in trials); then, while the campaign's comparison
budget lasts, it picks the family whose widest paired comparison is furthest from the target and runs
one more trial of it (a process of each case of the comparisons still too wide that all have room
under `max_reps`, the baseline as often as it runs in a trial, jobs/families.py; in the trial order
of jobs/families.py), and decides again. The trial takes a number new to the family's trial group;
each of its processes takes the lowest invocation number its case has not used (free_invocations).
The comparisons are the analysis' (analysis/stats/paired.py):
each member's speedup against the family's baseline (its serial member) and each variant ratio (two
members that differ in exactly one of schedule or sync, sbcore/variant_pairs.py). A family is done when
every one of them has a 95 % CI half-width within the target, or when no case of one that does not
has room left. The same for each language or inner-loop pair of a trial group
(sbcore/cross_pairs.py, jobs/families.py): a trial of just its two cases. Oversubscribed
cases (more workers than the node type's cores, marked by the plan) are not sampled for it: their
comparisons are reported but outside the campaign's precision count (analysis/stats/comparison_precision.py).

The runner's decision uses the distribution-free CI of the median of the per-trial ratios (the two
times at the same moment of a trial, sbcore/trial_pairing.py; sbcore/sampling.py's median_ci:
microseconds, no resampling); the analysis reports its bootstrap CI over the same trials
(analysis/stats/paired.py). The same trials: a process whose repetitions were all measured in a slow
cache-line transfer that slows its case (sbcore/slow_transfer.py, the analysis' rule) does not count,
a trial without another process of the case is left out, and so is a ratio taken across a change of
the host's phase (sbcore/slow_phase.py, the analysis' rule). Which family runs next when one is in
that state now: jobs/trial_pacer.py (the state itself: jobs/transfer_state.py).
"""

from __future__ import annotations

from pathlib import Path
from statistics import median
from typing import NamedTuple

from jobs.families import grouped, is_baseline, trial_runs
from jobs.status import ok_records
from sbcore import sampling
from sbcore.cross_pairs import cross_pairs
from sbcore.slow_phase import across_phase_flags
from sbcore.slow_transfer import slow_transfer_flags, transfer_rep
from sbcore.trial_pairing import Run, times_together
from sbcore.variant_pairs import variant_pairs


def comparison_target(cases: list[dict]) -> dict | None:
    """The campaign's comparison target ({"target_ci", "budget_s"}), None without one."""
    return next((c["comparison"] for c in cases if c.get("comparison")), None)


class CaseTimes(NamedTuple):
    """What the comparison target reads of one case's records."""

    usable: dict[int, list[Run]]  # trial -> its processes there that count (no slow transfer)
    trials: set[int]  # every trial it ran in
    measured: set[int]  # its measured invocations
    records: dict[int, dict]  # repetition -> record


def process_times(records: dict[int, dict]) -> tuple[dict[int, list[Run]], set[int]]:
    """(trial -> the case's processes in it that count: (place in the trial, the median wall time of
    its repetitions not measured in a slow cache-line transfer, sbcore/slow_transfer.py), every trial
    it ran in). A process with no other repetition does not count, as in the analysis' paired
    comparisons. Records without a trial (older campaigns) count their invocation as their trial."""
    slow = slow_transfer_flags([transfer_rep(r) for r in records.values()])
    walls: dict[int, list[float]] = {}
    places: dict[int, tuple[int, float]] = {}
    for (k, record), flagged in zip(records.items(), slow, strict=True):
        if isinstance(record.get("wall_s"), int | float):
            p = record.get("invocation", k)
            places[p] = (record.get("trial", p), record.get("trial_slot", 0))
            if not flagged:
                walls.setdefault(p, []).append(record["wall_s"])
    times: dict[int, list[Run]] = {}
    for p, ws in walls.items():
        trial, slot = places[p]
        times.setdefault(trial, []).append(Run(slot, median(ws)))
    return times, {trial for trial, _ in places.values()}


def paired_ratios(num: dict[int, list[Run]], den: dict[int, list[Run]]) -> list[float]:
    """The ratios num/den of the trials both count (times at the same moment of each,
    sbcore/trial_pairing.py), but those taken across a change of the host's phase
    (sbcore/slow_phase.py): as many as the analysis' paired comparison counts `trials`."""
    ratios = []
    for t in num.keys() & den.keys():
        a, b = times_together(num[t], den[t])
        if a > 0 and b > 0:
            ratios.append(a / b)
    return [r for r, across in zip(ratios, across_phase_flags(ratios), strict=True) if not across]


def ratio_halfwidth(num: dict[int, list[Run]], den: dict[int, list[Run]]) -> float:
    """The relative CI half-width of the paired ratio num/den (paired_ratios); infinite while they
    have too few trials for an interval."""
    halfwidth = sampling.relative_halfwidth(paired_ratios(num, den))
    return float("inf") if halfwidth is None else halfwidth


def free_invocations(case: dict, measured: set[int], runs: int | None = None) -> list[int] | None:
    """The invocations a trial of the comparison target gives the case: the lowest of those its planned
    processes (`max_reps`) hold that it has not measured, `runs` of them (default: as many as it runs
    in a trial, several for a baseline that runs more than once); None when it has fewer left. They
    are the case's own numbers, not its trial's: the trial takes a number new to its whole group
    (new_trial), and a group of many families uses more trial numbers than any one case has
    processes."""
    runs = trial_runs(case) if runs is None else runs
    free = [p for p in range(sampling.blocks(sampling.case_rule(case))) if p not in measured][:runs]
    return free if len(free) == runs else None


class RecordCache:
    """Each case's process times, read once and then only again for a case that ran since."""

    def __init__(self, campaign_dir: Path):
        self.campaign_dir = Path(campaign_dir)
        self.times: dict[str, CaseTimes] = {}

    def get(self, case: dict) -> CaseTimes:
        if case["case_id"] not in self.times:
            records = ok_records(self.campaign_dir, case)
            invocations = {r.get("invocation", k) for k, r in records.items()}
            self.times[case["case_id"]] = CaseTimes(*process_times(records), invocations, records)
        return self.times[case["case_id"]]

    def forget(self, case: dict) -> None:
        """The case ran: read its records again when next asked."""
        self.times.pop(case["case_id"], None)


def counted(case: dict) -> bool:
    """In the campaign's precision count (oversubscribed cases are reported, not sampled for it)."""
    return not case["comparison"].get("oversubscribed")


class Need(NamedTuple):
    """A comparison's next trial: its widest half-width above the target, what it is (for the
    campaign log: "family <name>" or "<lang|inner> pair <case> / <case>"), the trial's work (case,
    invocation) and its trial number."""

    halfwidth: float
    name: str
    work: list[tuple[dict, int]]
    trial: int


def new_trial(cache: RecordCache, cases: list[dict]) -> int:
    """A trial number none of the cases has run in (a trial group's: no other family's process pairs
    with a trial the comparison target runs for one family or pair)."""
    return 1 + max((q for c in cases for q in cache.get(c).trials), default=-1)


def family_need(
    cache: RecordCache, members: list[dict], target: float, group: list[dict] = ()
) -> Need | None:
    """The paired speedups (baseline / member) and variant ratios of the family whose CI is wider than
    the target and whose cases all have room for one more trial: the widest, and a trial that runs
    those cases (the baseline's runs when a speedup is among them), numbered new to its trial group
    (`group`: the group's cases). None when the family needs no trial."""
    times = {c["case_id"]: cache.get(c) for c in members}
    free = {c["case_id"]: free_invocations(c, times[c["case_id"]].measured) for c in members}

    def room(case: dict) -> bool:
        return free[case["case_id"]] is not None

    baseline = next((c for c in members if is_baseline(c)), None)
    comparisons = [
        (baseline, c) for c in members if baseline is not None and c is not baseline and counted(c)
    ]
    # a variant ratio is b's time over a's, as the analysis reads it (sbcore/variant_pairs.py)
    comparisons += [(b, a) for a, b in variant_pairs(members) if counted(a) and counted(b)]
    imprecise = [
        (ratio_halfwidth(times[a["case_id"]].usable, times[b["case_id"]].usable), a, b)
        for a, b in comparisons
        if room(a) and room(b)
    ]
    imprecise = [(hw, a, b) for hw, a, b in imprecise if hw > target]
    if not imprecise:
        return None
    cases = {c["case_id"]: c for _, a, b in imprecise for c in (a, b)}
    work = [(c, p) for c in cases.values() for p in free[c["case_id"]]]
    t = new_trial(cache, [*members, *group])
    return Need(max(hw for hw, _, _ in imprecise), f"family {members[0]['family']}", work, t)


def cross_needs(cache: RecordCache, cases: list[dict], target: float) -> list[Need]:
    """Each language or inner-loop pair of a trial group (sbcore/cross_pairs.py) whose paired ratio is
    wider than the target and whose two cases have room: a trial of just those two, numbered new to
    the group, one process of each (a family's baseline, which runs several times in a trial of its
    family, runs once: two processes side by side pair as well as seven)."""
    groups = grouped(cases, "trial_group")
    trial = {name: new_trial(cache, members) for name, members in groups.items()}
    needs = []
    for pair in cross_pairs(cases):
        if not (counted(pair.a) and counted(pair.b)):
            continue
        free = [free_invocations(c, cache.get(c).measured, runs=1) for c in (pair.a, pair.b)]
        if None in free:
            continue
        work = [(pair.a, free[0][0]), (pair.b, free[1][0])]
        halfwidth = ratio_halfwidth(cache.get(pair.a).usable, cache.get(pair.b).usable)
        if halfwidth > target:
            name = f"{pair.dimension} pair {pair.a['case_id']} / {pair.b['case_id']}"
            needs.append(Need(halfwidth, name, work, trial[pair.a["trial_group"]]))
    return needs


def family_needs(cache: RecordCache, cases: list[dict], target: float) -> list[Need]:
    """The families and language or inner-loop pairs that need a trial, the one whose widest paired
    comparison lies furthest above `target` first; empty when every one meets it or has no room left."""
    groups = grouped(cases, "trial_group")
    needs = [
        family_need(cache, m, target, groups.get(m[0].get("trial_group"), []))
        for m in grouped(cases, "family").values()
    ]
    needs = [n for n in needs if n] + cross_needs(cache, cases, target)
    return sorted(needs, key=lambda n: -n.halfwidth)
