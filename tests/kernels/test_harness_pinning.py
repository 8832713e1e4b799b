"""Pinning inside the harness (SB_PIN_CPUS): every threaded model puts worker g on list entry g mod n
in every repetition, warm-ups included; the probe measures the listed CPUs; a malformed list or a CPU
the OS refuses ends the run with exit 1 and one line saying why; without the variable nothing is pinned."""

import os

import pytest

from ..kernel_records import assert_error_line, run_raw, run_records

ARGS = ["--width", 32, "--height", 24, "--max-iter", 100, "--reps", 2, "--warmup", 1]
THREADED = ["mandelbrot-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp", "mcpi-c-omp", "mcpi-c-pthreads"]

needs_two = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable CPUs")


def _args(binary):
    return ARGS if binary.startswith("mandelbrot") else ["--samples", 20000, "--reps", 2, "--warmup", 1]


@needs_two
@pytest.mark.parametrize("binary", THREADED)
def test_workers_land_on_their_list_entries(kernel, binary):
    # The list reversed against the CPU numbers and shorter than the team: worker 2 wraps to entry 0.
    records = run_records(kernel(binary), *_args(binary), "--threads", 3, env={"SB_PIN_CPUS": "1,0"})
    assert len(records) == 3
    for record in records:
        assert record["placement"] == [[1, 1], [0, 0], [1, 1]], (binary, record)
    for record in records[1:]:
        assert record["probe"]["before"]["cpus"] == [1, 0]


@needs_two
def test_serial_kernel_runs_on_the_single_entry(kernel):
    records = run_records(kernel("mcpi-c-serial"), "--samples", 20000, env={"SB_PIN_CPUS": "1"})
    assert [r["placement"] for r in records] == [[[1, 1]]]


@pytest.mark.parametrize(
    "value, expected",
    [
        ("x", "SB_PIN_CPUS=x"),
        ("0,,1", "SB_PIN_CPUS=0,,1"),
        ("", "SB_PIN_CPUS is empty"),
        ("-1", "SB_PIN_CPUS=-1"),
    ],
)
def test_a_malformed_list_is_refused(kernel, value, expected):
    proc = run_raw(kernel("mcpi-c-omp"), "--samples", 1000, env={"SB_PIN_CPUS": value})
    assert proc.returncode == 1 and proc.stdout == ""
    assert_error_line(proc.stderr, "mcpi-c-omp", [expected])


def test_a_cpu_the_os_refuses_is_named(kernel):
    missing = max(os.sched_getaffinity(0)) + 1
    proc = run_raw(kernel("mcpi-c-omp"), "--samples", 1000, env={"SB_PIN_CPUS": str(missing)})
    assert proc.returncode == 1 and proc.stdout == ""
    assert_error_line(proc.stderr, "mcpi-c-omp", [f"pinning to CPU {missing} refused by the OS"])


# One binary of each family: every kernel model and language, MPI, and the three microbenchmarks.
FAMILIES = [
    "mandelbrot-c-serial", "mandelbrot-f-serial", "mandelbrot-c-mpi", "mcpi-c-mpi", "mcpi-f-omp",
    "mcpi-c-pthreads", "osbench-c-serial", "smt-c-pthreads", "timing-c-serial",
]  # fmt: skip


@pytest.mark.parametrize("binary", FAMILIES)
def test_every_family_ends_with_one_line_when_pinning_is_refused(kernel, binary):
    missing = max(os.sched_getaffinity(0)) + 1
    proc = run_raw(kernel(binary), "--reps", 1, "--warmup", 0, env={"SB_PIN_CPUS": str(missing)})
    assert proc.returncode == 1 and proc.stdout == "", (binary, proc.stdout)
    assert_error_line(proc.stderr, binary, [f"pinning to CPU {missing} refused by the OS"])


@pytest.mark.parametrize("cpus", ["0,{missing}", "{missing}"])
def test_smt_cpus_the_os_refuses_end_the_run(kernel, cpus):
    """--cpus pins the microbenchmark's workers itself: a refused CPU is an error, not a silent float."""
    missing = max(os.sched_getaffinity(0)) + 1
    proc = run_raw(
        kernel("smt-c-pthreads"), "--threads", 2, "--reps", 1, "--cpus", cpus.format(missing=missing)
    )
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout
    assert_error_line(proc.stderr, "smt-c-pthreads", [f"pinning to CPU {missing} refused by the OS"])
