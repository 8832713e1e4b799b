"""MPI kernels under mpirun agree bit for bit with the C serial reference for 1-4 ranks (more ranks
than cores with --oversubscribe), every row distribution and OpenMP threads inside the ranks; rank 0's
record carries ranks, threads, every rank's time and the placement of every rank and thread."""

import pytest

from .conftest import PI_ARGS, assert_same_image, mandelbrot_args
from .mpi_run import mpirun_records

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("need_mpirun")]

RANKS = [1, 2, 3, 4]
MPI_SCHEDULES = ["block", "cyclic", "cyclic,3", "master", "master,4"]


def check_mpi_record(rec: dict, ranks: int, threads: int):
    assert (rec["model"], rec["ranks"], rec["threads"]) == ("mpi", ranks, threads)
    assert len(rec["rank_wall_s"]) == ranks
    assert rec["wall_s"] == max(rec["rank_wall_s"])
    assert len(rec["placement"]) == ranks * threads


@pytest.mark.parametrize("schedule", MPI_SCHEDULES)
@pytest.mark.parametrize("ranks", RANKS)
def test_mandelbrot_mpi_equals_c_serial(kernel, mandelbrot_reference, tmp_path, ranks, schedule):
    out = tmp_path / "mpi.pgm"
    args = mandelbrot_args("asymmetric", out, "--schedule", schedule)
    (rec,) = mpirun_records(ranks, kernel("mandelbrot-c-mpi"), *args)
    assert_same_image(rec, out, mandelbrot_reference("asymmetric"))
    assert rec["schedule"] == schedule
    # only rank 0 writes the dump; no rank leaves a temporary file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mpi.pgm"]
    check_mpi_record(rec, ranks, 1)


@pytest.mark.parametrize("schedule", ["block", "cyclic,2", "master,3"])
def test_mandelbrot_mpi_3_ranks_x_2_threads(kernel, mandelbrot_reference, tmp_path, schedule):
    out = tmp_path / "mpi.pgm"
    args = mandelbrot_args("symmetric", out, "--threads", "2", "--schedule", schedule, "--reps", "2")
    recs = mpirun_records(3, kernel("mandelbrot-c-mpi"), *args)
    assert len(recs) == 2, "one record per repetition, from rank 0 only"
    for rec in recs:
        assert_same_image(rec, out, mandelbrot_reference("symmetric"))
        check_mpi_record(rec, 3, 2)


@pytest.mark.parametrize(
    ("ranks", "threads", "batch"), [(1, 1, "4096"), (2, 1, "1"), (3, 2, "97"), (4, 1, "100000")]
)
def test_mcpi_mpi_equals_c_serial(kernel, pi_reference, ranks, threads, batch):
    (rec,) = mpirun_records(ranks, kernel("mcpi-c-mpi"), *PI_ARGS, "--threads", threads, "--batch", batch)
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(PI_ARGS[3])
    check_mpi_record(rec, ranks, threads)


@pytest.mark.parametrize(("ranks", "threads", "schedule"), [(2, 1, "cyclic,3"), (3, 2, "master,4")])
def test_mandelbrot_mpi_simd_equals_c_serial(
    kernel, mandelbrot_reference, tmp_path, ranks, threads, schedule
):
    out = tmp_path / "mpi.pgm"
    args = mandelbrot_args("asymmetric", out, "--threads", threads, "--schedule", schedule, "--inner", "simd")
    (rec,) = mpirun_records(ranks, kernel("mandelbrot-c-mpi"), *args)
    assert_same_image(rec, out, mandelbrot_reference("asymmetric"))
    assert rec["inner"] == "simd"
    check_mpi_record(rec, ranks, threads)


@pytest.mark.parametrize(("ranks", "threads", "batch"), [(2, 1, "1"), (3, 2, "97")])
def test_mcpi_mpi_simd_equals_c_serial(kernel, pi_reference, ranks, threads, batch):
    args = [*PI_ARGS, "--threads", threads, "--batch", batch, "--inner", "simd"]
    (rec,) = mpirun_records(ranks, kernel("mcpi-c-mpi"), *args)
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(PI_ARGS[3])
    check_mpi_record(rec, ranks, threads)
