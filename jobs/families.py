"""Comparison families: the cases a runner measures in trials, one kernel process of each member back
to back in a fresh random order, so that the analysis can pair measurements taken seconds apart.

A family is a baseline and every case compared with it: the same node type, kernel, language, inner
loop and problem (the parameters without schedule and sync), across models, schedules, syncs and
worker counts (the key of the analysis' `serial` baseline, analysis/stats/speedup.py). With
`interleave = "family"` in an experiment, jobs/plan.py gives every case its family's name; trial t of
a family is invocation t of each member that still needs it (jobs/runner.py), and `cases.jsonl` names
its family.

In a large family a member can run many seconds after the baseline of its trial, in another phase of
the host. So the baseline runs several times in a trial (`baseline_every = k`): before the members and
after every k of them, the members shuffled between (its `trial_runs` processes per trial, its
invocations t*trial_runs ...), and a member is paired with the baseline run nearest to it in the
trial (sbcore/trial_pairing.py). Each record says its `trial` and its place in it (`trial_slot`).

Families that differ only in language and/or inner loop (the same node type, kernel and problem: C and
Fortran, scalar and SIMD) form one trial group (`trial_group` in `cases.jsonl`), so that the analysis
can pair across them too (analysis/stats/paired_cross.py). Trial t of a group is trial t of each of its
families, run as one: every member of the group that runs in it shuffled together, and each family's
baseline placed among its own members as above (before the first of them and after every
`baseline_every` of them, counting that family's members only). `trial_slot` is the place in the
group's trial. Each family keeps its name, its baseline, its `trial_runs` and so its speedups; a group
of one family runs exactly as a family did before. A trial the comparison target adds
(jobs/comparison_sampling.py) runs one family, or one process of each of the two cases of one
language or inner-loop pair, under a trial number no case of the group has used: no other family's
process shares it.
"""

import hashlib
import json

from sbcore.cross_pairs import cross_values, numbering_group
from sbcore.variant_dimensions import problem_params
from sbcore.variant_pairs import BASELINE_MODEL

INTERLEAVE = ("none", "family")  # the experiment key `interleave`: its allowed values, the default first
DEFAULT_BASELINE_EVERY = 8  # the experiment key `baseline_every`: a baseline run after every 8 members
# The experiment key `comparison_wait_s`: seconds one run's comparison target may wait for a slow
# cache-line transfer to pass (jobs/trial_pacer.py). An "apart" phase of our guests lasts about 50 s
# (docs/campaigns.md): one can be waited out, and a lasting one costs a run at most a minute.
DEFAULT_COMPARISON_WAIT_S = 60.0


def problem_of(case: dict) -> dict:
    """The case's parameters without the variant dimensions and its inner loop: what it computes
    (sbcore/variant_dimensions.py)."""
    return problem_params(case["params"])


def name_hash(key: list) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:8]


def family_of(case: dict) -> str:
    """<kernel>-<lang>-<hash of node type, inner loop and problem>: equal for exactly one family."""
    problem = problem_of(case) | {"inner": cross_values(case)["inner"]}
    key = [case["node_type"], case["kernel"], case["lang"], problem]
    return f"{case['kernel']}-{case['lang']}-{name_hash(key)}"


def trial_group_of(case: dict) -> str:
    """<kernel>-<hash of node type and problem>: equal for the families that differ only in language
    and inner loop (sbcore/variant_dimensions.py's CROSS_DIMENSIONS), which run in the same trials."""
    return f"{case['kernel']}-{name_hash([case['node_type'], case['kernel'], problem_of(case)])}"


def is_baseline(case: dict) -> bool:
    """The member the others are compared with: the serial kernel (the analysis' speedup baseline)."""
    return case.get("model") == BASELINE_MODEL


