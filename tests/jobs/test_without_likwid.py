"""A campaign on a host without likwid (likwid-* hidden from PATH): the topology comes from sysfs, the
harness pins as planned, counters are `unavailable` with the reason, and a pin_tool = "likwid-pin" case
fails with a clear message while the rest of the campaign runs."""

import json

import pytest

from sbcore.layout import case_records, failed_attempts
from tests.path_farm import path_without

from .conftest import run_cli

EXPERIMENT = """
description = "no likwid"
repetitions = 1
warmup = 0
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [2]
pin = ["compact"]
params = { samples = [20000] }

[[sweep]]
binary = ["mcpi-c-pthreads"]
threads = [2]
pin = ["compact"]
counter_group = ["CLOCK"]
params = { samples = [20000] }

[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["compact"]
pin_tool = "likwid-pin"
params = { samples = [20000] }
"""


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, bin_dir):
    tmp = tmp_path_factory.mktemp("nolikwid")
    experiment = tmp / "nolikwid.toml"
    experiment.write_text(EXPERIMENT)
    path = path_without(tmp / "bin", ["likwid-*"])
    proc = run_cli("run", experiment, "--no-progress", "--results-dir", tmp / "res", env={"PATH": path})
    assert proc.returncode == 1, proc.stderr  # the likwid-pin case failed, nothing else
    assert "1 failed" in proc.stdout, proc.stdout
    directory = tmp / "res" / "latest"
    cases = [json.loads(line) for line in (directory / "cases.jsonl").read_text().splitlines()]
    return directory.resolve(), {c["binary"]: c for c in cases}


def test_topology_comes_from_sysfs(campaign):
    directory, _ = campaign
    (host,) = (directory / "hosts").glob("*.json")
    assert json.loads(host.read_text())["topology"]["source"] == "sysfs"
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["topology"]["source"] == "sysfs"
    assert set(manifest["unavailable"]["tools"]) >= {"likwid-perfctr", "likwid-pin", "likwid-topology"}
    assert manifest["unavailable"]["tools"]["likwid-perfctr"].startswith(
        "not found on PATH: hardware counters"
    )


def test_harness_pins_as_planned(campaign):
    directory, cases = campaign
    (record,) = case_records(directory, cases["mcpi-c-omp"]["case_id"]).values()
    assert record["pin"]["cpus"] == [0, 1] and record["pin"]["violations"] == []


def test_counters_are_unavailable_with_the_reason(campaign):
    directory, cases = campaign
    (record,) = case_records(directory, cases["mcpi-c-pthreads"]["case_id"]).values()
    assert record["counters"]["status"] == "unavailable"
    assert "likwid-perfctr not found: likwid not installed" in record["counters"]["reason"]


def test_likwid_pin_case_fails_with_a_clear_message(campaign):
    directory, cases = campaign
    (failure,) = failed_attempts(directory, cases["mcpi-c-serial"]["case_id"]).values()
    reason = json.loads(failure.read_text())["reason"]
    assert reason.startswith("pin_tool likwid-pin: not found: likwid is not installed"), reason


def test_report_says_what_was_unavailable_and_why(campaign):
    directory, _ = campaign
    proc = run_cli("analyze", directory)
    assert proc.returncode == 0, proc.stderr
    report = (directory / "analysis" / "report.md").read_text()
    provenance = report[report.index("## Provenance") :]
    assert "### unavailable" in provenance and "likwid-perfctr" in provenance
    assert "not found on PATH: hardware counters" in provenance
