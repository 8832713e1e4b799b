"""Slurm `--array` specifications from campaign indices and back, and the split into several arrays.

Case index = array task id + the array's offset. A node type's indices (which need not be contiguous)
minus the offset become the array spec itself: [0, 1, 2, 3, 7, 9, 11, 13, 20] -> "0-3,7-13:2,20".
Slurm refuses task ids >= MaxArraySize, so larger campaigns get one array per window of indices, each
with its own offset (offset 0 while everything fits: task id = case index).
"""

import re

from sbcore.errors import UsageError

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


def split_indices(indices, max_array_size: int, max_tasks: int | None = None) -> list[tuple[int, list[int]]]:
    """(offset, indices) per array: every index - offset < max_array_size, at most max_tasks per array.

    The first array keeps offset 0 when its indices fit as they are, so small campaigns (and resumes of
    them) keep task id = case index; later arrays start at their first index.
    """
    values = sorted(set(indices))
    limit = max_tasks or max_array_size
    if max_array_size < 1 or limit < 1:
        raise ValueError(f"max_array_size {max_array_size} and max_tasks {max_tasks} must be >= 1")
    arrays: list[tuple[int, list[int]]] = []
    for index in values:
        if arrays:
            offset, chunk = arrays[-1]
            if index - offset < max_array_size and len(chunk) < limit:
                chunk.append(index)
                continue
        offset = 0 if not arrays and index < max_array_size else index
        arrays.append((offset, [index]))
    return arrays
