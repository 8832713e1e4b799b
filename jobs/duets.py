"""Duets (experiment key `duet = true`): two single-worker alternatives measured at the same time, one
on each of two CPUs, so that whatever slows the host in that instant slows both (Bulej et al., ICPE
2020: duet benchmarking).

A duet pair is two cases that are the same measurement but for the kernel's language, model, inner loop
or environment: the same node type, kernel, problem (the parameters without schedule, sync and inner)
and pinning, one worker each (C against Fortran serial, scalar against SIMD, the serial kernel against
OpenMP on one thread, and an A/A pair: the same binary and options twice, told apart only by an
environment variable the kernel ignores). Planning names each case's pair (`duet` in `cases.jsonl`) and
refuses, with one line, a case with more than one worker, a group of other than two cases, or a node
type with fewer than two CPUs. The runner runs invocation p of both at once (one measurement for the
host's lock, jobs/measure_lock.py), the first of the pair on CPU p mod 2 of the node's first two CPUs in
the `cores` order and the second on the other, so the CPUs swap between duets; each record names its
partner (`duet_partner`) and its CPU (`duet_cpu`), and its trial is p. The analysis pairs the two times
of each duet (analysis/stats/paired.py, `paired_duet_ratio.csv`).

Our vCPUs share execution units with another tenant, and the two halves share the host's caches,
memory and clock: a duet also measures that contention (perf/perf_duet.py says whether it wins).
"""

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor

from jobs.families import grouped
from sbcore.case_shape import case_workers
from sbcore.variant_dimensions import DEFAULT_INNER, problem_params

NOT_THE_MEASUREMENT = ("lang", "model", "binary", "case_id", "index", "argv", "params", "family", "env")


def duet_key(case: dict) -> str:
    """Equal for the two cases of one duet pair."""
    problem = problem_params(case["params"])
    rest = {k: v for k, v in case.items() if k not in NOT_THE_MEASUREMENT}
    rest.pop("threads", None)
    body = json.dumps([case["kernel"], problem, rest], sort_keys=True, default=str)
    return f"duet-{case['kernel']}-{hashlib.sha256(body.encode()).hexdigest()[:8]}"


def describe(case: dict) -> str:
    inner = case["params"].get("inner", DEFAULT_INNER)
    return f"{case['binary']} (threads {case['threads']}, ranks {case['ranks']}, inner {inner})"


def pair_cases(cases: list[dict], cpus_of: dict[str, int], fail) -> None:
    """Names each case's duet pair (`duet`), in place; `fail(key, value, problem)` raises the one line
    for a case with more than one worker, a node type with fewer than 2 CPUs or a group that is not
    two cases."""
    groups: dict[str, list[dict]] = {}
    for case in cases:
        if case_workers(case) != 1:
            fail("duet", True, f"{describe(case)} has more than one worker: a duet runs single-worker cases")
        if cpus_of[case["node_type"]] < 2:
            fail(
                "duet",
                True,
                f"node type {case['node_type']} has {cpus_of[case['node_type']]} CPU: a duet needs 2",
            )
        groups.setdefault(duet_key(case), []).append(case)
    for name, members in groups.items():
        if len(members) != 2:
            listed = "; ".join(describe(c) for c in members)
            fail(
                "duet",
                True,
                f"{len(members)} cases would run as one duet ({listed}): a duet is two alternatives",
            )
        for case in members:
            case["duet"] = name


def run_duet(run_one, a: dict, b: dict, p: int, cpus: list[int]) -> list:
    """Runs invocation p of a and b at once: the pair's first case (in cases.jsonl) on cpus[p % 2],
    the other on the other CPU. `run_one(case, p, cpu, partner)` runs one of them (with the host's
    lock already held); returns their results."""
    a, b = sorted((a, b), key=lambda c: c["index"])
    first = cpus[p % 2]
    second = cpus[1 - p % 2]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run_one, a, p, first, b), pool.submit(run_one, b, p, second, a)]
        return [f.result() for f in futures]


def duet_partners(cases: list[dict]) -> dict[str, dict]:
    """case_id -> the other case of its duet pair, for the cases planned with `duet = true`."""
    return {
        a["case_id"]: b
        for members in grouped(cases, "duet").values()
        if len(members) == 2
        for a, b in (members, members[::-1])
    }
