"""Faults mid-campaign on the real cluster: a task killed with SIGKILL, cancelled tasks, a drained node,
a crashing kernel.

status must report them, resume must refuse while cases are still queued, then resubmit exactly the
missing/failed ones, and the finished campaign must hold every repetition exactly once.
"""

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from jobs.slurm.queue import queue_states
from tests.records import campaign_records

from .conftest import HERE, jobcomp, queue_empty_for, scalebench, submissions, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _run_case_pid(campaign: Path, index: int) -> int | None:
    """The run-case process of this case index (the array task's main process)."""
    out = subprocess.run(["pgrep", "-f", f"run-case {campaign} {index}$"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    return pids[0] if pids else None


def _scontrol(*args: str) -> None:
    subprocess.run(["scontrol", *args], check=True, capture_output=True, text=True)


def _reps(campaign: Path) -> dict[str, list[int]]:
    reps: dict[str, list[int]] = {}
    for record in campaign_records(campaign):
        reps.setdefault(record["case_id"], []).append(record["rep"])
    return reps


FLAKY_KERNEL = """#!/bin/bash
# The real kernel, except that one case on partition smt fails once (a crashing kernel).
if [[ " $* " == *" --threads 1 "* && " $* " == *" --samples 150000002 "* ]] \\
   && [[ "$SLURM_JOB_PARTITION" == smt ]] && mkdir {mark} 2>/dev/null; then
  echo "injected kernel failure" >&2; exit 3
fi
exec {real} "$@"
"""


def _flaky_bin_dir(tmp_path: Path, bin_dir: Path) -> Path:
    flaky = tmp_path / "bin"
    flaky.mkdir()
    kernel = flaky / "mcpi-c-omp"
    kernel.write_text(FLAKY_KERNEL.format(mark=tmp_path / "failed-once", real=bin_dir / "mcpi-c-omp"))
    kernel.chmod(0o755)
    return flaky


def test_kill_cancel_drain_fail_then_resume_completes_exactly_once(slurm_cluster, tmp_path, bin_dir):
    # Array tasks inherit the submitting environment, so they run the flaky kernel.
    env = {**os.environ, "SCALEBENCH_BIN_DIR": str(_flaky_bin_dir(tmp_path, bin_dir))}
    results = tmp_path / "results"
    submit = ["submit", HERE / "faults.toml", "--throttle", "1", "--name", "faults", "--results-dir", results]
    proc = scalebench(*submit, env=env)
    assert proc.returncode == 0, proc.stderr
    campaign = results / "faults"
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    core = [c["index"] for c in cases if c["node_type"] == "tc-core"]
    smt = [c["index"] for c in cases if c["node_type"] == "tc-smt"]
    [crashing] = [
        c["index"]
        for c in cases
        if c["node_type"] == "tc-smt" and c["threads"] == 1 and c["params"]["samples"] == 150000002
    ]
    arrays = {s["node_type"]: s["job_id"] for s in submissions(campaign) if s["kind"] == "array"}
    first_analysis = next(s["job_id"] for s in submissions(campaign) if s["kind"] == "analysis")

    # Drain the smt node: its running task may finish, the rest must wait.
    _scontrol("update", "NodeName=tc-smt-n1", "State=DRAIN", "Reason=scalebench-fault-test")
    try:
        # Kill the first core case mid-run, once it has had time to start a repetition.
        victim = core[0]
        pid = wait_for(lambda: _run_case_pid(campaign, victim), 60, f"run-case of case {victim} to start")
        wait_for(lambda: (campaign / "raw" / cases[victim]["case_id"]).is_dir(), 30, "its raw directory")
        os.kill(pid, signal.SIGKILL)
        # Cancel the last two core cases while they are still pending.
        cancelled = core[-2:]
        subprocess.run(["scancel", *(f"{arrays['tc-core']}_{i}" for i in cancelled)], check=True)

        # The core array drains; the smt cases still queued are reported as such and block resume.
        wait_for(lambda: queue_empty_for([arrays["tc-core"]]), 90, "the core array to leave the queue")
        queued = queue_states(campaign)
        waiting = [i for i in smt if queued.get(i) == "PENDING"]
        assert waiting, f"no smt case pending while the node is drained: {queued}"
        status = scalebench("status", campaign, "--all")
        assert status.returncode == 1, status.stderr  # incomplete
        assert "PENDING" in status.stdout
        refused = scalebench("resume", campaign, env=env)
        assert refused.returncode != 0
        assert "still in the Slurm queue" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    finally:
        _scontrol("update", "NodeName=tc-smt-n1", "State=RESUME")

    wait_for(lambda: queue_empty_for([*arrays.values(), first_analysis]), 120, "the first round to finish")
    states = {s["index"]: s for s in _case_states(campaign)}
    unfinished = sorted(i for i, s in states.items() if s["state"] != "done")
    assert set(unfinished) == {victim, *cancelled, crashing}
    assert states[crashing]["state"] == "failed"
    assert "exit status 3" in states[crashing]["reason"]
    status = scalebench("status", campaign, "--all")
    for state in {states[i]["state"] for i in unfinished}:
        assert state in status.stdout
    stored = [*campaign.glob("raw/*/facts.jsonl"), *campaign.glob("raw/*/reps*.csv")]
    before = {p: p.read_bytes() for p in stored}

    resumed = scalebench("resume", campaign, "--throttle", "2", env=env)
    assert resumed.returncode == 0, resumed.stderr
    round2 = [s for s in submissions(campaign) if s.get("round") == 2]
    assert sorted(i for s in round2 if s["kind"] == "array" for i in s["indices"]) == unfinished
    analysis2 = next(s["job_id"] for s in round2 if s["kind"] == "analysis")
    wait_for(lambda: any(j.get("JobId") == analysis2 for j in jobcomp(slurm_cluster)), 120, "resume analysis")

    assert all(s["state"] == "done" for s in _case_states(campaign))
    reps = _reps(campaign)
    for case in cases:
        assert sorted(reps[case["case_id"]]) == list(range(case["reps"]))  # each repetition once
    # What was recorded before resume (including reps of the killed case) is kept byte for byte: the
    # record files were only appended to.
    assert all(path.read_bytes().startswith(data) for path, data in before.items())


def _case_states(campaign: Path) -> list[dict]:
    from jobs.status import case_states

    return case_states(campaign)
