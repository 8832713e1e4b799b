"""Two cases' times at the same moment of one trial: the rule the runner's comparison target
(jobs/comparison_sampling.py) and the analysis' paired ratios (analysis/stats/paired.py) share.

A trial runs one process of each member of a comparison family back to back; in a large family the
baseline runs several times in it (before the members and after every `baseline_every` of them,
jobs/families.py), so each member has a baseline run a few processes before and after it. A case's
time at a member's place in the trial is that of its run nearest in the trial (the mean of two equally
near ones): the host's slow phases begin and end in steps (they last seconds to minutes), and a
member is spoiled only by a step between it and that nearest run, not by any step between the two
runs around it (which a mean of the two would take in).
"""

from typing import NamedTuple


class Run(NamedTuple):
    slot: float  # the process's place in its trial (0, 1, ...)
    time: float  # its time (seconds)


def time_at(runs: list[Run], slot: float) -> float:
    """The time of a case at `slot` of the trial from its runs there (at least one): its run nearest
    to the slot (the mean of the two when one before and one after are equally near)."""
    distance = min(abs(r.slot - slot) for r in runs)
    nearest = [r.time for r in runs if abs(r.slot - slot) == distance]
    return sum(nearest) / len(nearest)


def times_together(a: list[Run], b: list[Run]) -> tuple[float, float]:
    """(a's time, b's time) at one moment of a trial both ran in: the case with fewer runs there is
    taken at its (mean) place, the other one's time there from its runs around it."""
    fewer, more, swapped = (a, b, False) if len(a) <= len(b) else (b, a, True)
    slot = sum(r.slot for r in fewer) / len(fewer)
    own = sum(r.time for r in fewer) / len(fewer)
    other = time_at(more, slot)
    return (other, own) if swapped else (own, other)
