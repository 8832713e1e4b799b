"""Scheduling scenario knobs: each worker applies its nice value and policy to its own thread, the
record says what was asked and what the OS applied, and a refusal fails the run with one line."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from ..kernel_records import assert_error_line, run_raw, run_records

SMALL = ["--width", 48, "--height", 32, "--max-iter", 200]
# /proc/<pid>/task/<tid>/stat fields after the ")" of the command name: field 40 is rt_priority and
# field 41 policy (1-based, man 5 proc); the ")" ends field 2.
RT_PRIORITY_FIELD, POLICY_FIELD = 40, 41
SCHED_FIFO = 1


def task_sched(pid: int) -> dict[int, tuple[int, int]]:
    """{tid: (policy, rt_priority)} of every thread of `pid`, as /proc shows them now."""
    seen = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        seen[int(task.name)] = (int(fields[POLICY_FIELD - 3]), int(fields[RT_PRIORITY_FIELD - 3]))
    return seen


def test_fifo_worker_really_runs_under_sched_fifo(kernel):
    """Worker 1 of 2 asks for SCHED_FIFO priority 1; /proc, read from outside while the kernel runs,
    must show exactly one thread with policy 1 and rt priority 1. The work is tiny (a few
    milliseconds per repetition) so the real-time thread cannot starve the machine."""
    binary = kernel("mandelbrot-c-pthreads")
    args = [*SMALL, "--threads", 2, "--worker-policy", "other,fifo:1", "--reps", 400]
    proc = subprocess.Popen([str(binary), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fifo_threads = set()
    try:
        deadline = time.monotonic() + 20
        while not fifo_threads and proc.poll() is None and time.monotonic() < deadline:
            try:
                fifo_threads = {t for t, s in task_sched(proc.pid).items() if s == (SCHED_FIFO, 1)}
            except FileNotFoundError:
                break
            time.sleep(0.002)
        others = (
            {t: s for t, s in task_sched(proc.pid).items() if t not in fifo_threads} if fifo_threads else {}
        )
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(fifo_threads) == 1, "no thread of the kernel ran under SCHED_FIFO priority 1"
    assert all(policy == 0 for policy, _ in others.values())  # the main thread (worker 0) stays OTHER
    record = [line for line in out.decode().splitlines() if line][-1]
    assert '"applied":[["other",0,0],["fifo",1,0]]' in record


@pytest.mark.parametrize("binary", ["mandelbrot-c-omp", "mcpi-c-pthreads", "mandelbrot-f-omp"])
def test_record_shows_asked_and_applied_per_worker(kernel, record_validator, binary):
    records = run_records(
        kernel(binary),
        *(SMALL if binary.startswith("mandelbrot") else ["--samples", 20000]),
        "--threads", 3, "--nice", 2, "--worker-nice", "5,7", "--worker-policy", "batch,other,idle",
        env={"OMP_WAIT_POLICY": "passive"},
    )  # fmt: skip
    for record in records:
        record_validator.validate(record)
        sched = record["sched"]
        assert sched["nice"] == 2 and sched["worker_nice"] == "5,7"
        assert sched["worker_policy"] == "batch,other,idle" and sched["omp_wait_policy"] == "passive"
        assert sched["applied"] == [["batch", 0, 5], ["other", 0, 7], ["idle", 0, 5]]


def test_without_knobs_the_record_says_nothing_was_asked(kernel):
    sched = run_records(kernel("mandelbrot-c-serial"), *SMALL, env={"OMP_WAIT_POLICY": ""})[0]["sched"]
    assert sched["nice"] is None and sched["worker_nice"] is None and sched["worker_policy"] is None
    assert sched["applied"] == [["other", 0, os.getpriority(os.PRIO_PROCESS, 0)]]


def test_process_nice_is_inherited_by_every_worker(kernel):
    sched = run_records(kernel("mandelbrot-c-omp"), *SMALL, "--threads", 2, "--nice", 6)[0]["sched"]
    assert [nice for _, _, nice in sched["applied"]] == [6, 6]


def _drop_to_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop privileges for the refusal")
@pytest.mark.parametrize(
    ("knob", "expected"),
    [
        (["--worker-policy", "other,fifo:3"], ["worker 1", "SCHED_FIFO priority 3 refused", "CAP_SYS_NICE"]),
        (["--worker-nice", "-5"], ["worker ", "nice -5 refused", "CAP_SYS_NICE"]),
        (["--nice", "-3"], ["--nice -3 refused"]),
    ],
)
def test_refusal_by_the_os_fails_the_run_with_one_line(kernel, knob, expected):
    binary = kernel("mandelbrot-c-pthreads")
    proc = subprocess.run(
        [str(binary), *map(str, SMALL), "--threads", "2", *knob],
        capture_output=True, text=True, timeout=60, preexec_fn=_drop_to_nobody,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert_error_line(proc.stderr, "mandelbrot-c-pthreads", expected)


@pytest.mark.parametrize(
    ("option", "value"),
    [("--worker-policy", "fifo"), ("--worker-policy", "other:3"), ("--worker-policy", "rr:100"),
     ("--worker-policy", "deadline"), ("--worker-policy", "other,"), ("--worker-nice", "20"),
     ("--worker-nice", "1,,2"), ("--nice", "x"), ("--nice", "-21")],
)  # fmt: skip
def test_bad_knob_values_exit_2_naming_option_and_value(kernel, option, value):
    proc = run_raw(kernel("mandelbrot-c-serial"), option, value)
    assert proc.returncode == 2
    assert_error_line(proc.stderr, "mandelbrot-c-serial", [option, value])
