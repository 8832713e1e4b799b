"""The smoke campaign for real: real kernels, real likwid-pin, through the CLI."""

import json
from collections import defaultdict

import pytest

from .conftest import ROOT, run_cli


@pytest.mark.slow
def test_smoke_campaign(tmp_path, bin_dir):
    results = tmp_path / "res"
    run = run_cli(
        "run", ROOT / "config" / "experiments" / "smoke.toml", "--results-dir", results, "--name", "s"
    )
    assert run.returncode == 0, run.stderr
    campaign = results / "s"
    assert f"campaign directory: {campaign}" in run.stdout
    assert f"./scalebench analyze {campaign}" in run.stdout
    assert "12/12" in run.stderr and ("rep/s" in run.stderr or "s/rep" in run.stderr)  # tqdm: rate, ETA

    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 6
    checksums = defaultdict(set)
    for case in cases:
        for k in range(case["reps"]):
            record = json.loads((campaign / "raw" / case["case_id"] / f"rep-{k}.json").read_text())
            assert record["status"] == "ok" and record["rep"] == k and record["warmup"] is False
            assert record["threads"] == case["threads"] and record["case_index"] == case["index"]
            assert record["pin"]["strategy"] == "compact"
            assert record["pin"]["cpus"] == list(range(case["threads"]))  # one socket: compact = 0, 1, ...
            assert record["pin"]["command"] == [
                "likwid-pin",
                "-q",
                "-c",
                ",".join(map(str, record["pin"]["cpus"])),
            ]
            assert record["pin"]["violations"] == [], record["placement"]
            assert len(record["warmup_wall_s"]) == case["warmup"]
            assert record["counters"]["status"] == "off" and record["slurm"] is None
            checksums[case["kernel"]].add(record["checksum"])
    # Same input, any model and thread count: one checksum per kernel.
    assert {k: len(v) for k, v in checksums.items()} == {"mandelbrot": 1, "mcpi": 1}

    status = run_cli("status", campaign)
    assert status.returncode == 0
    assert status.stdout.splitlines()[2].split() == ["workstation", "6", "0", "0", "12/12"]
    assert "violated" not in status.stdout

    again = run_cli("run", "--resume", campaign, "--no-progress")
    assert again.returncode == 0 and "0 repetitions ran" in again.stdout
