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
"""

import hashlib
import json

from sbcore.variant_dimensions import VARIANT_DIMENSIONS

INTERLEAVE = ("none", "family")  # the experiment key `interleave`: its allowed values, the default first
DEFAULT_INNER = "scalar"  # the kernels' --inner when a case does not give it
DEFAULT_BASELINE_EVERY = 8  # the experiment key `baseline_every`: a baseline run after every 8 members
# The experiment key `comparison_wait_s`: seconds one run's comparison target may wait for a slow
# cache-line transfer to pass (jobs/transfer_state.py). An "apart" phase of our guests lasts about 50 s
# (docs/campaigns.md): one can be waited out, and a lasting one costs a run at most a minute.
DEFAULT_COMPARISON_WAIT_S = 60.0


def family_of(case: dict) -> str:
    """<kernel>-<lang>-<hash of node type, inner loop and problem>: equal for exactly one family."""
    problem = {k: v for k, v in case["params"].items() if k not in VARIANT_DIMENSIONS}
    problem["inner"] = problem.get("inner", DEFAULT_INNER)
    key = json.dumps([case["node_type"], case["kernel"], case["lang"], problem], sort_keys=True)
    return f"{case['kernel']}-{case['lang']}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def is_baseline(case: dict) -> bool:
    """The member the others are compared with: the serial kernel (the analysis' speedup baseline)."""
    return case.get("model") == "serial"


def baseline_runs(members: int, every: int) -> int:
    """Baseline processes per trial for a family of `members` others: one before them and one after
    every `every` of them (every = 0: once, at a random place, as in plain randomised trials)."""
    return 1 if every == 0 or members == 0 else 1 + -(-members // every)


def repeat_baselines(cases: list[dict], every: int) -> None:
    """Gives each family's baseline its runs per trial (`trial_runs`, when more than one) and scales its
    planned processes, minimum, maximum and budget by them; in place, before the cases get their ids."""
    families: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("family"):
            families.setdefault(case["family"], []).append(case)
    for members in families.values():
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


def trial_order(runs: list[tuple[dict, int]], rng) -> list[tuple[dict, int]]:
    """One trial's processes in the order they run: the members shuffled; a baseline that runs several
    times before them and between every few (as evenly as the members left in the trial allow)."""
    repeated = sorted((r for r in runs if trial_runs(r[0]) > 1), key=lambda r: r[1])
    others = [r for r in runs if trial_runs(r[0]) == 1]
    rng.shuffle(others)
    if not repeated:
        return others
    if len(repeated) == 1:
        middle = len(others) // 2
        return [*others[:middle], repeated[0], *others[middle:]]
    gaps = len(repeated) - 1
    order = [repeated[0]]
    for g in range(gaps):
        order += [*others[g * len(others) // gaps : (g + 1) * len(others) // gaps], repeated[g + 1]]
    return order


def trials(work: list[tuple[dict, int]], rng) -> list[tuple[dict, int, dict]]:
    """(case, invocation, place) triples ordered as trials: the processes of one family's trial back to
    back (trial_order), the trials of all families shuffled; a case without a family is a trial of its
    own. `place` is what the record says of it: {"trial", "trial_slot"}, empty without a family."""
    groups: dict[tuple, list] = {}
    for case, p in work:
        key = (case["family"], trial_of(case, p)) if case.get("family") else (case["case_id"], p)
        groups.setdefault(key, []).append((case, p))
    order = list(groups.items())
    rng.shuffle(order)
    out = []
    for (_, t), runs in order:
        if not runs[0][0].get("family"):
            out += [(case, p, {}) for case, p in runs]
            continue
        out += [
            (case, p, {"trial": t, "trial_slot": s}) for s, (case, p) in enumerate(trial_order(runs, rng))
        ]
    return out
