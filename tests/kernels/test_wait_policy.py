"""--wait-policy of the pthreads kernels (kernels/common/sb_wait.c): the option's validation, the
record's sched.wait_policy / wait_applied, auto against the CPUs the process may use, and the same
bits under every policy."""

import os

import pytest

from ..kernel_records import assert_usage_error, checksums, run_raw, run_records

PTHREADS = ["mandelbrot-c-pthreads", "mcpi-c-pthreads"]
SMALL = {
    "mandelbrot-c-pthreads": ["--width", 48, "--height", 40, "--max-iter", 60, "--preset", "asymmetric"],
    "mcpi-c-pthreads": ["--samples", 20000, "--batch", 100],
}
CPUS = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("binary", PTHREADS)
@pytest.mark.parametrize("value", ["active", "", "SPIN", "spin,sleep"])
def test_bad_value_is_one_line_naming_option_and_value(kernel, binary, value):
    proc = run_raw(kernel(binary), "--wait-policy", value)
    assert_usage_error(proc, binary, ["--wait-policy", f"'{value}'", "auto, spin, sleep"])


@pytest.mark.parametrize("binary", ["mandelbrot-c-omp", "mcpi-c-serial", "mandelbrot-f-omp"])
def test_models_without_it_reject_it(kernel, binary):
    proc = run_raw(kernel(binary), "--wait-policy", "spin")
    assert_usage_error(proc, binary, ["--wait-policy", "'spin'", "OMP_WAIT_POLICY"])


def test_help_names_the_option_and_the_openmp_vocabulary(kernel):
    out = run_raw(kernel("mandelbrot-c-pthreads"), "--help").stdout
    assert "--wait-policy W" in out and "OMP_WAIT_POLICY=active" in out and "(passive)" in out
    assert "--wait-policy" not in run_raw(kernel("mandelbrot-c-omp"), "--help").stdout


@pytest.mark.parametrize("binary", PTHREADS)
@pytest.mark.parametrize(
    ("asked", "threads", "applied"),
    [
        ("auto", 1, "spin"),
        ("auto", CPUS, "spin"),
        ("auto", CPUS + 1, "sleep"),
        ("spin", CPUS + 1, "spin"),
        ("sleep", 1, "sleep"),
        (None, CPUS, "spin"),  # the default is auto
    ],
)
def test_record_says_what_was_asked_and_what_ran(kernel, binary, asked, threads, applied):
    args = [*SMALL[binary], "--threads", threads, "--reps", 2]
    if asked:
        args += ["--wait-policy", asked]
    for r in run_records(kernel(binary), *args):
        assert r["sched"]["wait_policy"] == (asked or "auto")
        assert r["sched"]["wait_applied"] == applied


def test_pinned_list_decides_auto(kernel):
    """With the harness's pin list, auto counts its distinct CPUs (the main thread is already pinned
    to one of them, so its own mask would say 1)."""
    same_cpu = run_records(kernel("mandelbrot-c-pthreads"), *SMALL["mandelbrot-c-pthreads"], "--threads", 2,
                           env={"SB_PIN_CPUS": "0,0"})  # fmt: skip
    assert {r["sched"]["wait_applied"] for r in same_cpu} == {"sleep"}
    if CPUS >= 2:
        two = run_records(kernel("mandelbrot-c-pthreads"), *SMALL["mandelbrot-c-pthreads"], "--threads", 2,
                          env={"SB_PIN_CPUS": "0,1"})  # fmt: skip
        assert {r["sched"]["wait_applied"] for r in two} == {"spin"}


def test_other_kernels_record_null(kernel):
    (r,) = run_records(kernel("mandelbrot-c-omp"), "--width", 16, "--height", 16)
    assert r["sched"]["wait_policy"] is None and r["sched"]["wait_applied"] is None


@pytest.mark.parametrize("binary", PTHREADS)
@pytest.mark.parametrize("schedule", ["block", "cyclic", "queue"])
def test_same_bits_under_every_policy(kernel, binary, schedule):
    sync = "atomic" if schedule.startswith("queue") else "none"
    args = [*SMALL[binary], "--threads", 3, "--schedule", schedule, "--sync", sync, "--reps", 2]
    serial = binary.replace("pthreads", "serial")
    (reference,) = checksums(kernel(serial), *SMALL[binary])
    for policy in ["auto", "spin", "sleep"]:
        assert checksums(kernel(binary), *args, "--wait-policy", policy) == {reference}, policy


@pytest.mark.parametrize("policy", ["auto", "sleep"])
def test_many_workers_on_few_cpus_finish(kernel, policy):
    """512 workers on this host's CPUs (the seed experiments' largest count): auto sleeps, so the
    repetitions finish in seconds rather than crawling behind 510 spinners."""
    records = run_records(kernel("mcpi-c-pthreads"), "--samples", 51200, "--batch", 100, "--threads", 512,
                          "--reps", 3, "--wait-policy", policy, timeout=60)  # fmt: skip
    assert len(records) == 3 and {r["sched"]["wait_applied"] for r in records} == {"sleep"}
    assert all(r["wall_s"] < 10 for r in records)
