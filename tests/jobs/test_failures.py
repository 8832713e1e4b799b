"""A case that crashes, hangs past its limit or prints no valid record is a failed attempt with the reason;
the campaign goes on, status shows it, and a later resume retries it."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from jobs.status import case_states

from .conftest import ROOT, run_cli

EXPERIMENT = """
description = "failure injection: three broken stand-ins and one real kernel"
repetitions = 1
warmup = 0
timeout_s = 2
seed = 1

[[sweep]]
binary = ["failinject-sh-crash", "failinject-sh-hang", "failinject-sh-norecord", "failinject-sh-exit3"]

[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [1000] }
"""

EXPECTED_REASONS = {
    "failinject-sh-crash": "killed by signal SIGSEGV",
    "failinject-sh-hang": "timeout after 2 s",
    "failinject-sh-norecord": "no valid record on stdout",
    "failinject-sh-exit3": "exit status 3: bad things happened",  # the kernel's own last stderr line
}


@pytest.mark.slow
def test_failures_are_recorded_and_the_campaign_goes_on(tmp_path, injection_bin_dir):
    experiment = tmp_path / "failures.toml"
    experiment.write_text(EXPERIMENT)
    env = {"SCALEBENCH_BIN_DIR": str(injection_bin_dir)}
    run = run_cli(
        "run", experiment, "--results-dir", tmp_path / "res", "--name", "f", "--no-progress", env=env
    )
    assert run.returncode == 1, run.stderr
    assert "1 repetitions ran, 4 failed" in run.stdout
    campaign = tmp_path / "res" / "f"
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    states = {cases[s["index"]]["binary"]: s for s in case_states(campaign)}
    assert states["mcpi-c-serial"]["state"] == "done"
    for binary, reason in EXPECTED_REASONS.items():
        assert states[binary]["state"] == "failed"
        assert states[binary]["reason"] == f"rep 0: {reason}"
        [attempt] = (campaign / "raw" / states[binary]["case_id"]).glob("rep-0.failed-*.json")
        record = json.loads(attempt.read_text())
        assert record["status"] == "failed" and record["reason"] == reason
        assert record["case_id"] == states[binary]["case_id"] and record["rep"] == 0
    crash = json.loads(
        next((campaign / "raw" / states["failinject-sh-crash"]["case_id"]).glob("*")).read_text()
    )
    assert crash["exit_status"] == -11 and "about to crash" in crash["stderr_tail"]

    status = run_cli("status", campaign, env=env)
    assert status.returncode == 1  # failed cases: the campaign is incomplete
    assert "workstation" in status.stdout and "timeout after 2 s" in status.stdout
    row = next(line for line in status.stdout.splitlines() if line.startswith("workstation"))
    assert row.split() == ["workstation", "1", "0", "0", "4", "1/5"]

    # A resume retries exactly the failed ones (they fail again: a second attempt file each).
    again = run_cli("run", "--resume", campaign, "--no-progress", env=env)
    assert "0 repetitions ran, 4 failed" in again.stdout
    for binary in EXPECTED_REASONS:
        assert len(list((campaign / "raw" / states[binary]["case_id"]).glob("rep-0.failed-*.json"))) == 2
    # the ok case is not run again: its records and their probe times, no attempt file
    ok_files = sorted(p.name for p in (campaign / "raw" / states["mcpi-c-serial"]["case_id"]).iterdir())
    assert ok_files == ["facts.jsonl", "probes.jsonl", "reps.csv", "reps.results.csv", "reps.threads.csv"]


def test_run_case_exit_status_and_message(tmp_path, injection_bin_dir):
    experiment = tmp_path / "failures.toml"
    experiment.write_text(EXPERIMENT)
    env = {"SCALEBENCH_BIN_DIR": str(injection_bin_dir)}
    plan = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "res", "--name", "g", env=env)
    assert plan.returncode == 0, plan.stderr
    bad = run_cli("run-case", tmp_path / "res" / "g", 3, env=env)
    assert bad.returncode == 1 and "exit status 3" in bad.stderr
    good = run_cli("run-case", tmp_path / "res" / "g", 4, env=env)
    assert good.returncode == 0 and "rep 0: ok (reps.csv)" in good.stderr


INTERRUPTED = """
description = "Ctrl-C while a stand-in hangs"
repetitions = 1
warmup = 0
timeout_s = 120
[[sweep]]
binary = ["failinject-sh-hang"]
"""


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_keeps_nothing_half_done(tmp_path, injection_bin_dir):
    experiment = tmp_path / "int.toml"
    experiment.write_text(INTERRUPTED)
    campaign = tmp_path / "res" / "i"
    runner = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "scalebench"),
            "run",
            str(experiment),
            "--results-dir",
            str(tmp_path / "res"),
        ]
        + ["--name", "i", "--no-progress"],
        cwd=ROOT,
        env={**os.environ, "SCALEBENCH_BIN_DIR": str(injection_bin_dir)},
        # A test suite started as a background job inherits SIGINT ignored (POSIX), and so would the
        # runner: give it the disposition of a runner started from a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((campaign / "logs").glob("run-*.log")):
        time.sleep(0.05)
    time.sleep(0.5)  # the stand-in is hanging now
    runner.send_signal(signal.SIGINT)
    out, err = runner.communicate(timeout=20)
    assert runner.returncode == 130, err
    assert f"continue with ./scalebench run --resume {campaign}" in out
    assert list((campaign / "raw").glob("*/*")) == []  # an interrupted attempt is neither done nor failed
    assert "interrupted" in next((campaign / "logs").glob("run-*.log")).read_text()
