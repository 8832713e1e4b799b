"""Bad input: the Fortran binaries exit 2 with one stderr line naming option and value, write
nothing; under mpirun every rank exits cleanly (no hang, no process left behind), whether all ranks
or only some get the bad input, and when one rank fails at run time."""

import os

import pytest

from ..kernel_records import assert_error_line, assert_usage_error, run_raw
from .mpi_run import leftover_processes, mpirun, mpirun_mpmd

# (binary, arguments, texts the one stderr line must contain: option and value)
BAD_FORTRAN_INVOCATIONS = [
    ("mandelbrot-f-omp", ["--threads", "0"], ["--threads", "'0'", "out of range"]),
    ("mandelbrot-f-omp", ["--threads", "4097"], ["--threads", "'4097'", "out of range"]),
    ("mcpi-f-omp", ["--threads", "many"], ["--threads", "'many'", "not an integer"]),
    ("mandelbrot-f-serial", ["--threads", "2"], ["--threads", "'2'"]),
    ("mandelbrot-f-omp", ["--schedule", "queue"], ["--schedule", "'queue'", "static|dynamic|guided"]),
    ("mandelbrot-f-omp", ["--schedule", "dynamic,0"], ["--schedule", "'dynamic,0'", "chunk"]),
    ("mandelbrot-f-omp", ["--sync", "atomic"], ["--sync", "'atomic'"]),
    ("mandelbrot-f-serial", ["--max-iter", "0"], ["--max-iter", "'0'"]),
    ("mandelbrot-f-serial", ["--region", "1,0,0,1"], ["--region", "'1,0,0,1'"]),
    ("mandelbrot-f-omp", ["--width", "1048576", "--height", "1048576"], ["--width", "'1048576'", "pixels"]),
    ("mandelbrot-f-serial", ["--dump", "/proc/no/such/dir/f.pgm"], ["--dump", "'/proc/no/such/dir/f.pgm'"]),
    ("mcpi-f-omp", ["--sync", "coarse"], ["--sync", "'coarse'", "atomic|reduction|critical"]),
    ("mcpi-f-omp", ["--batch", "0"], ["--batch", "'0'"]),
    ("mcpi-f-serial", ["--samples", "-5"], ["--samples", "'-5'"]),
    ("mcpi-f-serial", ["--seed", "-1"], ["--seed", "'-1'"]),
    ("mcpi-f-omp", ["--samples"], ["--samples", "missing value"]),
    ("mcpi-f-omp", ["--max-iter", "10"], ["'--max-iter'", "unknown option"]),
]

# Bad input that every rank of an MPI binary sees.
BAD_MPI_INVOCATIONS = [
    ("mandelbrot-c-mpi", ["--threads", "0"], ["--threads", "'0'"]),
    (
        "mandelbrot-c-mpi",
        ["--schedule", "dynamic"],
        ["--schedule", "'dynamic'", "block|cyclic|master"],
    ),
    ("mandelbrot-c-mpi", ["--schedule", "block,4"], ["--schedule", "'block,4'", "no chunk"]),
    ("mcpi-c-mpi", ["--sync", "atomic"], ["--sync", "'atomic'"]),
    ("mcpi-c-mpi", ["--samples", "0"], ["--samples", "'0'"]),
]


def unique_token() -> str:
    """An argument value no other process on the machine uses, so pgrep finds only our ranks."""
    return str(1_000_000 + os.getpid() % 1_000_000)


@pytest.mark.parametrize(("binary", "args", "expected"), BAD_FORTRAN_INVOCATIONS, ids=lambda v: str(v))
def test_fortran_bad_input(kernel, tmp_path, binary, args, expected):
    assert_usage_error(run_raw(kernel(binary), *args, timeout=30), binary, expected)


def test_fortran_unwritable_dump_is_refused_before_computing(kernel, tmp_path):
    (tmp_path / "taken").mkdir()
    proc = run_raw(kernel("mandelbrot-f-omp"), "--threads", "2", "--dump", tmp_path / "taken", timeout=30)
    assert_usage_error(proc, "mandelbrot-f-omp", ["--dump", "directory"])
    assert [p.name for p in tmp_path.iterdir()] == ["taken"], "nothing may be written"


@pytest.mark.mpi
@pytest.mark.usefixtures("need_mpirun")
@pytest.mark.parametrize(("binary", "args", "expected"), BAD_MPI_INVOCATIONS, ids=lambda v: str(v))
def test_mpi_bad_input_on_every_rank(kernel, binary, args, expected):
    token = unique_token()
    # the token rides on an option the kernel accepts, so only `args` is wrong
    marker = ["--max-iter", token] if binary.startswith("mandelbrot") else ["--seed", token]
    proc = mpirun(3, kernel(binary), *marker, *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert_error_line(proc.stderr, binary, expected)  # rank 0 speaks for all three
    assert leftover_processes(f"{binary} .*{token}") == ""


@pytest.mark.mpi
@pytest.mark.usefixtures("need_mpirun")
def test_mpi_bad_input_on_some_ranks_does_not_hang(kernel):
    """MPMD: rank 0 is fine and enters MPI_Init, ranks 1 and 2 reject their arguments."""
    token = unique_token()
    binary = kernel("mandelbrot-c-mpi")
    good = ["--width", "40", "--height", "40", "--max-iter", token]
    proc = mpirun_mpmd(["-np", 1, binary, *good], ["-np", 2, binary, *good, "--threads", "0"])
    assert proc.returncode != 0
    assert proc.stdout == "", "no record from a job that failed"
    assert leftover_processes(f"mandelbrot-c-mpi .*{token}") == ""


@pytest.mark.mpi
@pytest.mark.usefixtures("need_mpirun")
def test_mpi_rank_failing_at_run_time_aborts_the_job(kernel):
    """Rank 2 gets fewer OpenMP threads than asked and fails (sb_fail, exit 1) after MPI_Init while
    the others wait in a collective: the job must end (MPI_Abort), not hang."""
    token = unique_token()
    binary = kernel("mcpi-c-mpi")
    args = ["--samples", "100000", "--threads", "2", "--seed", token]
    proc = mpirun_mpmd(["-np", 2, binary, *args], ["-np", 1, "-x", "OMP_THREAD_LIMIT=1", binary, *args])
    # mpirun (Open MPI 4.1.4) itself sometimes dies with SIGSEGV in PMIx_server_finalize after an
    # MPI_Abort (1 in ~8 runs here), so any failure status counts; what matters is no hang, no leak.
    assert proc.returncode != 0, proc.stderr
    assert "OpenMP gave 1 threads instead of 2" in proc.stderr
    assert leftover_processes(f"mcpi-c-mpi .*{token}") == ""
