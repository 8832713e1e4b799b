"""Batches of rows of a large matrix computation, spread over the CPUs: numpy releases the GIL in its
gathers, arithmetic, sorts and partitions, so threads share the work without copying the inputs to
other processes."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def cpus() -> int:
    """The CPUs this process may run on (its affinity, e.g. a Slurm allocation), not the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


MAX_THREADS = 8  # each thread holds buffers of tens of MB; beyond a few threads memory, not CPU, binds


def in_threads(work: Callable[[list[slice]], None], n_rows: int, batch_rows: int) -> None:
    """work(batches) once per thread, each with its share of the row batches (slices of batch_rows
    rows). A thread gets its share at once so that it allocates its buffers once: fresh arrays of
    megabytes per batch cost more (allocation, first touch) than the arithmetic on them.

    Gathers into such buffers use np.take(..., out=, mode="clip") on indices valid by construction:
    with the default mode="raise" numpy gathers through a temporary, several times slower."""
    batches = [slice(first, min(first + batch_rows, n_rows)) for first in range(0, n_rows, batch_rows)]
    n_threads = max(1, min(len(batches), cpus(), MAX_THREADS))
    if n_threads == 1:
        work(batches)
        return
    with ThreadPoolExecutor(n_threads) as pool:
        for done in [pool.submit(work, batches[i::n_threads]) for i in range(n_threads)]:
            done.result()  # the first error is raised here
