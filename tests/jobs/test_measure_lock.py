"""One measurer per host: a second runner waits for the first (saying so) or, with --no-wait, refuses;
records say how long they waited; kernels of two runners never overlap in time, so their medians stay
those of one runner; the lock file works across users."""

import fcntl
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from jobs.measure_lock import LOCK_ENV, measuring
from sbcore.errors import EnvironmentProblem
from tests.records import campaign_records

from .conftest import ROOT, run_cli

EXPERIMENT = """
description = "measure lock"
repetitions = REPS
warmup = 0
seed = 5
[[sweep]]
binary = ["BINARY"]
threads = [2]
params = { samples = [SAMPLES] }
"""

# A stand-in that logs the monotonic start and end of the real kernel it runs (one line each, appended);
# not when it is only asked about its options (`--help`, `--check-args` while a runner plans: they
# measure nothing and run outside the lock).
TIMED_KERNEL = """#!/bin/bash
for arg in "$@"; do
  case "$arg" in --help|--check-args) exec {real} "$@" ;; esac
done
echo "start $(date +%s.%N)" >> {log}
{real} "$@"
status=$?
echo "end $(date +%s.%N)" >> {log}
exit $status
"""


def _experiment(tmp_path: Path, name: str, reps: int, samples: int, binary="mcpi-c-omp") -> Path:
    path = tmp_path / f"{name}.toml"
    text = EXPERIMENT.replace("REPS", str(reps)).replace("SAMPLES", str(samples)).replace("BINARY", binary)
    path.write_text(text)
    return path


def _plan(tmp_path: Path, name: str) -> None:
    experiment = _experiment(tmp_path, name, 1, 1000)
    plan = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "r", "--name", name)
    assert plan.returncode == 0, plan.stderr


@pytest.fixture
def lock_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "measure.lock"
    monkeypatch.setenv(LOCK_ENV, str(path))
    return path


def _hold(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_no_wait_refuses_with_one_line_and_exit_3(tmp_path, bin_dir, lock_file):
    run_cli(
        "plan",
        _experiment(tmp_path, "nw", 1, 1000),
        "--write",
        "--results-dir",
        tmp_path / "r",
        "--name",
        "nw",
    )
    fd = _hold(lock_file)
    try:
        proc = run_cli("run-case", tmp_path / "r" / "nw", 0, "--no-wait")
    finally:
        os.close(fd)
    assert proc.returncode == 3, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "another scalebench process is measuring on this host" in line and str(lock_file) in line
    assert not (tmp_path / "r" / "nw" / "raw").exists() or not campaign_records(tmp_path / "r" / "nw")


def test_second_runner_waits_says_so_and_records_the_wait(tmp_path, bin_dir, lock_file):
    run_cli(
        "plan", _experiment(tmp_path, "w", 1, 1000), "--write", "--results-dir", tmp_path / "r", "--name", "w"
    )
    fd = _hold(lock_file)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scalebench"), "run-case", str(tmp_path / "r" / "w"), "0"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stderr.readline()
        assert "waiting: another scalebench process is measuring on this host" in first
        assert proc.poll() is None
        held = 0.5
        subprocess.run(["sleep", str(held)], check=True)
    finally:
        os.close(fd)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    [record] = campaign_records(tmp_path / "r" / "w")
    assert record["lock_wait_s"] >= held


@pytest.mark.slow
def test_two_runners_at_once_never_overlap_and_keep_the_medians(tmp_path, bin_dir, lock_file):
    log = tmp_path / "intervals.log"
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for binary in bin_dir.iterdir():
        (stand_ins / binary.name).symlink_to(binary)
    (stand_ins / "mcpi-c-omp").unlink()
    (stand_ins / "mcpi-c-omp").write_text(TIMED_KERNEL.format(log=log, real=bin_dir / "mcpi-c-omp"))
    (stand_ins / "mcpi-c-omp").chmod(0o755)
    env = {**os.environ, "SCALEBENCH_BIN_DIR": str(stand_ins)}
    experiment = _experiment(tmp_path, "two", 7, 40_000_000)
    results = tmp_path / "r"

    def start(name: str) -> subprocess.Popen:
        argv = [sys.executable, str(ROOT / "scalebench"), "run", str(experiment), "--name", name]
        return subprocess.Popen(
            [*argv, "--results-dir", str(results), "--no-progress"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    alone = start("alone")
    assert alone.wait(timeout=300) == 0
    pair = [start("a"), start("b")]
    assert [p.wait(timeout=300) for p in pair] == [0, 0]

    # Kernel processes of the two runners ran one after the other, never side by side.
    events = [line.split() for line in log.read_text().splitlines()]
    depth = 0
    for kind, _ in sorted(events, key=lambda e: float(e[1])):
        depth += 1 if kind == "start" else -1
        assert depth <= 1, "two kernels ran at the same time"
    # Wall time per CPU second each of the kernel's threads got, per repetition: ~1 while its threads
    # have their CPUs, ~2 when another kernel's threads share them. Not the wall time alone: the host
    # slows all of a guest's work for seconds to minutes at a time (up to 1.8x), which hits the
    # runners measured apart in time differently, but CPU time and wall time alike.
    medians = {
        n: statistics.median(
            r["wall_s"] * r["threads"] / (r["cpu_user_s"] + r["cpu_sys_s"])
            for r in campaign_records(results / n)
        )
        for n in ("alone", "a", "b")
    }
    waits = [r["lock_wait_s"] for n in ("a", "b") for r in campaign_records(results / n)]
    assert max(waits) > 0, "one of the two runners must have waited"
    load = os.getloadavg()[0]
    for name in ("a", "b"):
        # Two overlapping runners on 2 CPUs take 1.5-2.9x the wall time for the same CPU time; the lock
        # keeps each kernel's threads on their CPUs as when it runs alone.
        assert medians[name] < 1.35 * medians["alone"], (medians, f"load average {load:.1f}")


def test_lock_file_is_shared_across_users():
    """Created by root in a sticky world-writable directory, opened by another user (no O_CREAT on an
    existing file: fs.protected_regular would refuse it), and the other way round."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch users")
    with tempfile.TemporaryDirectory(dir="/tmp") as top:  # pytest's own tmp dirs are private to root
        Path(top).chmod(0o755)
        sticky = Path(top) / "sticky"
        sticky.mkdir()
        sticky.chmod(0o1777)
        _take_turns(sticky)


def _take_turns(sticky: Path) -> None:
    for first, second in (("root", "nobody"), ("nobody", "root")):
        path = sticky / f"{first}.lock"
        for user in (first, second):
            code = (
                "import os; from jobs.measure_lock import measuring\n"
                f"with measuring(env={{'{LOCK_ENV}': '{path}'}}) as waited: print('held', waited < 1)"
            )
            argv = [sys.executable, "-c", code]
            if user == "nobody":
                argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
            proc = subprocess.run(
                argv, cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
            )
            assert proc.stdout.strip() == "held True", (first, user, proc.stderr)
        assert path.stat().st_mode & 0o777 == 0o644


def test_in_process_no_wait_raises_environment_problem(tmp_path):
    env = {LOCK_ENV: str(tmp_path / "l")}
    with (
        measuring(env=env),
        pytest.raises(EnvironmentProblem, match="another scalebench process"),
        measuring(wait=False, env=env),
    ):
        pass
