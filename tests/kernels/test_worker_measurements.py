"""The per-worker measurements of the records (worker_* fields) against truth: the work each worker
does under a static schedule is computable from the image (tests/mandelbrot_reference.py), so the
measured work balance must match it exactly (work is counted, not timed); a planted lock contention
shows as waiting, not as work imbalance."""

import json
import os
import subprocess

import numpy as np
import pytest

from tests.kernel_records import runq_share
from tests.mandelbrot_reference import PRESETS, reference_counts

WIDTH, HEIGHT, MAX_ITER = 96, 90, 200


def records(path, *args) -> list[dict]:
    proc = subprocess.run(
        [str(path), *map(str, args)], capture_output=True, text=True, timeout=120, check=True
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def shares(rows: np.ndarray, owner: np.ndarray, workers: int) -> np.ndarray:
    """Each worker's iterations when worker owner[j] computes row j."""
    return np.bincount(owner, weights=rows, minlength=workers)


def block_owner(height: int, workers: int) -> np.ndarray:
    """Contiguous bands, the first height % workers one row longer (libgomp's static, our block)."""
    base, extra = divmod(height, workers)
    sizes = [base + (w < extra) for w in range(workers)]
    return np.repeat(np.arange(workers), sizes)


@pytest.mark.parametrize(
    ("binary", "schedule", "owner"),
    [
        ("mandelbrot-c-omp", "static", block_owner),
        ("mandelbrot-c-omp", "static,1", lambda h, w: np.arange(h) % w),
        ("mandelbrot-f-omp", "static", block_owner),
        ("mandelbrot-f-omp", "static,1", lambda h, w: np.arange(h) % w),
        ("mandelbrot-c-pthreads", "block", block_owner),
        ("mandelbrot-c-pthreads", "cyclic", lambda h, w: np.arange(h) % w),
        ("mandelbrot-c-pthreads", "cyclic,4", lambda h, w: (np.arange(h) // 4) % w),
    ],
)
@pytest.mark.parametrize("workers", [2, 3])
def test_work_balance_of_the_asymmetric_image_is_the_one_the_image_predicts(
    kernel, binary, schedule, owner, workers
):
    rows = reference_counts(WIDTH, HEIGHT, MAX_ITER, PRESETS["asymmetric"]).sum(axis=1).astype(float)
    truth = shares(rows, owner(HEIGHT, workers), workers)
    args = ["--preset", "asymmetric", "--width", WIDTH, "--height", HEIGHT, "--max-iter", MAX_ITER]
    (record,) = records(kernel(binary), *args, "--threads", workers, "--schedule", schedule)
    assert record["worker_work_mean"] * workers == record["work"] == truth.sum()
    assert record["worker_work_max"] == truth.max()
    assert record["worker_work_mean"] / record["worker_work_max"] == pytest.approx(
        truth.mean() / truth.max(), rel=1e-12
    )
    assert truth.mean() / truth.max() < 0.99 or schedule != "static"  # the image is asymmetric indeed


def test_useful_time_and_waiting_add_up_to_at_most_the_compute_region(kernel):
    for record in records(
        kernel("mcpi-c-pthreads"),
        "--threads",
        2,
        "--sync",
        "coarse",
        "--schedule",
        "block",
        "--batch",
        1,
        "--samples",
        100000,
        "--reps",
        3,
    ):
        assert 0 < record["worker_useful_mean_s"] <= record["worker_useful_max_s"] <= record["wall_s"]
        assert record["worker_useful_mean_s"] + record["worker_wait_mean_s"] <= record["wall_s"]
        # work is counted exactly: the two blocks of batches hold half the samples each
        assert record["worker_work_mean"] == record["worker_work_max"] == 50000


def test_a_planted_lock_contention_is_waiting_not_work_imbalance(kernel):
    """Two workers hammering one mutex (--batch 1, coarse) wait on it; the same work lock-free
    (atomic) has no waiting at all: the wait is timed only where a lock was contended."""
    common = ["--threads", 2, "--schedule", "block", "--batch", 1, "--samples", 2000000, "--reps", 3]
    atomic = records(kernel("mcpi-c-pthreads"), *common, "--sync", "atomic")
    assert all(r["worker_wait_mean_s"] == 0 for r in atomic)
    coarse = []
    # On 2 vCPUs the two workers overlap often enough to contend at least once in some repetition,
    # unless other processes hold the CPUs so that the two rarely run at once: up to three tries.
    for _ in range(3):
        coarse += records(kernel("mcpi-c-pthreads"), *common, "--sync", "coarse")
        if max(r["worker_wait_mean_s"] for r in coarse) > 0:
            break
    assert all(r["worker_work_mean"] == r["worker_work_max"] for r in coarse + atomic)
    waited = [runq_share(r) for r in coarse]
    if max(r["worker_wait_mean_s"] for r in coarse) == 0 and min(waited) > 0.3:
        pytest.skip(f"the host was loaded: the workers waited for a CPU {sorted(waited)} of their time")
    assert max(r["worker_wait_mean_s"] for r in coarse) > 0, waited


def test_kernels_that_do_not_report_work_carry_no_worker_fields(kernel):
    (record,) = records(kernel("mandelbrot-c-serial"), "--width", 16, "--height", 16)
    assert not any(key.startswith("worker_") for key in record)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two online CPUs")
@pytest.mark.parametrize("binary", ["mandelbrot-c-omp", "mandelbrot-f-omp", "mandelbrot-c-pthreads"])
def test_every_worker_measures_its_clock_outside_the_region(kernel, binary):
    """Each worker's clock (the chain of clock_ghz, run on that worker) is in the record: mean and
    least over the workers, near the first thread's own reading (the same chain on the same host;
    bounds wide enough for a loaded host). With more workers than online CPUs none is measured."""
    args = ["--preset", "asymmetric", "--width", WIDTH, "--height", HEIGHT, "--max-iter", MAX_ITER]
    for record in records(kernel(binary), *args, "--threads", 2, "--reps", 2):
        low, mean = record["worker_clock_ghz_min"], record["worker_clock_ghz_mean"]
        assert 0 < low <= mean
        assert 0.5 * record["clock_ghz"] < mean < 1.5 * record["clock_ghz"]
    (crowded,) = records(kernel(binary), *args, "--threads", (os.cpu_count() or 1) + 1)
    assert "worker_clock_ghz_mean" not in crowded and "worker_useful_mean_s" in crowded
