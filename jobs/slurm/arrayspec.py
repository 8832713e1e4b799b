"""Slurm `--array` specifications from campaign indices and back.

The array task id is the campaign case index, so a node type's indices (which need not be contiguous)
become the array spec itself: [0, 1, 2, 3, 7, 9, 11, 13, 20] -> "0-3,7-13:2,20".
"""

import re

from jobs.errors import UsageError

_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


def format_array_spec(indices) -> str:
    """Shortest-ish spec: runs of three or more with a constant stride become `a-b` or `a-b:step`."""
    values = sorted(set(indices))
    if not values:
        raise ValueError("an array needs at least one index")
    if values[0] < 0:
        raise ValueError(f"array task ids must be >= 0, got {values[0]}")
    parts = []
    i = 0
    while i < len(values):
        j = i
        if i + 1 < len(values):
            step = values[i + 1] - values[i]
            while j + 1 < len(values) and values[j + 1] - values[j] == step:
                j += 1
        if j - i >= 2:
            parts.append(f"{values[i]}-{values[j]}" + (f":{step}" if step > 1 else ""))
            i = j + 1
        else:
            parts.append(str(values[i]))
            i += 1
    return ",".join(parts)


def parse_array_spec(spec: str) -> list[int]:
    """The task ids of a spec as Slurm reads it (a trailing `%throttle` is ignored)."""
    body = spec.split("%", 1)[0]
    ids: set[int] = set()
    for item in body.split(","):
        match = _ITEM.match(item.strip())
        if not match:
            raise UsageError(f"--array={spec!r}: cannot read {item!r} (expected N, A-B or A-B:STEP)")
        first, last, step = match.groups()
        lo = int(first)
        hi = int(last) if last is not None else lo
        stride = int(step) if step else 1
        if hi < lo or stride < 1:
            raise UsageError(f"--array={spec!r}: empty range {item!r}")
        ids.update(range(lo, hi + 1, stride))
    return sorted(ids)
