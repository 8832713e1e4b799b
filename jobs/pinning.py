"""Pinning strategies -> CPU lists for likwid-pin, and the check of a record's placement against them.

Worker i is planned on cpus[i mod len(cpus)]: threads beyond the hardware-thread count wrap round-robin.
That is also what likwid-pin does with the list: the main thread (worker 0 in every kernel model) goes
on list[0] and the j-th created thread of the process on list[j mod n]. Both threaded models create
their threads-1 helpers once per process, in worker order (libgomp's team, the pthreads kernels' pool),
so the j-th created thread is worker j in every repetition and no skip mask (-s) is needed.
"""

from jobs.topology import Topology

STRATEGIES = ("none", "compact", "cores", "scatter", "smt-siblings")


def strategy_order(strategy: str, topo: Topology) -> list[int]:
    """Every available hardware thread, in the order the strategy hands them out."""
    hw = topo.hwthreads
    # Position of each core within its socket, so scatter can alternate sockets core by core.
    core_rank = {}
    for socket in sorted({h.socket for h in hw}):
        cores = sorted({h.core for h in hw if h.socket == socket})
        core_rank.update({(socket, c): r for r, c in enumerate(cores)})
    if strategy == "compact":
        key = lambda h: (h.socket, core_rank[h.socket, h.core], h.thread)  # noqa: E731
    elif strategy == "cores":
        key = lambda h: (h.thread, h.socket, core_rank[h.socket, h.core])  # noqa: E731
    elif strategy == "scatter":
        key = lambda h: (h.thread, core_rank[h.socket, h.core], h.socket)  # noqa: E731
    elif strategy == "smt-siblings":
        # Pairs of siblings core by core (threads 0+1 of every core), then the next pair (SMT4).
        key = lambda h: (h.thread // 2, h.socket, core_rank[h.socket, h.core], h.thread)  # noqa: E731
    else:
        raise ValueError(f"unknown pin strategy {strategy!r}")
    return [h.hwthread for h in sorted(hw, key=key)]


def pin_cpus(strategy: str, threads: int, topo: Topology) -> list[int]:
    """The planned CPU list: the first `threads` CPUs of the strategy's order (all of them if more)."""
    order = strategy_order(strategy, topo)
    return order[: min(threads, len(order))]


def planned_cpu(cpus: list[int], worker: int) -> int:
    return cpus[worker % len(cpus)]


def placement_violations(cpus: list[int], placement: list) -> list[dict]:
    """Workers whose sampled CPUs (start, end) differ from the planned one."""
    violations = []
    for worker, seen in enumerate(placement):
        planned = planned_cpu(cpus, worker)
        if any(c != planned for c in seen):
            violations.append({"worker": worker, "planned": planned, "seen": list(seen)})
    return violations


def confinement_violations(cpus: list[int], placement: list) -> list[dict]:
    """Workers seen outside the CPU set a confined (not pinned) process may use."""
    allowed = set(cpus)
    return [
        {"worker": worker, "planned": list(cpus), "seen": list(seen)}
        for worker, seen in enumerate(placement)
        if any(c not in allowed for c in seen)
    ]


def format_cpulist(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)