def baseline_runs(members: int, every: int) -> int:
    """Baseline processes per trial for a family of `members` others: one before them and one after
    every `every` of them (every = 0: once, at a random place, as in plain randomised trials)."""
    return 1 if every == 0 or members == 0 else 1 + -(-members // every)


def grouped(cases: list[dict], key: str) -> dict[str, list[dict]]:
    """The cases by their value of `key` ("family", "trial_group", "duet"), in their order; cases
    without one take no part."""
    groups: dict[str, list[dict]] = {}
    for case in cases:
        if case.get(key):
            groups.setdefault(case[key], []).append(case)
    return groups


def repeat_baselines(cases: list[dict], every: int) -> None:
    """Gives each family's baseline its runs per trial (`trial_runs`, when more than one) and scales its
    planned processes, minimum, maximum and budget by them; in place, before the cases get their ids."""
    for members in grouped(cases, "family").values():
        baseline = next((c for c in members if is_baseline(c)), None)
        runs = baseline_runs(len(members) - 1, every) if baseline else 1
        if runs == 1:
            continue
        baseline["trial_runs"] = runs
        baseline["reps"] *= runs
        if baseline.get("sampling"):
            sampling = baseline["sampling"]
            sampling["min_reps"] *= runs
            sampling["max_reps"] *= runs
            if sampling.get("budget_s") is not None:
                sampling["budget_s"] *= runs


def trial_runs(case: dict) -> int:
    return case.get("trial_runs", 1)


def trial_of(case: dict, p: int) -> int:
    """The trial invocation p of a family member belongs to."""
    return p // trial_runs(case)


def partners_key(case: dict) -> tuple:
    """What a case shares with the members it is compared with other than through the baseline: its
    variant partners (other schedules or syncs) and its language or inner-loop partners (the other
    families of its trial group) have the same model, workers, placement and counters."""
    return (
        case.get("model"),
        case.get("threads"),
        case.get("ranks"),
        case.get("pin"),
        case.get("counter_group"),
    )


def partners_together(runs: list[tuple[dict, int]], rng) -> list[tuple[dict, int]]:
    """The members in a random order that keeps partners (partners_key) next to each other: the
    groups of partners shuffled, and each group's members shuffled within it. The host's slow phases
    can begin or end between any two processes, so two cases compared with each other run as close
    in time as a trial allows: side by side."""
    groups: dict[tuple, list[tuple[dict, int]]] = {}
    for run in runs:
        groups.setdefault(partners_key(run[0]), []).append(run)
    order = list(groups.values())
    rng.shuffle(order)
    out = []
    for group in order:
        rng.shuffle(group)
        out += group
    return out


def trial_order(runs: list[tuple[dict, int]], rng) -> list[tuple[dict, int]]:
    """One trial's processes in the order they run: the members of every family in it shuffled
    together, partners side by side (partners_together); a baseline that runs several times placed
    among its own family's members, before them and between every few (as evenly as that family's
    members left in the trial allow)."""
    others = partners_together([r for r in runs if trial_runs(r[0]) == 1], rng)
    repeated: dict[str, list[tuple[dict, int]]] = {}
    for run in sorted((r for r in runs if trial_runs(r[0]) > 1), key=lambda r: r[1]):
        repeated.setdefault(run[0]["case_id"], []).append(run)
    # Each process's place: the members at 0, 1, ...; a baseline run half a place before the member
    # it precedes (or after the last one); equal places keep the baseline's runs in invocation order.
    placed = [(float(i), run) for i, run in enumerate(others)]
    for baseline_runs_here in repeated.values():
        family = baseline_runs_here[0][0].get("family")
        mine = [i for i, (case, _) in enumerate(others) if case.get("family") == family]
        places = baseline_places(mine, len(baseline_runs_here), len(others))
        placed += zip(places, baseline_runs_here, strict=True)
    return [run for _, run in sorted(placed, key=lambda placed_run: placed_run[0])]


def baseline_places(mine: list[int], runs: int, end: int) -> list[float]:
    """The places of a baseline's `runs` runs among the shuffled processes of a trial, its family's
    members at places `mine`: one run in the middle of them; several before them, after the last and
    evenly between; all at the end when its family has no member in the trial."""
    n = len(mine)
    if n == 0:
        return [end + 0.5] * runs
    if runs == 1:
        return [mine[n // 2] - 0.5]
    gaps = runs - 1
    return [mine[g * n // gaps] - 0.5 for g in range(gaps)] + [mine[-1] + 0.5]


def trials(work: list[tuple[dict, int]], rng, rounds: bool = False) -> list[tuple[dict, int, dict]]:
    """(case, invocation, place) triples ordered as trials: the processes of one trial group's trial
    back to back (trial_order), the trials of all groups shuffled; a case without a family is a trial
    of its own. `place` is what the record says of it: {"trial", "trial_slot"}, empty without a
    family. Cases planned before trial groups (no `trial_group`) group by family. With `rounds` (a
    run with a deadline, jobs/run_deadline.py) trial t of every group comes before trial t+1 of any,
    shuffled within each round."""
    groups: dict[tuple, list] = {}
    for case, p in work:
        key = (numbering_group(case), trial_of(case, p)) if case.get("family") else (case["case_id"], p)
        groups.setdefault(key, []).append((case, p))
    order = list(groups.items())
    rng.shuffle(order)
    if rounds:
        order.sort(key=lambda item: item[0][1])  # stable: the shuffle stays within a round
    out = []
    for (_, t), runs in order:
        if not runs[0][0].get("family"):
            out += [(case, p, {}) for case, p in runs]
            continue
        out += numbered_trial(runs, t, rng)
    return out


def numbered_trial(runs: list[tuple[dict, int]], t: int, rng) -> list[tuple[dict, int, dict]]:
    """One trial's processes (case, invocation) in trial_order, each with its place {"trial": t,
    "trial_slot"}: what its record says of it (the analysis pairs by it)."""
    return [(case, p, {"trial": t, "trial_slot": s}) for s, (case, p) in enumerate(trial_order(runs, rng))]
