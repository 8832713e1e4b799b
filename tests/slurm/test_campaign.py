"""A whole campaign through the real test cluster: submit, array tasks, records, dependent analysis job."""

import csv
import json
from pathlib import Path

import pytest

from jobs.slurm.arrayspec import parse_array_spec
from tests.records import campaign_records

from .conftest import HERE, jobcomp, scalebench, submissions, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

# What tests/slurm/tiny.toml and config/nodes.toml promise: node type -> (partition, Slurm node name).
PLACES = {"tc-core": ("core", "tc-core-n1"), "tc-smt": ("smt", "tc-smt-n1")}


def _records(campaign: Path) -> list[dict]:
    return campaign_records(campaign)


def _wait_analysis_done(cluster, campaign: Path, timeout: float = 150) -> dict:
    analysis = [s for s in submissions(campaign) if s["kind"] == "analysis"][-1]
    return wait_for(
        lambda: next((j for j in jobcomp(cluster) if j.get("JobId") == analysis["job_id"]), None),
        timeout,
        f"analysis job {analysis['job_id']} to finish",
    )


def test_campaign_runs_as_arrays_then_analysis(slurm_cluster, tmp_path):
    proc = scalebench(
        "submit", HERE / "tiny.toml", "--node-types", "tc-core,tc-smt", "--throttle", "2",
        "--name", "tiny", "--results-dir", tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "tiny"
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    assert len(cases) >= 12
    subs = submissions(campaign)
    arrays = [s for s in subs if s["kind"] == "array"]
    assert sorted(s["node_type"] for s in arrays) == ["tc-core", "tc-smt"]
    for s in arrays:
        # The array spec Slurm got covers exactly this node type's cases, with the throttle.
        assert s["array"].endswith("%2")
        assert parse_array_spec(s["array"]) == [c["index"] for c in cases if c["node_type"] == s["node_type"]]
        assert s["job_id"] in proc.stdout
    [analysis] = [s for s in subs if s["kind"] == "analysis"]
    assert analysis["depends_on"] == [s["job_id"] for s in arrays]

    finished = _wait_analysis_done(slurm_cluster, campaign)

    by_job = {s["job_id"]: s for s in arrays}
    records = _records(campaign)
    assert len(records) == sum(c["reps"] for c in cases)
    seen = set()
    for rec in records:
        case = cases[rec["case_index"]]
        partition, node = PLACES[case["node_type"]]
        assert rec["status"] == "ok"
        assert rec["node_type"] == case["node_type"]
        assert rec["slurm"]["partition"] == partition
        assert rec["slurm"]["node"] == node
        assert by_job[rec["slurm"]["array_job_id"]]["node_type"] == case["node_type"]
        assert int(rec["slurm"]["array_task_id"]) == case["index"]
        seen.add((case["case_id"], rec["rep"]))
    assert len(seen) == len(records)

    # Every array task ended before the analysis job started (jobcomp: one-second resolution).
    tasks = [j for j in jobcomp(slurm_cluster) if j.get("ArrayJobId") in by_job]
    assert len(tasks) == len(cases)
    assert all(j["JobState"] == "COMPLETED" for j in tasks)
    assert finished["StartTime"] >= max(j["EndTime"] for j in tasks)
    logs = sorted(p.name for p in (campaign / "logs").glob("analysis-*.out"))
    assert logs == [f"analysis-{analysis['job_id']}.out"]

    # The dependent analysis compared the two node types: every case of one has its twin on the other.
    with (campaign / "analysis" / "node_types.csv").open() as table:
        pairs = list(csv.DictReader(table))
    assert len(pairs) == len(cases) // 2
    assert {(p["node_type_a"], p["node_type_b"]) for p in pairs} == {("tc-core", "tc-smt")}
    report = (campaign / "analysis" / "report.md").read_text()
    assert [line for line in report.splitlines() if line.startswith("## ")][:2] == [
        "## Findings",
        "## Node types",
    ]

    status = scalebench("status", campaign)
    assert status.returncode == 0, status.stderr
    for node_type in PLACES:
        assert node_type in status.stdout

    nothing = scalebench("resume", campaign)
    assert nothing.returncode == 0, nothing.stderr
    assert "nothing to resume" in nothing.stdout
    assert len(submissions(campaign)) == len(subs)


@pytest.mark.mpi
def test_mpi_case_runs_through_srun(slurm_cluster, tmp_path, bin_dir):
    if not (bin_dir / "mcpi-c-mpi").exists():
        pytest.fail(f"{bin_dir / 'mcpi-c-mpi'} is not built (make kernels builds the MPI kernels)")
    proc = scalebench(
        "submit", HERE / "mpi.toml", "--name", "mpi", "--results-dir", tmp_path, "--throttle", "1"
    )
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "mpi"
    script = (campaign / "jobs" / "array-tc-core.sbatch").read_text()
    assert "#SBATCH --ntasks=2\n" in script
    _wait_analysis_done(slurm_cluster, campaign)
    [record] = _records(campaign)
    assert record["status"] == "ok", record.get("reason")
    assert record["ranks"] == 2
    assert len(record["rank_wall_s"]) == 2
    assert record["command"][:6] == ["srun", "--mpi=pmix", "-n", "2", "-c", "1"]
    assert record["slurm"]["partition"] == "core"


@pytest.mark.mpi
def test_a_users_mpi_program_runs_as_an_array_task_through_srun(slurm_cluster, tmp_path, bin_dir):
    """A user's program (here the MPI π kernel run as a plain program) through the same Slurm path: the
    array task's program-run starts it with srun, and its record carries the figure from its output."""
    experiment = tmp_path / "own-mpi.toml"
    experiment.write_text(
        f"""
description = "a user's MPI program through srun"
node_types = ["tc-core"]
repetitions = 1
warmup = 0
timeout_s = 60

[programs.pi]
command = ["{bin_dir / "mcpi-c-mpi"}", "--samples", "2000000", "--seed", "3"]
runtime = "mpi"
figure = {{ json = "wall_s", unit = "s" }}
result = {{ json = "checksum" }}

[[sweep]]
program = "pi"
ranks = [2]
"""
    )
    proc = scalebench("submit", experiment, "--name", "own-mpi", "--results-dir", tmp_path, "--throttle", "1")
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "own-mpi"
    assert "#SBATCH --ntasks=2\n" in (campaign / "jobs" / "array-tc-core.sbatch").read_text()
    _wait_analysis_done(slurm_cluster, campaign)
    [record] = _records(campaign)
    assert record["status"] == "ok", record.get("reason")
    assert record["lang"] == "program" and record["ranks"] == 2 and record["slurm"]["partition"] == "core"
    assert record["result"]["argv"][:6] == ["srun", "--mpi=pmix", "-n", "2", "-c", "1"]
    assert 0 < record["wall_s"] < record["process_wall_s"]  # the figure: the program's own region time
    # srun's ranks are children of Slurm's step daemon, not of the launcher: no per-worker times then
    assert record["pop_method"] == "none (workers not seen)" and record["placement"] == [[-1, -1]]
