"""Counter tables and the report's counter section on hand-made records: sums vs means over hardware
threads, medians over repetitions, SMT siblings paired by the probed topology, invalid counters left out
and explained."""

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.campaign import read_hosts
from analysis.outputs.report.sections.counters import counter_blocks
from analysis.stats.counters import counter_cases, counter_siblings, counter_tables

CASE = {
    "node_type": "smt",
    "kernel": "mcpi",
    "lang": "c",
    "model": "omp",
    "threads": 2,
    "pin_strategy": "compact",
}


def records() -> pd.DataFrame:
    rows = [
        {**CASE, "case_id": "a", "rep": 0, "hostname": "h", "counters_group": "MEM", "counters_status": "ok"},
        {**CASE, "case_id": "a", "rep": 1, "hostname": "h", "counters_group": "MEM", "counters_status": "ok"},
        {
            **CASE,
            "case_id": "a",
            "rep": 2,
            "hostname": "h",
            "counters_group": "MEM",
            "counters_status": "invalid",
        },
    ]
    frame = pd.DataFrame(rows)
    frame["counters_reason"] = [None, None, "CSV covers hardware threads 0,1,2,3, the case measured CPUs 0,1"]
    return frame


def counters() -> pd.DataFrame:
    rows = []
    for rep, (cpi0, cpi1, bw) in enumerate([(1.0, 3.0, 100.0), (2.0, 4.0, 300.0), (99.0, 99.0, 9e9)]):
        rows += [
            ("a", rep, "CPI", 0, cpi0),
            ("a", rep, "CPI", 1, cpi1),
            ("a", rep, "Memory bandwidth [MBytes/s]", 0, bw),
            ("a", rep, "Memory bandwidth [MBytes/s]", 1, 0.0),
            ("a", rep, "Runtime (RDTSC) [s]", 0, 1.0),
        ]
    return pd.DataFrame(rows, columns=["case_id", "rep", "metric", "hwthread", "value"])


@pytest.fixture
def campaign(tmp_path):
    topology = {
        "threads_per_core": 2,
        "hwthreads": [
            {"hwthread": 0, "thread": 0, "core": 0, "die": 0, "socket": 0},
            {"hwthread": 1, "thread": 1, "core": 0, "die": 0, "socket": 0},
        ],
    }
    (tmp_path / "hosts").mkdir()
    (tmp_path / "hosts" / "h.json").write_text(json.dumps({"topology": topology}))
    return tmp_path


def test_case_table_sums_bandwidth_and_averages_cpi_over_threads():
    table = counter_cases(records(), counters()).set_index("metric")
    assert "Runtime (RDTSC) [s]" not in table.index  # scalebench measures time itself
    cpi = table.loc["CPI"]
    # per record mean over threads: 2.0 and 3.0; the invalid record (99) is not used
    assert (cpi["reps"], cpi["median"], cpi["min"], cpi["max"]) == (2, 2.5, 2.0, 3.0)
    assert (cpi["unit"], cpi["over_hwthreads"], cpi["binary"]) == ("", "mean", "mcpi-c-omp")
    bandwidth = table.loc["Memory bandwidth [MBytes/s]"]
    assert (bandwidth["median"], bandwidth["unit"], bandwidth["over_hwthreads"]) == (200.0, "MBytes/s", "sum")


def test_siblings_side_by_side_only_on_smt_hosts(campaign, tmp_path):
    table = counter_siblings(records(), counters(), read_hosts(campaign))
    cpi = table[table["metric"] == "CPI"].iloc[0]
    assert (cpi["core"], cpi["hwthreads"], cpi["sibling_0"], cpi["sibling_1"]) == ("S0C0", "0 / 1", 1.5, 3.5)
    no_smt = tmp_path / "nosmt"
    (no_smt / "hosts").mkdir(parents=True)
    (no_smt / "hosts" / "h.json").write_text(
        json.dumps({"topology": {"threads_per_core": 1, "hwthreads": []}})
    )
    assert counter_siblings(records(), counters(), read_hosts(no_smt)).empty


def test_report_section(campaign):
    recs = records()
    result = SimpleNamespace(
        counter_tables=counter_tables(recs, counters(), read_hosts(campaign)),
        loaded=SimpleNamespace(records=recs),
    )
    blocks = counter_blocks(result)
    texts = [b.value for b in blocks if b.kind == "p"]
    assert texts[0] == "1 records have counters that do not match the run (not used):"
    reasons = blocks[1].value
    assert reasons["counters_reason"].tolist() == [recs["counters_reason"].iloc[2]]
    wide = next(b.value for b in blocks if b.kind == "table" and "CPI" in b.value.columns)
    assert list(wide.columns) == [
        "binary",
        "threads",
        "pin",
        "reps",
        "CPI",
        "Memory bandwidth [MBytes/s] (sum)",
    ]
    assert wide.iloc[0]["CPI"] == "2.5" and wide.iloc[0]["Memory bandwidth [MBytes/s] (sum)"] == "200"
    sibling = blocks[-1].value
    assert "Memory bandwidth [MBytes/s]" not in set(sibling["metric"])  # per socket, not per thread
    assert sibling.iloc[0][["metric", "first sibling", "second sibling"]].tolist() == ["CPI", "1.5", "3.5"]


def test_no_counted_record():
    recs = records().assign(counters_status="unavailable")
    result = SimpleNamespace(counter_tables={}, loaded=SimpleNamespace(records=recs))
    assert [b.value for b in counter_blocks(result)] == [
        "No record with valid counters (status ok): no counter tables."
    ]
