"""SMT figures from smt-c-pthreads records: the SMT gain of a pair of workers against one alone,
and SMT siblings found by timing alone (a pair on one core slows each other down; on two cores not)."""

import itertools

SIBLING_SLOWDOWN = 1.3  # a pair slower than this x alone shares a core (SMT-2 cores give ~1.5-2)


def smt_gain(t_alone: float, t_pair: float) -> float:
    """2 * t(alone) / t(pair) - 1: the throughput two sibling workers add over one worker alone."""
    return 2.0 * t_alone / t_pair - 1.0


def siblings_by_timing(
    alone: dict[int, float], pairs: dict[tuple[int, int], float], threshold: float = SIBLING_SLOWDOWN
) -> list[tuple[int, int]]:
    """The CPU pairs whose joint time exceeds `threshold` x the slower CPU's time alone."""
    found = []
    for (a, b), t in sorted(pairs.items()):
        if t > threshold * max(alone[a], alone[b]):
            found.append((min(a, b), max(a, b)))
    return found


def compare_with_topology(found: list[tuple[int, int]], siblings: list[list[int]]) -> dict:
    """Timing's pairs against likwid's sibling groups: which agree, which timing missed or invented."""
    truth = {tuple(sorted(p)) for group in siblings for p in itertools.combinations(group, 2)}
    got = set(found)
    return {"agree": sorted(got & truth), "missed": sorted(truth - got), "invented": sorted(got - truth)}
