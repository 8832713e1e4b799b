"""MPI kernels under mpirun agree bit for bit with the C serial reference for 1-4 ranks (more ranks
than cores with --oversubscribe), every row distribution and OpenMP threads inside the ranks; rank 0's
record carries ranks, threads, every rank's time and the placement of every rank and thread."""

import pytest

from .conftest import MANDELBROT_ARGS, PI_ARGS
from .kernel_run import mpirun_records

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
    checksum, work, dump = mandelbrot_reference("asymmetric")
    out = tmp_path / "mpi.pgm"
    (rec,) = mpirun_records(
        ranks,
        kernel("mandelbrot-c-mpi"),
        *MANDELBROT_ARGS,
        "--preset",
        "asymmetric",
        "--schedule",
        schedule,
        "--dump",
        out,
    )
    assert (rec["checksum"], rec["work"], rec["schedule"]) == (checksum, work, schedule)
    assert out.read_bytes() == dump
    # only rank 0 writes the dump; no rank leaves a temporary file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mpi.pgm"]
    check_mpi_record(rec, ranks, 1)


@pytest.mark.parametrize("schedule", ["block", "cyclic,2", "master,3"])
def test_mandelbrot_mpi_3_ranks_x_2_threads(kernel, mandelbrot_reference, tmp_path, schedule):
    checksum, work, dump = mandelbrot_reference("symmetric")
    out = tmp_path / "mpi.pgm"
    recs = mpirun_records(
        3,
        kernel("mandelbrot-c-mpi"),
        *MANDELBROT_ARGS,
        "--preset",
        "symmetric",
        "--threads",
        "2",
        "--schedule",
        schedule,
        "--dump",
        out,
        "--reps",
        "2",
    )
    assert len(recs) == 2, "one record per repetition, from rank 0 only"
    for rec in recs:
        assert (rec["checksum"], rec["work"]) == (checksum, work)
        check_mpi_record(rec, 3, 2)
    assert out.read_bytes() == dump


@pytest.mark.parametrize(
    ("ranks", "threads", "batch"), [(1, 1, "4096"), (2, 1, "1"), (3, 2, "97"), (4, 1, "100000")]
)
def test_mcpi_mpi_equals_c_serial(kernel, pi_reference, ranks, threads, batch):
    (rec,) = mpirun_records(ranks, kernel("mcpi-c-mpi"), *PI_ARGS, "--threads", threads, "--batch", batch)
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(PI_ARGS[3])
    check_mpi_record(rec, ranks, threads)
