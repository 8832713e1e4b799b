"""Bad input and a broken Slurm: one line on stderr, non-zero exit, nothing planned or left queued."""

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import HERE, ROOT, queue_empty_for, scalebench, submissions, wait_for

pytestmark = pytest.mark.slurm

TINY = HERE / "tiny.toml"


def _one_line_error(proc, code: int, *fragments: str) -> None:
    assert proc.returncode == code, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def _nothing_planned(results: Path) -> None:
    assert not results.exists() or not any(results.iterdir()), list(results.iterdir())


@pytest.mark.parametrize(
    ("node_types", "fragments"),
    [
        ("tc-core,nosuch", ["--node-types: 'nosuch' is not in", "nodes.toml", "known: "]),
        ("workstation", ["node_types.workstation has no partition or constraint"]),
    ],
)
def test_node_type_errors_are_usage_errors(tmp_path, node_types, fragments):
    proc = scalebench(
        "submit", TINY, "--node-types", node_types, "--dry-run", "--results-dir", tmp_path / "r"
    )
    _one_line_error(proc, 2, *fragments)
    _nothing_planned(tmp_path / "r")


def test_bad_throttle_is_a_usage_error(tmp_path):
    proc = scalebench("submit", TINY, "--throttle", "0", "--dry-run", "--results-dir", tmp_path)
    assert proc.returncode == 2
    assert "--throttle: 0: must be >= 1" in proc.stderr


def test_resume_of_unknown_campaign(tmp_path):
    proc = scalebench("resume", tmp_path / "nope")
    _one_line_error(proc, 2, "not a campaign directory")


def test_no_sbatch_on_path(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    proc = scalebench("submit", TINY, "--results-dir", tmp_path / "r", env=env)
    _one_line_error(proc, 3, "sbatch not found on PATH")
    _nothing_planned(tmp_path / "r")


def test_controller_unreachable(slurm_cluster, tmp_path):
    conf = tmp_path / "slurm.conf"
    # Same cluster, but a controller port nothing listens on.
    text = slurm_cluster.conf.read_text()
    # (a client gives up on a controller after MessageTimeout, 10 s by default: 2 s here)
    dead = text.replace(f"SlurmctldPort={slurm_cluster.port_base}\n", "SlurmctldPort=9\n")
    conf.write_text(f"{dead}MessageTimeout=2\n")
    proc = scalebench(
        "submit", TINY, "--results-dir", tmp_path / "r", env={**os.environ, "SLURM_CONF": str(conf)}
    )
    _one_line_error(proc, 3, "Slurm controller unreachable: Slurmctld(primary) at", "is DOWN")
    _nothing_planned(tmp_path / "r")


def test_missing_slurm_conf_fails_at_once(tmp_path):
    env = {**os.environ, "SLURM_CONF": str(tmp_path / "none.conf")}
    proc = scalebench("submit", TINY, "--results-dir", tmp_path / "r", env=env, timeout=20)
    _one_line_error(proc, 3, f"SLURM_CONF={tmp_path / 'none.conf'}: no such file")


def _scontrol(*args: str) -> None:
    subprocess.run(["scontrol", *args], check=True, capture_output=True, text=True)


def _queue_is_empty() -> bool:
    out = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, check=True)
    return not out.stdout.strip()


def test_unknown_partition(slurm_cluster, tmp_path):
    wait_for(_queue_is_empty, 120, "an empty queue before removing a partition")
    _scontrol("delete", "PartitionName=smt")
    try:
        proc = scalebench("submit", TINY, "--results-dir", tmp_path / "r")
    finally:
        _scontrol("create", "PartitionName=smt", "Nodes=tc-smt-n1", "MaxTime=INFINITE", "State=UP")
    _one_line_error(
        proc, 3, "node type tc-smt: Slurm rejects it", "--partition=smt", "Invalid partition name"
    )
    _nothing_planned(tmp_path / "r")
    assert _queue_is_empty()


def test_unknown_constraint(slurm_cluster, tmp_path):
    _scontrol("update", "NodeName=tc-smt-n1", "AvailableFeatures=other", "ActiveFeatures=other")
    try:
        proc = scalebench("submit", TINY, "--results-dir", tmp_path / "r")
    finally:
        _scontrol("update", "NodeName=tc-smt-n1", "AvailableFeatures=smt", "ActiveFeatures=smt")
    _one_line_error(proc, 3, "node type tc-smt: no Slurm node matches --partition=smt --constraint=smt")
    _nothing_planned(tmp_path / "r")


FLAKY_SBATCH = """#!/bin/bash
# Real sbatch, except that the second real submission fails once (validation calls pass through).
case " $* " in *" --test-only "*) exec /usr/bin/sbatch "$@";; esac
n=$(( $(cat "$FLAKY_COUNT" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FLAKY_COUNT"
if [ "$n" -eq 2 ]; then echo "sbatch: error: Batch job submission failed: injected fault" >&2; exit 1; fi
exec /usr/bin/sbatch "$@"
"""


