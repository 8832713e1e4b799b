"""Counting inside many small texts at once: the texts are joined with a separator once, and one numpy
pass over the joined bytes counts what each part holds (the per-hwthread counter values and the probe's
per-CPU times of a whole chunk of records are read this way, never part by part in Python)."""

from __future__ import annotations

import numpy as np


def count_per_part(joined: bytes, parts: list[bytes], byte: bytes) -> np.ndarray:
    """How many times `byte` occurs in each part of `joined` = b",".join(parts) (a comma as `byte` does
    not count the commas that join the parts)."""
    if not parts:
        return np.zeros(0, np.int64)
    ends = np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)) + 1) - 1
    hits = np.flatnonzero(np.frombuffer(joined, dtype=np.uint8) == ord(byte))
    counts = np.diff(np.searchsorted(hits, ends), prepend=0)
    if byte == b",":
        counts[1:] -= 1  # the comma joining a part to the one before it
    return counts
