"""A runner that dies by SIGTERM, SIGINT, SIGHUP or SIGKILL takes its kernel and competing load along
within a second; a resume started right after measures alone (and is itself stopped cleanly)."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs.competing_load import STOP_GRACE_S

from .conftest import ROOT

EXPERIMENT = """
description = "orphans"
repetitions = 1
warmup = 0
timeout_s = 600
[load.one]
workers = 1
[[sweep]]
binary = ["mcpi-c-serial"]
load = ["one"]
params = { samples = [4000000000000], seed = [SEED] }
"""


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live (not zombie) process, from ps."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,stat="], capture_output=True, text=True, check=True)
    table = {}
    for line in out.stdout.splitlines():
        pid, ppid, stat = line.split()
        if not stat.startswith("Z"):
            table[int(pid)] = int(ppid)
    return table


def _descendants(root: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_runner_outlives_its_test():
    """A failed test must not leave its runner measuring (it holds the host's measurement lock, so every
    later test that measures would wait for it): its whole process group is killed."""
    yield
    while STARTED:
        runner = STARTED.pop()
        if runner.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
            runner.wait(timeout=10)


def _start(args: list[str]) -> subprocess.Popen:
    runner = _popen(args)
    STARTED.append(runner)
    return runner


def _popen(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "scalebench"), *args, "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # like a runner started from a login shell: its own group
        # A suite started in the background inherits SIGINT ignored (POSIX): give the runner the
        # disposition of one started from a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_kernel_and_load(runner: subprocess.Popen) -> set[int]:
    """The runner's descendants once both the kernel and stress-ng run (ps names them)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = _descendants(runner.pid)
        names = {_comm(pid) for pid in pids}
        if "mcpi-c-serial" in names and "stress-ng" in names:
            return pids
        assert runner.poll() is None, f"runner ended early with {runner.returncode}"
        time.sleep(0.05)
    pytest.fail("kernel and competing load did not start within 60 s")


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    """The pids still alive (not zombies) after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        alive = pids & set(_parents())
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
def test_children_die_with_the_runner(tmp_path, bin_dir, signum):
    seed = 1000 + int(signum)
    experiment = tmp_path / "orphans.toml"
    experiment.write_text(EXPERIMENT.replace("SEED", str(seed)))
    results = tmp_path / "res"
    runner = _start(["run", str(experiment), "--results-dir", str(results), "--name", "o"])
    children = _wait_for_kernel_and_load(runner)
    os.kill(runner.pid, signum)
    # The runner's way out stops the competing load: SIGTERM and up to STOP_GRACE_S for stress-ng to
    # end, then SIGKILL and up to STOP_GRACE_S for its group to be gone (jobs/competing_load.py)
    runner.wait(timeout=2 * STOP_GRACE_S + 5)
    left = _gone_within(children, 1.0)
    assert not left, f"{signum.name}: still running a second later: {[(p, _comm(p)) for p in left]}"

    # A resume right after: it starts its own kernel, and nothing of the first runner measures beside it.
    resume = _start(["run", "--resume", str(results / "o")])
    mine = _wait_for_kernel_and_load(resume)
    kernels = {p for p in _parents() if _comm(p) == "mcpi-c-serial" and seed_of(p) == seed}
    assert kernels <= mine, f"kernels not started by the resume: {kernels - mine}"
    os.kill(resume.pid, signal.SIGTERM)
    assert resume.wait(timeout=10) != 0
    assert not _gone_within(mine, 1.0)


def seed_of(pid: int) -> int | None:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return int(args[args.index(b"--seed") + 1]) if b"--seed" in args else None
