"""Dry-run scripts and commands against golden files (paths and times normalised), and shell quoting.

Regenerate after an intended change with SB_UPDATE_GOLDEN=1, then read the diff before committing.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from jobs.slurm.arrayspec import format_array_spec, parse_array_spec
from sbcore.layout import STORED_FILES
from tests.records import case_records

from .conftest import HERE, ROOT, scalebench

GOLDEN = HERE / "golden"
TINY = HERE / "tiny.toml"


def _normalise(text: str, results: Path) -> str:
    text = text.replace(str(results), "<RESULTS>").replace(str(ROOT), "<ROOT>")
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<UTC>", text)


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SB_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from {path} (SB_UPDATE_GOLDEN=1 rewrites it)"


def _slurm_free_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}


def test_submit_and_resume_dry_run_match_golden(tmp_path):
    env = _slurm_free_env()
    proc = scalebench(
        "submit", TINY, "--node-types", "tc-core,tc-smt", "--throttle", "3", "--dry-run",
        "--name", "golden", "--results-dir", tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "golden"
    _check("submit-dry-run.txt", _normalise(proc.stdout, tmp_path))
    for script in ("array-tc-core.sbatch", "array-tc-smt.sbatch", "analysis.sbatch"):
        _check(script, _normalise((campaign / "jobs" / script).read_text(), tmp_path))
    assert not (campaign / "jobs" / "submissions.jsonl").exists()

    # Complete three cases for real (locally), so resume has a non-contiguous index list per node type.
    for index in (1, 2, 7):
        run = scalebench("run-case", campaign, index, env=env)
        assert run.returncode == 0, run.stderr
    proc = scalebench("resume", campaign, "--throttle", "3", "--dry-run", env=env)
    assert proc.returncode == 0, proc.stderr
    _check("resume-dry-run.txt", _normalise(proc.stdout, tmp_path))
    _check(
        "resume1-array-tc-core.sbatch",
        _normalise((campaign / "jobs" / "resume1-array-tc-core.sbatch").read_text(), tmp_path),
    )
    for script in (campaign / "jobs").glob("*.sbatch"):
        subprocess.run(["bash", "-n", str(script)], check=True)


def test_split_dry_run_with_site_options_matches_golden(tmp_path):
    """MaxArraySize 5 cuts 6 cases per node type into 5 + 1; site options land quoted in every script."""
    env = _slurm_free_env()
    proc = scalebench(
        "submit", TINY, "--node-types", "tc-core,tc-smt", "--dry-run", "--max-array-size", "5",
        "--name", "split", "--results-dir", tmp_path, "--account", "proj-1", "--qos", "normal",
        "--mem", "4G", "--reservation", "maint", "--sbatch-option=--comment=two words",
        "--sbatch-option=--requeue", env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    jobs = tmp_path / "split" / "jobs"
    _check("submit-split-dry-run.txt", _normalise(proc.stdout, tmp_path))
    for script in ("array-tc-smt-1.sbatch", "array-tc-smt-2.sbatch", "analysis.sbatch"):
        _check(f"split-{script}", _normalise((jobs / script).read_text(), tmp_path))
    # The offset script runs case 11 for task 0 (checked by bash, without Slurm).
    line = (jobs / "array-tc-smt-2.sbatch").read_text().splitlines()[-1].replace("exec ", "echo ")
    ran = subprocess.run(
        ["bash", "-c", line], env={**env, "SLURM_ARRAY_TASK_ID": "0"}, capture_output=True, text=True
    )
    assert ran.stdout.split()[-1] == "11"


def test_scripts_quote_awkward_paths(tmp_path):
    """A results directory with a space and a quote: the script still runs the right case, right place."""
    results = tmp_path / "it's a dir"
    env = _slurm_free_env()
    proc = scalebench(
        "submit",
        TINY,
        "--node-types",
        "tc-core",
        "--dry-run",
        "--name",
        "q",
        "--results-dir",
        results,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    script = results / "q" / "jobs" / "array-tc-core.sbatch"
    assert (
        "#SBATCH --output='" + str(results).replace("'", "'\"'\"'") + "/q/logs/%A_%a.out'"
        in script.read_text()
    )
    run = subprocess.run(
        ["bash", str(script)],
        env={**env, "SLURM_ARRAY_TASK_ID": "4"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    cases = (results / "q" / "cases.jsonl").read_text().splitlines()
    case_id = re.search(r'"case_id": "(\w+)"', cases[4]).group(1)
    written = {p.name for p in (results / "q" / "raw" / case_id).iterdir()}
    assert {"facts.jsonl", "probes.jsonl", "reps.csv"} <= written <= set(STORED_FILES), written
    assert sorted(r["rep"] for r in case_records(results / "q", case_id)) == [0, 1]


@pytest.mark.parametrize(
    ("indices", "spec"),
    [
        ([5], "5"),
        ([0, 1, 2, 3], "0-3"),
        ([3, 5], "3,5"),
        ([0, 1, 2, 3, 7, 9, 11, 13, 20], "0-3,7-13:2,20"),
        ([9, 8, 7, 7, 1], "1,7-9"),
        ([0, 3, 4, 5], "0,3-5"),
    ],
)
def test_array_spec_examples(indices, spec):
    assert format_array_spec(indices) == spec
    assert parse_array_spec(spec + "%4") == sorted(set(indices))


def test_array_spec_round_trip_on_many_sets():
    import random

    rng = random.Random(5)
    for _ in range(300):
        indices = sorted(rng.sample(range(200), rng.randint(1, 60)))
        assert parse_array_spec(format_array_spec(indices)) == indices
