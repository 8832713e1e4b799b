"""kill -9 of the runner mid-campaign, then run --resume: every repetition done exactly once, the records
written before the kill untouched, nothing duplicated."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

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


def rep_files(campaign):
    return sorted((campaign / "raw").glob("*/rep-*.json"))


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
    while time.monotonic() < deadline and not ((campaign / "raw").is_dir() and len(rep_files(campaign)) >= 3):
        time.sleep(0.02)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    before = {path: path.read_bytes() for path in rep_files(campaign)}
    assert 3 <= len(before) < 12, "the kill must land mid-campaign"

    resume = subprocess.run(
        [*scalebench, "run", "--resume", str(campaign), "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resume.returncode == 0, resume.stderr
    assert f"{12 - len(before)} repetitions ran, 0 failed" in resume.stdout

    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    after = rep_files(campaign)
    assert len(after) == 12
    for case in cases:
        directory = campaign / "raw" / case["case_id"]
        assert sorted(p.name for p in directory.glob("rep-*")) == ["rep-0.json", "rep-1.json", "rep-2.json"]
        for k in range(3):
            record = json.loads((directory / f"rep-{k}.json").read_text())
            assert (record["status"], record["rep"], record["case_id"]) == ("ok", k, case["case_id"])
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path} was rewritten"
    status = subprocess.run([*scalebench, "status", str(campaign)], cwd=ROOT, capture_output=True, text=True)
    assert status.stdout.splitlines()[2].split() == ["workstation", "4", "0", "0", "0", "12/12"]