def test_failing_later_sbatch_cancels_what_was_submitted(slurm_cluster, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "sbatch").write_text(FLAKY_SBATCH)
    (bindir / "sbatch").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "FLAKY_COUNT": str(tmp_path / "count")}
    proc = scalebench("submit", TINY, "--name", "flaky", "--results-dir", tmp_path / "r", env=env)
    [first] = [s["job_id"] for s in submissions(tmp_path / "r" / "flaky")]
    _one_line_error(proc, 3, "injected fault", f"cancelled the array jobs already submitted: {first}")
    wait_for(lambda: queue_empty_for([first]), 30, f"cancelled array {first} to leave the queue")
    assert not list((tmp_path / "r" / "flaky" / "raw").iterdir())


def test_drained_node_type_is_a_warning_not_an_error(slurm_cluster, tmp_path):
    # Slurm's --test-only rejects a node type whose nodes are all drained; a real sbatch would queue.
    _scontrol("update", "NodeName=tc-smt-n1", "State=DRAIN", "Reason=scalebench-test")
    try:
        proc = scalebench("submit", TINY, "--node-types", "tc-smt", "--name", "d", "--results-dir", tmp_path)
        ids = [s["job_id"] for s in submissions(tmp_path / "d")] if proc.returncode == 0 else []
        subprocess.run(["scancel", *ids], check=False)
    finally:
        _scontrol("update", "NodeName=tc-smt-n1", "State=RESUME")
    assert proc.returncode == 0, proc.stderr
    assert "warning: node type tc-smt: all 1 node(s) are drained or down now" in proc.stdout
    assert len(ids) == 2
    wait_for(lambda: queue_empty_for(ids), 30, "the cancelled jobs to leave the queue")


def test_corrupt_submissions_log_is_named(tmp_path):
    proc = scalebench(
        "submit", TINY, "--node-types", "tc-core", "--dry-run", "--name", "c", "--results-dir", tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    log = tmp_path / "c" / "jobs" / "submissions.jsonl"
    log.write_text('{"job_id": "12", "kind": "array", "indices": [0]}\n{"job_id": \n')
    proc = scalebench("status", tmp_path / "c")
    _one_line_error(proc, 2, f"{log}:2: not valid JSON")


def test_status_without_a_controller_still_reports_the_files(slurm_cluster, tmp_path):
    proc = scalebench(
        "submit", TINY, "--node-types", "tc-core", "--dry-run", "--name", "q", "--results-dir", tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "q"
    # A submission log pointing at a job id, and a controller nobody answers on.
    (campaign / "jobs" / "submissions.jsonl").write_text(
        '{"node_type": "tc-core", "job_id": "4242", "kind": "array", "indices": [0]}\n'
    )
    conf = tmp_path / "slurm.conf"
    text = slurm_cluster.conf.read_text()
    # (a client gives up on a controller after MessageTimeout, 10 s by default: 2 s here)
    dead = text.replace(f"SlurmctldPort={slurm_cluster.port_base}\n", "SlurmctldPort=9\n")
    conf.write_text(f"{dead}MessageTimeout=2\n")
    proc = scalebench("status", campaign, env={**os.environ, "SLURM_CONF": str(conf)})
    assert proc.returncode == 1, proc.stderr  # incomplete
    assert "tc-core" in proc.stdout and "missing" in proc.stdout
    warning = proc.stderr.strip().splitlines()
    assert len(warning) == 1 and "no Slurm queue states" in warning[0], proc.stderr
    # resume, which must not double-submit, still refuses without the queue
    proc = scalebench("resume", campaign, env={**os.environ, "SLURM_CONF": str(conf)})
    assert proc.returncode != 0


@pytest.mark.parametrize("how", ["name", "experiment file"])
def test_s1_newline_in_campaign_name_runs_nothing_on_the_cluster(slurm_cluster, tmp_path, how):
    """A campaign name (from --name or from the experiment file's name) with a newline used to become a
    shell command in the array job; now it is refused before anything is planned or submitted."""
    work = tmp_path / "work"
    work.mkdir()
    if how == "name":
        args = [TINY, "--name", "slinj\ntouch pwned-slurm-campname #"]
    else:
        experiment = work / "exp\ntouch pwned #.toml"
        experiment.write_text(TINY.read_text())
        args = [experiment]
    before = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    proc = scalebench("submit", *args, "--results-dir", tmp_path / "r")
    _one_line_error(proc, 2, "not a valid name")
    _nothing_planned(tmp_path / "r")
    after = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    assert after == before
    assert not list(ROOT.glob("pwned*")) and not list(work.glob("pwned*"))
