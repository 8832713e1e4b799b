"""kill -9 of the runner mid-campaign, then run --resume: every repetition done exactly once, the records
written before the kill untouched, nothing duplicated."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.records import campaign_records, case_records

from .conftest import ROOT

EXPERIMENT = """
description = "kill and resume"
repetitions = 3
warmup = 0
seed = 3
[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [5000000], seed = [1, 2] }
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [1, 2]
params = { samples = [5000000] }
"""


def record_files(campaign):
    """The stored records' files (facts.jsonl and reps.csv of each case)."""
    return sorted([*(campaign / "raw").glob("*/facts.jsonl"), *(campaign / "raw").glob("*/reps*.csv")])


def n_records(campaign) -> int:
    return len(campaign_records(campaign)) if (campaign / "raw").is_dir() else 0


@pytest.mark.slow
def test_sigkill_then_resume_completes_each_repetition_once(tmp_path, bin_dir):
    experiment = tmp_path / "kill.toml"
    experiment.write_text(EXPERIMENT)
    campaign = tmp_path / "res" / "k"
    scalebench = [sys.executable, str(ROOT / "scalebench")]
    runner = subprocess.Popen(
        [
            *scalebench,
            "run",
            str(experiment),
            "--results-dir",
            str(tmp_path / "res"),
            "--name",
            "k",
            "--no-progress",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ((campaign / "raw").is_dir() and n_records(campaign) >= 3):
        time.sleep(0.02)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    done_before = n_records(campaign)
    before = {path: path.read_bytes() for path in record_files(campaign)}
    assert 3 <= done_before < 12, "the kill must land mid-campaign"

    resume = subprocess.run(
        [*scalebench, "run", "--resume", str(campaign), "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resume.returncode == 0, resume.stderr
    assert f"{12 - done_before} repetitions ran, 0 failed" in resume.stdout

    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    assert n_records(campaign) == 12
    for case in cases:
        records = case_records(campaign, case["case_id"])
        assert sorted(r["rep"] for r in records) == [0, 1, 2]  # each repetition once
        for record in records:
            assert (record["status"], record["case_id"]) == ("ok", case["case_id"])
    for path, content in before.items():  # appended to, never rewritten: what was there is still there
        assert path.read_bytes().startswith(content), f"{path} was rewritten"
    status = subprocess.run([*scalebench, "status", str(campaign)], cwd=ROOT, capture_output=True, text=True)
    assert status.stdout.splitlines()[2].split() == ["workstation", "4", "0", "0", "0", "12/12"]
