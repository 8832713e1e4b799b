"""Comparison families: the cases a runner measures in trials, one kernel process of each member back
to back in a fresh random order, so that the analysis can pair measurements taken seconds apart.

A family is a baseline and every case compared with it: the same node type, kernel, language, inner
loop and problem (the parameters without schedule and sync), across models, schedules, syncs and
worker counts (the key of the analysis' `serial` baseline, analysis/stats/speedup.py). With
`interleave = "family"` in an experiment, jobs/plan.py gives every case its family's name; trial t of
a family is invocation t of each member that still needs it (jobs/runner.py), so a record's
`invocation` is its trial and `cases.jsonl` names its family.
"""

import hashlib
import json

INTERLEAVE = ("none", "family")  # the experiment key `interleave`: its allowed values, the default first
NOT_THE_PROBLEM = ("schedule", "sync")  # parameters that vary within a family
DEFAULT_INNER = "scalar"  # the kernels' --inner when a case does not give it


def family_of(case: dict) -> str:
    """<kernel>-<lang>-<hash of node type, inner loop and problem>: equal for exactly one family."""
    problem = {k: v for k, v in case["params"].items() if k not in NOT_THE_PROBLEM}
    problem["inner"] = problem.get("inner", DEFAULT_INNER)
    key = json.dumps([case["node_type"], case["kernel"], case["lang"], problem], sort_keys=True)
    return f"{case['kernel']}-{case['lang']}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def trials(work: list[tuple[dict, int]], rng) -> list[tuple[dict, int]]:
    """(case, invocation) pairs ordered as trials: the members of one family with the same invocation
    back to back in a random order, the trials of all families shuffled; a case without a family is a
    trial of its own."""
    groups: dict[tuple, list] = {}
    for case, p in work:
        groups.setdefault((case.get("family") or case["case_id"], p), []).append((case, p))
    order = list(groups.values())
    rng.shuffle(order)
    for members in order:
        rng.shuffle(members)
    return [item for members in order for item in members]
