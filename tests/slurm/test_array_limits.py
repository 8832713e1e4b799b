"""Campaigns larger than MaxArraySize on the real test cluster: every array accepted, tasks map to cases.

The 2,500-case campaign is submitted held (--hold), checked in the queue and cancelled: nothing runs.
The split campaign (MaxArraySize=5 on a second cluster) runs to completion, with a cancelled task resumed.
"""

import re
import subprocess
from pathlib import Path

import pytest

from jobs.slurm.arrayspec import parse_array_spec
from jobs.slurm.queue import queue_states
from tests.records import campaign_records

from .conftest import HERE, jobcomp, queue_empty_for, scalebench, submissions, wait_for

pytestmark = pytest.mark.slurm


def _experiment(path: Path, cases: int) -> Path:
    samples = ", ".join(str(1000 + i) for i in range(cases))
    path.write_text(
        'description = "array limits: many tiny cases"\nnode_types = ["tc-core"]\n'
        "repetitions = 1\nwarmup = 0\ntimeout_s = 30\n"
        '[[sweep]]\nbinary = ["mcpi-c-omp"]\nthreads = [1]\n'
        f"params = {{ samples = [{samples}], seed = [1] }}\n"
    )
    return path


def _task_ids(job_id: str, env=None) -> list[tuple[str, int]]:
    """(array job id, task id) of every queued task of an array job, as squeue lists them."""
    out = subprocess.run(
        ["squeue", "-h", "--array", "-j", job_id, "-o", "%F|%K"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return [(a, int(t)) for a, t in (line.split("|") for line in out.split()) if t.isdigit()]


def test_2500_cases_split_below_default_max_array_size_all_accepted(slurm_cluster, tmp_path):
    exp = _experiment(tmp_path / "many.toml", 2500)
    proc = scalebench(
        "submit", exp, "--name", "many", "--results-dir", tmp_path / "results",
        "--sbatch-option=--hold", "--sbatch-option=--comment=held by the test", timeout=300,
    )  # fmt: skip
    campaign = tmp_path / "results" / "many"
    try:
        assert proc.returncode == 0, proc.stderr
        assert "MaxArraySize=1001" in proc.stdout  # read from the live controller
        subs = submissions(campaign)
        arrays = [s for s in subs if s["kind"] == "array"]
        assert [s["task_offset"] for s in arrays] == [0, 1001, 2002]
        covered = []
        for s in arrays:
            tasks = _task_ids(s["job_id"])
            ids = sorted(t for _, t in tasks)
            # Slurm accepted every task, every task id is below MaxArraySize, and the offset maps back.
            assert ids == parse_array_spec(s["array"]) and max(ids) < 1001
            assert [t + s["task_offset"] for t in ids] == s["indices"]
            covered += s["indices"]
        assert covered == list(range(2500))
        states = queue_states(campaign)
        assert sorted(states) == list(range(2500)) and set(states.values()) == {"PENDING"}
        [analysis] = [s for s in subs if s["kind"] == "analysis"]
        assert analysis["depends_on"] == [s["job_id"] for s in arrays]
        shown = subprocess.run(
            ["scontrol", "show", "job", analysis["job_id"]], capture_output=True, text=True, check=True
        ).stdout
        for s in arrays:
            assert f"afterany:{s['job_id']}" in shown
        task0 = f"{arrays[0]['job_id']}_0"
        first = subprocess.run(["scontrol", "show", "job", task0], capture_output=True, text=True).stdout
        assert "Comment=held by the test" in first and "TimeLimit=00:03:00" in first
    finally:
        ids = [s["job_id"] for s in submissions(campaign)] if (campaign / "jobs").exists() else []
        subprocess.run(["scancel", *ids], check=False)
        wait_for(lambda: not ids or queue_empty_for(ids), 30, "the held jobs to leave the queue")


def _records(campaign: Path) -> list[dict]:
    return campaign_records(campaign)


def test_split_campaign_runs_and_resumes_a_cancelled_task(small_array_cluster, tmp_path):
    env = small_array_cluster.client_env()
    proc = scalebench(
        "submit", HERE / "split.toml", "--throttle", "5", "--name", "split", "--results-dir", tmp_path,
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "split"
    arrays = [s for s in submissions(campaign) if s["kind"] == "array"]
    assert [(s["node_type"], s["task_offset"], s["indices"]) for s in arrays] == [
        ("tc-core", 0, [0, 1, 2, 3, 4]),
        ("tc-core", 5, [5]),
        ("tc-smt", 6, [6, 7, 8, 9, 10]),
        ("tc-smt", 11, [11]),
    ]
    # Task 3 of the tc-smt array with offset 6 is case 9; it waits behind tasks 0-2 on the exclusive node.
    smt = arrays[2]["job_id"]
    subprocess.run(["scancel", f"{smt}_3"], env=env, check=True)
    ids = [s["job_id"] for s in arrays]
    wait_for(lambda: queue_empty_for_env(ids, env), 180, "the split arrays to finish")
    done = {r["case_index"] for r in _records(campaign)}
    assert 9 not in done and done == set(range(12)) - {9}

    proc = scalebench("resume", campaign, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "resubmitting 1 of 12 case(s) (0 failed, 1 missing): 9" in proc.stdout
    [resumed] = [s for s in submissions(campaign) if s["kind"] == "array" and s["round"] == 2]
    assert (resumed["indices"], resumed["task_offset"], resumed["array"]) == ([9], 9, "0%4")
    analysis = [s for s in submissions(campaign) if s["kind"] == "analysis"][-1]["job_id"]
    wait_for(
        lambda: any(j.get("JobId") == analysis for j in jobcomp(small_array_cluster)), 120, "the analysis job"
    )
    records = _records(campaign)
    # Every case done, each repetition exactly once; case 9 by the resumed array's task 0.
    done_reps = sorted((r["case_index"], r["rep"]) for r in records)
    assert done_reps == [(i, 0) for i in range(12)]
    for r in records:
        if r["case_index"] == 9:
            assert (r["slurm"]["array_job_id"], r["slurm"]["array_task_id"]) == (resumed["job_id"], "0")
    status = scalebench("status", campaign, env=env)
    assert re.search(r"tc-smt\s+6\s+0\s+0", status.stdout), status.stdout
    assert "not submitted yet" not in status.stdout


def queue_empty_for_env(job_ids: list[str], env: dict) -> bool:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-j", ",".join(job_ids), "-o", "%i"], capture_output=True, text=True, env=env
    )
    return out.returncode != 0 or not out.stdout.strip()


def test_submit_limit_submits_a_batch_and_resume_the_rest(slurm_cluster, tmp_path, monkeypatch):
    """Room for 5 jobs (the cluster has no accounting DB, so the limit is set here): 4 cases plus the
    analysis job go now, held; status names the 8 waiting; resume submits them while the 4 still queue."""
    import io

    from jobs.site_options import SiteOptions
    from jobs.slurm import rounds
    from jobs.slurm.resume import resume_campaign
    from jobs.slurm.submit import submit_experiment

    held = SiteOptions(sbatch_options=("--hold",))
    monkeypatch.setattr(rounds, "submit_budget", lambda limits: 5)
    out = io.StringIO()
    campaign = submit_experiment(
        HERE / "tiny.toml", ["tc-core", "tc-smt"], 4, False, "batch", tmp_path, out=out, site=held
    )
    try:
        first = [s for s in submissions(campaign) if s["kind"] == "array"]
        assert [i for s in first for i in s["indices"]] == [0, 1, 2, 3]
        assert "8 case(s) not submitted yet (4-11)" in out.getvalue()
        status = scalebench("status", campaign)
        assert "not submitted yet (submit limit): 8 case(s)" in status.stdout, status.stdout

        monkeypatch.setattr(rounds, "submit_budget", lambda limits: None)
        out = io.StringIO()
        resume_campaign(campaign, 4, False, out=out, site=held)
        assert (
            "4 case(s) still in the Slurm queue; submitting the 8 case(s) not submitted yet" in out.getvalue()
        )
        assert sorted(queue_states(campaign)) == list(range(12))
        assert "not submitted yet" not in scalebench("status", campaign).stdout
    finally:
        ids = [s["job_id"] for s in submissions(campaign)]
        subprocess.run(["scancel", *ids], check=False)
        wait_for(lambda: queue_empty_for(ids), 30, "the held jobs to leave the queue")
