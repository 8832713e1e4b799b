"""A counted campaign end to end on a machine without counters: stand-ins for likwid-perfctr (runs the
kernel pinned, then writes a real likwid CSV relabelled to the pinned CPUs) and likwid-topology (CPUs 0
and 1 as SMT siblings) come first on PATH; the records, the analysis tables and the HTML report must show
the real file's values.

Expected values are read from the real files here with the csv module, independently of the parser."""

import csv
import io
import json
import os
import statistics
from pathlib import Path

import pytest

from tests.records import campaign_records

from .conftest import ROOT, run_cli

STANDIN = Path(__file__).resolve().parent / "likwid_standin"
REAL = ROOT.parent / "shared" / "likwid-real"
MEM = REAL / "sc19_casclakesp_MEM_20t.raw"  # Cascade Lake, CAS_COUNT_RD on 6 memory channels
L2 = REAL / "sc19_broadwellep_L2_4t.raw"

EXPERIMENT = """
description = "counted campaign with stand-in likwid-perfctr"
node_types = ["workstation"]
repetitions = 2
warmup = 0
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [1, 2]
pin = ["compact"]
counter_group = ["MEM", "L2"]
params = { samples = [20000] }
"""


def first_metric_rows(path: Path) -> dict[str, list[str]]:
    """Metric name -> per-thread values of the first Metric table in the file."""
    rows = list(csv.reader(io.StringIO(path.read_text(errors="replace"))))
    start = next(i for i, r in enumerate(rows) if len(r) > 2 and r[0] == "TABLE" and r[2] == "Group 1 Metric")
    count = int(rows[start][4])
    return {r[0]: [v for v in r[1:] if v != ""] for r in rows[start + 2 : start + 2 + count]}


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
def test_counted_campaign_with_stand_in_perfctr(tmp_path, bin_dir):
    experiment = tmp_path / "counted.toml"
    experiment.write_text(EXPERIMENT)
    env = {
        "PATH": f"{STANDIN}{os.pathsep}{os.environ['PATH']}",
        "SB_STANDIN_CSV_MEM": str(MEM),
        "SB_STANDIN_CSV_L2": str(L2),
        "SB_STANDIN_GROUPS": "CLOCK,L2,MEM",
    }
    run = run_cli(
        "run", experiment, "--results-dir", tmp_path / "res", "--name", "c", "--no-progress", env=env
    )
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "c"
    host = json.loads(next((campaign / "hosts").glob("*.json")).read_text())
    assert host["counters"]["available"] and host["counter_groups"] == ["CLOCK", "L2", "MEM"]
    assert host["topology"]["threads_per_core"] == 2

    mem = first_metric_rows(MEM)
    records = campaign_records(campaign)
    assert len(records) == 8
    for record in records:
        counters = record["counters"]
        assert counters["status"] == "ok", counters
        assert counters["hwthreads"] == record["pin"]["cpus"] == counters["cpus"]
        assert counters["likwid"]["label_style"] == "HWThread" and counters["likwid"]["versions"] == "5.1+"
        if counters["group"] == "MEM":
            assert counters["likwid"]["cpu_type"] == "Intel Cascadelake SP processor"
            cpi = counters["metrics"]["CPI"]["per_hwthread"]
            assert cpi == {str(c): float(mem["CPI"][i]) for i, c in enumerate(record["pin"]["cpus"])}
            assert len(counters["events"]["CAS_COUNT_RD"]["counters"]) == 6

    analyze = run_cli("analyze", campaign, env=env)
    assert analyze.returncode == 0, analyze.stderr
    out = campaign / "analysis"
    cases = list(csv.DictReader((out / "counter_cases.csv").open()))
    two_mem = {r["metric"]: r for r in cases if r["counters_group"] == "MEM" and r["threads"] == "2"}
    assert float(two_mem["CPI"]["median"]) == pytest.approx(statistics.mean(map(float, mem["CPI"][:2])))
    bandwidth = two_mem["Memory bandwidth [MBytes/s]"]
    assert bandwidth["unit"] == "MBytes/s" and bandwidth["over_hwthreads"] == "sum"
    assert float(bandwidth["median"]) == pytest.approx(
        sum(map(float, mem["Memory bandwidth [MBytes/s]"][:2]))
    )
    assert two_mem["CPI"]["reps"] == "2" and "Runtime (RDTSC) [s]" not in two_mem

    siblings = list(csv.DictReader((out / "counter_siblings.csv").open()))
    cpi = [r for r in siblings if r["metric"] == "CPI" and r["counters_group"] == "MEM"]
    assert len(cpi) == 1 and cpi[0]["core"] == "S0C0" and cpi[0]["hwthreads"] == "0 / 1"
    assert (float(cpi[0]["sibling_0"]), float(cpi[0]["sibling_1"])) == tuple(map(float, mem["CPI"][:2]))

    report = (out / "report.html").read_text()
    section = report[report.index(">Hardware counters</h2>") :]
    assert "Node type workstation, group MEM:" in section and "Memory bandwidth [MBytes/s] (sum)" in section
    assert "SMT: sibling hardware threads of one core side by side" in section
    assert "<th>first sibling</th>" in section
