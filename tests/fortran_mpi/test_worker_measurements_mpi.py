"""MPI records carry the per-worker measurements of every rank's threads (reduced onto rank 0): the
work balance of the asymmetric image under block and cyclic row distributions equals the one computed
from the image, exactly; under the master schedule rank 0 only hands out chunks, so its useful time is
nil and its time is waiting, and the waiting of the worker with the largest useful time (the critical
path of the serialisation/transfer split) is its chunk requests."""

import numpy as np
import pytest

from tests.mandelbrot_reference import PRESETS, reference_counts

from .mpi_run import mpirun_records

WIDTH, HEIGHT, MAX_ITER = 96, 90, 200
ARGS = [
    "--preset",
    "asymmetric",
    "--width",
    WIDTH,
    "--height",
    HEIGHT,
    "--max-iter",
    MAX_ITER,
    "--threads",
    1,
]


@pytest.mark.parametrize(
    ("schedule", "owner"),
    [
        ("block", lambda h, r: np.arange(h) * r // h),
        ("cyclic", lambda h, r: np.arange(h) % r),
    ],
)
def test_work_balance_over_ranks_is_the_one_the_image_predicts(need_mpirun, kernel, schedule, owner):
    rows = reference_counts(WIDTH, HEIGHT, MAX_ITER, PRESETS["asymmetric"]).sum(axis=1).astype(float)
    truth = np.bincount(owner(HEIGHT, 2), weights=rows, minlength=2)
    (record,) = mpirun_records(2, kernel("mandelbrot-c-mpi"), *ARGS, "--schedule", schedule)
    assert record["worker_work_mean"] * 2 == record["work"] == truth.sum()
    assert record["worker_work_max"] == truth.max()


def test_the_master_rank_waits_and_the_worker_rank_computes(need_mpirun, kernel):
    (record,) = mpirun_records(2, kernel("mandelbrot-c-mpi"), *ARGS, "--schedule", "master")
    assert record["worker_work_max"] == record["work"]  # rank 1 computed every row
    assert record["worker_wait_mean_s"] > 0
    # rank 0's useful time is (almost) nil: the mean over both ranks is about half the largest
    assert record["worker_useful_mean_s"] < 0.6 * record["worker_useful_max_s"]
    # the critical path is rank 1 (all the useful time): its waiting is its chunk requests, one per
    # row, so it waited, and less than rank 0, which waited all along (the mean over both ranks)
    critical = record["worker_wait_at_useful_max_s"]
    assert 0 < critical < 2 * record["worker_wait_mean_s"]
    assert record["worker_useful_max_s"] + critical <= record["wall_s"] * 1.001


def test_static_distributions_wait_for_no_rank_inside_the_region(need_mpirun, kernel):
    (record,) = mpirun_records(2, kernel("mandelbrot-c-mpi"), *ARGS, "--schedule", "block")
    assert record["worker_wait_at_useful_max_s"] == 0  # serialisation efficiency 1


def test_every_ranks_clock_is_reduced_onto_rank_0(need_mpirun, kernel):
    """Each rank's thread measures its core clock outside the region; rank 0's record carries the
    mean and the least over every rank's (near rank 0's own first-thread reading, clock_ghz)."""
    (record,) = mpirun_records(2, kernel("mandelbrot-c-mpi"), *ARGS, "--schedule", "block")
    low, mean = record["worker_clock_ghz_min"], record["worker_clock_ghz_mean"]
    assert 0 < low <= mean
    assert 0.5 * record["clock_ghz"] < mean < 1.5 * record["clock_ghz"]
