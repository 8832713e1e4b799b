"""Instruction and IPC scaling (analysis/stats/pop_counters.py) from real `likwid-perfctr -O` outputs
kept outside the repository in ../shared/likwid-real/ (read at test time, never copied in): a case
counted on one hardware thread of a real run against a case counted on all of them. The expected
values are read from the files with the csv module, independently of the parser; on a machine without
counters the table says "unavailable: <reason>"."""

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.stats.pop_counters import NO_GROUP, NO_METRICS, counter_scaling
from jobs.likwid_csv import parse_perfctr_file
from tests.analysis.test_pop_metrics import summary

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "likwid-real"
FILES = ["bbp_ivybridgeep_CACHES_4t.txt", "sc19_broadwellep_L2_4t.raw", "sc19_zen1_MEM_24t.raw"]
MSR = "likwid-perfctr: Cannot get access to MSRs. Please check permissions to the MSRs"


def first_metric_rows(path: Path) -> dict[str, list[float]]:
    """Metric name -> per-thread values of the first Metric table in the file (csv module only)."""
    rows = list(csv.reader(io.StringIO(path.read_text(errors="replace"))))
    start = next(i for i, r in enumerate(rows) if len(r) > 3 and r[0] == "TABLE" and "Group 1 Metric" in r)
    count = int([c for c in rows[start] if c][-1])
    return {r[0]: [float(v) for v in r[1:] if v != ""] for r in rows[start + 2 : start + 2 + count]}


def counters_table(path: Path, threads: list[int] | None, case_id: str, reps: int = 3) -> pd.DataFrame:
    """The analysis's counters table (case_id, rep, metric, hwthread, value) of `reps` repetitions
    that each measured what the file's first run did, on the given hardware threads (all: None)."""
    (region,) = [r for r in parse_perfctr_file(path).values()][:1]
    rows = []
    for rep in range(reps):
        for metric, values in region["metrics"].items():
            for hwthread, value in values["per_hwthread"].items():
                if threads is None or int(hwthread) in threads:
                    rows.append((case_id, rep, metric, int(hwthread), value))
    return pd.DataFrame(rows, columns=["case_id", "rep", "metric", "hwthread", "value"])


def pop_rows(case_ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"case_id": case_ids, "workers": [1, 2][: len(case_ids)]})


def cases() -> pd.DataFrame:
    s = summary({"one": ("omp", 1), "many": ("omp", 2)})
    s["median_s"] = 1.0
    return s


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
@pytest.mark.parametrize("name", FILES)
def test_instruction_and_ipc_scaling_from_real_likwid_output(name):
    path = REAL / name
    metrics = first_metric_rows(path)
    unhalted, cpi = np.array(metrics["Runtime unhalted [s]"]), np.array(metrics["CPI"])
    instructions, cycles = unhalted / cpi, unhalted  # in units of the nominal clock
    counters = pd.concat([counters_table(path, [0], "one"), counters_table(path, None, "many")])
    records = pd.DataFrame({"case_id": ["one", "many"], "counters_status": "ok", "counters_reason": None})
    table = counter_scaling(pop_rows(["one", "many"]), cases(), records, counters).set_index("case_id")
    many = table.loc["many"]
    assert many["counter_scaling"] == "measured"
    assert many["instruction_scaling"] == pytest.approx(instructions[0] / instructions.sum(), rel=1e-9)
    ipc = (instructions.sum() / cycles.sum()) / (instructions[0] / cycles[0])
    assert many["ipc_scaling"] == pytest.approx(ipc, rel=1e-9)
    assert table.loc["one", "instruction_scaling"] == pytest.approx(1.0)
    assert many["instruction_scaling"] < 1  # every thread of the real run retired instructions


def metric_tables(path: Path) -> list[dict[str, list[float]]]:
    """Every Metric table of the file with CPI and unhalted runtime, in order (csv module only): the
    sc19 Zen 1 and Cascade Lake outputs hold 20 runs of the same benchmark."""
    rows = list(csv.reader(io.StringIO(path.read_text(errors="replace"))))
    tables = []
    for i, row in enumerate(rows):
        if len(row) > 3 and row[0] == "TABLE" and "Group 1 Metric" in row:
            count = int([c for c in row if c][-1])
            table = {r[0]: [float(v) for v in r[1:] if v != ""] for r in rows[i + 2 : i + 2 + count]}
            if "CPI" in table and "Runtime unhalted [s]" in table:
                tables.append(table)
    return tables


