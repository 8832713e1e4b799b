"""The slow cache-line transfer rule: which repetitions of a case were measured while the round trip of
a cache line between its CPUs was slow, in a state that slowed the case itself. One declaration for
the analysis (analysis/stats/disturbance.py flags such repetitions `slow_transfer`, and
analysis/stats/paired.py leaves trials with such a member out) and for the runner's comparison target
(jobs/comparison_sampling.py counts the same trials, jobs/trial_pacer.py defers or waits out a
family in that state).

A repetition's probe (docs/formats.md) holds the round trip between the case's first CPU and each
other one, before and after it: the fastest and the slowest of them (`min_s.xfer`, `max_s.xfer`). Its
case's normal round trip is a low quantile (NORMAL_QUANTILE) of the fastest ones of its repetitions on
that host: the case's CPUs are the same in every repetition, while another case's pair may lie further
apart. A repetition's slowest round trip over TRANSFER_SLOW_RATIO x that normal is in the slow state
(on our Zen 5 guests a pair of vCPUs is near, 50-75 ns, or apart, 340-410 ns; the near state's own
spread reaches 1.5x). It counts as slow transfer only when its case ran slower in that state: the
median time of its repetitions in it exceeds that of its other ones by more than TRANSFER_MATTERS (a
static schedule without shared writes does not, and keeps them).
"""

from __future__ import annotations

import math
from statistics import median
from typing import NamedTuple

TRANSFER_SLOW_RATIO = 2.0  # cache-line round trip / the case's normal round trip
TRANSFER_MATTERS = 0.02  # a case slowed less than this in a slow transfer is not disturbed by it
NORMAL_QUANTILE = 0.1  # a case's (and, for the other probe chains, a node's) normal: this low quantile


class TransferRep(NamedTuple):
    """What the rule reads of one repetition."""

    host: str
    wall_s: float | None
    fastest: float | None  # the probe's fastest round trip (s), None without one
    slowest: float | None  # its slowest


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of values (at least one), interpolated linearly between order statistics: the
    rule of numpy's and pandas' default quantile, which the analysis' vectorised code uses."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def normal_round_trip(fastest: list[float | None]) -> float | None:
    """A case's normal round trip on one host from its repetitions' fastest ones; None without any."""
    times = [t for t in fastest if _number(t)]
    return quantile(times, NORMAL_QUANTILE) if times else None


def is_slow_transfer(slowdown):
    """A round trip / its case's normal above TRANSFER_SLOW_RATIO: the slow state. Elementwise on a
    pandas Series (NaN: False) as on one number."""
    return slowdown > TRANSFER_SLOW_RATIO


def in_slow_state(slowest: float | None, normal: float | None) -> bool:
    """One repetition's slowest round trip against its case's normal (False when either is missing)."""
    if not (_number(slowest) and _number(normal)) or normal <= 0:
        return False
    return bool(is_slow_transfer(slowest / normal))


def slowed_in_state(inside_median: float | None, outside_median: float | None) -> bool:
    """The case ran slower in the state: its median time in it more than TRANSFER_MATTERS above its
    median outside it (True when it has no repetition outside it to tell)."""
    if not (_number(inside_median) and _number(outside_median)):
        return True
    return not inside_median <= outside_median * (1 + TRANSFER_MATTERS)


def normals(reps: list[TransferRep]) -> dict[str, float | None]:
    """Host -> the case's normal round trip there."""
    hosts = dict.fromkeys(r.host for r in reps)
    return {h: normal_round_trip([r.fastest for r in reps if r.host == h]) for h in hosts}


def slow_transfer_flags(reps: list[TransferRep]) -> list[bool]:
    """Per repetition of one case (all of its repetitions, on every host): measured in a slow transfer
    that slowed the case."""
    normal = normals(reps)
    state = [in_slow_state(r.slowest, normal[r.host]) for r in reps]
    return state if any(state) and case_slowed(reps, state) else [False] * len(reps)


def case_slowed(reps: list[TransferRep], state: list[bool]) -> bool:
    """slowed_in_state for one case's repetitions, `state` saying which were in the slow state."""
    inside = [r.wall_s for r, s in zip(reps, state, strict=True) if s and _number(r.wall_s)]
    outside = [r.wall_s for r, s in zip(reps, state, strict=True) if not s and _number(r.wall_s)]
    return slowed_in_state(median(inside) if inside else None, median(outside) if outside else None)


def round_trips(probe) -> tuple[float | None, float | None]:
    """(fastest, slowest) round trip of a record's probe: the kernel's own `min_s`/`max_s`, else from
    the per-CPU times of its sides (records of older kernels); None where none was timed."""
    if not isinstance(probe, dict):
        return None, None
    times = [
        t
        for side in (probe.get("before"), probe.get("after"))
        if isinstance(side, dict) and isinstance(side.get("xfer_s"), list)
        for t in side["xfer_s"]
        if _number(t)
    ]
    own = []
    for name, pick in (("min_s", min), ("max_s", max)):
        value = probe.get(name).get("xfer") if isinstance(probe.get(name), dict) else None
        own.append(value if _number(value) else (pick(times) if times else None))
    return own[0], own[1]


def transfer_rep(record: dict) -> TransferRep:
    """What the rule reads of one record (docs/formats.md)."""
    wall = record.get("wall_s")
    fastest, slowest = round_trips(record.get("probe"))
    # the analysis' host of a record: its hostname, else its host, else "unknown"
    host = next((h for h in (record.get("hostname"), record.get("host")) if isinstance(h, str)), "unknown")
    return TransferRep(host, wall if _number(wall) else None, fastest, slowest)


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
