"""The CLI surface: --help everywhere, usage errors as one line with exit status 2, status flags, probe."""

import json
import re

import pytest

from sbcore import record_store, stored_records
from tests.records import minimal_record

from .conftest import ROOT, run_cli

SMOKE = ROOT / "config" / "experiments" / "smoke.toml"


@pytest.mark.parametrize("command", ["plan", "run", "run-case", "status", "probe"])
def test_every_subcommand_has_help(command):
    result = run_cli(command, "--help")
    assert result.returncode == 0 and f"usage: scalebench {command}" in result.stdout
    assert len(result.stdout.splitlines()) > 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "give either EXP (a new campaign) or --resume CAMPAIGN"),
        (["run", "x.toml", "--resume", "latest"], "give either EXP"),
        (["run", "config/experiments/nonexistent.toml"], "config/experiments/nonexistent.toml: no such file"),
        (["status", "no-such-campaign"], "campaign 'no-such-campaign': not a campaign directory"),
        (
            ["plan", "config/experiments/smoke.toml", "--node-type", "cray"],
            "--node-type 'cray': unknown node type",
        ),
    ],
)
def test_usage_errors_are_one_line_with_status_2(args, message, tmp_path):
    result = run_cli(*args, env={"SCALEBENCH_RESULTS_DIR": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_run_case_rejects_bad_index(tmp_path, bin_dir):
    made = run_cli(
        "plan", ROOT / "config/experiments/smoke.toml", "--write", "--results-dir", tmp_path, "--name", "p"
    )
    assert made.returncode == 0 and "6 cases" in made.stdout and made.stdout.count("workstation") == 6
    for args, message in [
        (["6"], "INDEX 6: campaign"),
        (["0", "--rep", "2"], "--rep 2: case 0 has reps 0..1"),
    ]:
        result = run_cli("run-case", tmp_path / "p", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
    negative = run_cli("run-case", tmp_path / "p", "-1")
    assert negative.returncode == 2


def test_plan_without_write_writes_nothing(tmp_path, bin_dir):
    result = run_cli(
        "plan", ROOT / "config/experiments/smoke.toml", env={"SCALEBENCH_RESULTS_DIR": str(tmp_path)}
    )
    assert result.returncode == 0 and list(tmp_path.iterdir()) == []


def test_status_shows_pin_violations(tmp_path, bin_dir):
    made = run_cli(
        "plan", ROOT / "config/experiments/smoke.toml", "--write", "--results-dir", tmp_path, "--name", "v"
    )
    assert made.returncode == 0
    campaign = tmp_path / "v"
    case = json.loads((campaign / "cases.jsonl").read_text().splitlines()[2])
    (campaign / "raw" / case["case_id"]).mkdir()
    violation = {"worker": 1, "planned": 1, "seen": [0, 0]}
    record = minimal_record(case["case_id"], 0, pin={"violations": [violation]})
    # rep 0 recorded; rep 1 cut short by a crash (a last row without its newline is not a record)
    directory = campaign / "raw" / case["case_id"]
    record_store.store(directory, [record])
    with (directory / stored_records.REPS_FILE).open("ab") as handle:
        handle.write(b'1,"fnv1a64:')
    status = run_cli("status", campaign)
    assert status.returncode == 1  # incomplete: a finding
    assert f"case 2 {case['case_id']}" in status.stdout and "in 1 of 1 reps" in status.stdout
    # done, partial (one rep recorded, one truncated), missing, failed, reps done
    assert status.stdout.splitlines()[2].split() == ["workstation", "0", "1", "5", "0", "1/12"]


def test_probe_reports_topology_counters_and_pinning():
    result = run_cli("probe")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("topology: ") and "SMT siblings" in out
    assert "counters: available" in out or "counters: unavailable — likwid-perfctr" in out
    assert "likwid-pin -c 0: holds" in out
    assert re.search(r"harness, SB_PIN_CPUS=[0-9,]+: holds", out), out


def test_probe_says_when_harness_pinning_does_not_hold(monkeypatch, tmp_path):
    """A harness that ignores its pin list (here: a stand-in kernel printing a fixed placement) is named."""
    import jobs.capabilities
    from jobs.topology import detect_topology

    fake = tmp_path / "mcpi-c-omp"
    fake.write_text("#!/bin/sh\necho '{\"placement\": [[7, 7], [7, 7]]}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(tmp_path))
    line = jobs.capabilities.harness_pinning_holds(detect_topology())
    assert "DOES NOT HOLD" in line and "[[7, 7], [7, 7]]" in line