def runs_as_repetitions(tables: list[dict], threads: list[int] | None, case_id: str) -> pd.DataFrame:
    """The counters table of one case whose repetition k measured the file's run k."""
    rows = [
        (case_id, rep, metric, hwthread, value)
        for rep, table in enumerate(tables)
        for metric in ("CPI", "Runtime unhalted [s]")
        for hwthread, value in enumerate(table[metric])
        if threads is None or hwthread in threads
    ]
    return pd.DataFrame(rows, columns=["case_id", "rep", "metric", "hwthread", "value"])


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
@pytest.mark.parametrize("name", ["sc19_zen1_MEM_24t.raw", "sc19_casclakesp_MEM_20t.raw"])
def test_intervals_over_repetitions_from_real_runs(name):
    """Ten real runs as the 1-worker case's repetitions (thread 0), the next ten as the scaled case's
    (all threads): the interval holds the estimate, is not a point (the runs differ), and lies within
    what any resample of the runs' own values can give."""
    tables = metric_tables(REAL / name)
    assert len(tables) == 20
    one, many = tables[:10], tables[10:]
    counters = pd.concat([runs_as_repetitions(one, [0], "one"), runs_as_repetitions(many, None, "many")])
    records = pd.DataFrame({"case_id": ["one", "many"], "counters_status": "ok", "counters_reason": None})
    row = counter_scaling(pop_rows(["one", "many"]), cases(), records, counters, seed=3).set_index("case_id")
    row = row.loc["many"]

    def instructions(t, threads):
        return sum(u / c for u, c in list(zip(t["Runtime unhalted [s]"], t["CPI"], strict=True))[threads])

    i1 = np.array([instructions(t, slice(0, 1)) for t in one])
    i = np.array([instructions(t, slice(None)) for t in many])
    assert row["instruction_scaling"] == pytest.approx(i1.mean() / i.mean(), rel=1e-9)
    for factor in ("instruction_scaling", "ipc_scaling"):
        assert row[f"{factor}_lo"] < row[factor] < row[f"{factor}_hi"], factor
    assert i1.min() / i.max() <= row["instruction_scaling_lo"]
    assert row["instruction_scaling_hi"] <= i1.max() / i.min()
    again = counter_scaling(pop_rows(["one", "many"]), cases(), records, counters, seed=3)
    assert again.set_index("case_id").loc["many", "ipc_scaling_hi"] == row["ipc_scaling_hi"]


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
def test_one_reading_per_case_gives_the_factor_without_an_interval():
    """The Ivy Bridge output holds one run: each case has one counter reading, nothing to resample."""
    (table,) = metric_tables(REAL / "bbp_ivybridgeep_CACHES_4t.txt")
    counters = pd.concat(
        [runs_as_repetitions([table], [0], "one"), runs_as_repetitions([table], None, "many")]
    )
    records = pd.DataFrame({"case_id": ["one", "many"], "counters_status": "ok", "counters_reason": None})
    row = (
        counter_scaling(pop_rows(["one", "many"]), cases(), records, counters)
        .set_index("case_id")
        .loc["many"]
    )
    assert row["counter_scaling"] == "measured" and 0 < row["instruction_scaling"] < 1
    assert row[["instruction_scaling_lo", "instruction_scaling_hi", "ipc_scaling_lo"]].isna().all()


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
@pytest.mark.parametrize("name", ["sc19_power9_MEM.raw", "sc19_thunderx2_MEM_32t.raw"])
def test_real_groups_without_unhalted_runtime_leave_the_split_unavailable(name):
    """POWER9's MEM group prints no CPI, ThunderX2's no unhalted runtime: counted, but no split."""
    path = REAL / name
    counters = pd.concat([counters_table(path, None, "one"), counters_table(path, None, "many")])
    records = pd.DataFrame({"case_id": ["one", "many"], "counters_status": "ok", "counters_reason": None})
    table = counter_scaling(pop_rows(["one", "many"]), cases(), records, counters)
    assert (table["counter_scaling"] == f"unavailable: {NO_METRICS}").all()
    assert table["ipc_scaling"].isna().all()


def test_without_counters_the_table_says_why():
    records = pd.DataFrame(
        {"case_id": ["one", "many"], "counters_status": "unavailable", "counters_reason": [MSR, MSR]}
    )
    empty = pd.DataFrame(columns=["case_id", "rep", "metric", "hwthread", "value"])
    table = counter_scaling(pop_rows(["one", "many"]), cases(), records, empty)
    assert (table["counter_scaling"] == f"unavailable: {MSR}").all()
    assert table["instruction_scaling"].isna().all() and table["ipc_scaling"].isna().all()
    plain = pd.DataFrame({"case_id": ["one", "many"], "counters_status": None, "counters_reason": None})
    table = counter_scaling(pop_rows(["one", "many"]), cases(), plain, empty)
    assert (table["counter_scaling"] == f"unavailable: {NO_GROUP}").all()
    counted = plain.assign(counters_status="ok")  # counted, but a group without CPI (ThunderX2's MEM)
    no_cpi = pd.DataFrame(
        {"case_id": ["one"], "rep": [0], "metric": ["Clock [MHz]"], "hwthread": [0], "value": [1e3]}
    )
    table = counter_scaling(pop_rows(["one", "many"]), cases(), counted, no_cpi)
    assert (table["counter_scaling"] == f"unavailable: {NO_METRICS}").all()


def test_the_report_and_pop_metrics_csv_say_why_the_counters_are_unavailable(rendered):
    """The synthetic campaign counts group CPI (metric CPI, no unhalted runtime) on some cases, plants
    "no access to the MSRs" on others, and counts no group on the rest: pop_metrics.csv says why per
    case, and the POP section says each reason once."""
    _, result, _, _ = rendered
    table = pd.read_csv(result.out_dir / "pop_metrics.csv")
    reasons = {f"unavailable: {why}" for why in (NO_GROUP, NO_METRICS, MSR)}
    assert set(table["counter_scaling"]) == reasons
    assert table["instruction_scaling"].isna().all()
    report = (result.out_dir / "report.md").read_text()
    said = "IPC scaling (likwid CPI per hardware thread): unavailable: " + "; ".join(
        sorted([NO_GROUP, NO_METRICS, MSR])
    )
    assert said + "." in report
