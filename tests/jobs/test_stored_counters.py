"""A process's likwid counters stored as long tables beside facts.jsonl (facts.<table>.csv: the metrics and
events of `counters`, declared in sbcore/record_fields.py, encoded by sbcore/record_rows.py): read back
exactly by sbcore/stored_records.py, the whole object kept in the facts line when the tables would not
give it back, a cut or bad row named by file and line, older facts lines with the whole object still
read. Realistic values come from real `likwid-perfctr -O` outputs outside the repository (read at test
time, skipped when absent) parsed by jobs/likwid_csv.py and shaped by jobs/counter_record.py."""

import json
import math
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from jobs import counter_record, likwid_csv
from sbcore import campaign_access, layout, record_rows, record_store, stored_records
from tests.records import minimal_record

from .conftest import ROOT

REAL = ROOT.parent / "shared" / "likwid-real"
REAL_FILES = sorted(p for p in REAL.glob("*") if p.suffix != ".md") if REAL.is_dir() else []
CASE = "c"
METRICS = "facts.counters_metrics.csv"
METRIC_HWTHREADS = "facts.counters_metric_hwthreads.csv"


def counters() -> dict:
    """The counters of an ok run as jobs/counter_record.py writes them: metrics and events with
    unmeasured values (null), integers beside floats, a non-contiguous hardware thread, an event on two
    counters."""
    return {
        "status": "ok",
        "group": "MEM",
        "cpus": [0, 4],
        "region": "compute",
        "hwthreads": [0, 4],
        "likwid": {"label_style": "HWThread", "versions": "5.1+", "cpu_type": "Intel, \"quoted\" CPU"},
        "metrics": {
            "Runtime (RDTSC) [s]": {
                "per_hwthread": {"0": 0.0265, "4": 0.0266},
                "sum": 0.0531,
                "min": 0.0265,
                "max": 0.0266,
                "avg": 0.02655,
            },
            "CPI": {"per_hwthread": {"0": 1, "4": None}, "sum": 1, "min": 1, "max": 1, "avg": 1.0},
            "Memory bandwidth [MBytes/s]": {
                "per_hwthread": {"0": None, "4": None},
                "sum": None,
                "min": None,
                "max": None,
                "avg": None,
            },
        },
        "events": {
            "CAS_COUNT_RD": {
                "counters": {
                    "MBOX0C0": measured({"0": 12, "4": None}, 12, 12, 12, 12.0),
                    "MBOX1C0": measured({"0": 3e20, "4": None}, 3e20, 3e20, 3e20, 3e20),
                },
                "per_hwthread": {"0": 3.0000000000000004e20, "4": None},
                "sum": 3e20,
                "min": 3e20,
                "max": 3e20,
                "avg": 3e20,
            },
            "INSTR_RETIRED_ANY": {
                "counters": {"FIXC0": measured({"0": 7, "4": 8}, 15, 7, 8, 7.5)},
                "per_hwthread": {"0": 7, "4": 8},
                "sum": 15,
                "min": 7,
                "max": 8,
                "avg": 7.5,
                "counter": "FIXC0",
            },
        },
        "region_info": {"runtime_s": {"0": 0.02, "4": 0.02}, "call_count": {"0": 1, "4": 1}},
    }  # fmt: skip


def measured(per_hwthread: dict, sum_, min_, max_, avg) -> dict:
    return {"per_hwthread": per_hwthread, "sum": sum_, "min": min_, "max": max_, "avg": avg}


def rec(rep: int, value, **extra) -> dict:
    return minimal_record(
        CASE, rep, wall_s=0.5 + rep, invocation=extra.pop("invocation", 0), counters=value, **extra
    )


def _dir(tmp_path) -> Path:
    directory = tmp_path / CASE
    directory.mkdir(exist_ok=True)
    return directory


def _read(directory: Path) -> stored_records.CaseRecords:
    return stored_records.read(directory, directory.name)


def _facts(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / stored_records.FACTS_FILE).read_text().splitlines()]


def _same(a, b) -> bool:
    """Equal as JSON text: the same keys in the same order, the same values and JSON types."""
    return json.dumps(a) == json.dumps(b)


def _back(read: stored_records.CaseRecords, records: list[dict]) -> bool:
    """Every record read back equal, its counters exactly (a record's own key order is the store's:
    its process's fields first)."""
    return all(
        read.records[r["rep"]] == r and _same(read.records[r["rep"]]["counters"], r["counters"])
        for r in records
    )


def _read_arrow(path: Path, table: str) -> pa.Table:
    """A columnar library reads a facts table with the types the declaration gives (none inferred)."""
    kinds = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64()}
    types = {name: kinds[kind] for name, kind in record_rows.FACTS_TABLES[table].items()}
    return pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False
        ),
    )


def test_counters_round_trip_through_their_tables(tmp_path):
    directory = _dir(tmp_path)
    records = [rec(0, counters()), rec(1, counters())]
    assert record_store.store(directory, records) == records
    read = _read(directory)
    assert not read.problems and _back(read, records)
    # the facts line keeps the scalar keys and the small ones; the maps keyed by data are rows
    (line,) = _facts(directory)
    assert line["flat"] == ["counters"]
    assert list(line["counters"]) == [
        "status", "group", "cpus", "region", "hwthreads", "likwid", "metrics_n", "events_n", "region_info"
    ]  # fmt: skip
    assert line["counters"]["metrics_n"] == 3 and line["counters"]["events_n"] == 2
    assert "per_hwthread" not in (directory / stored_records.FACTS_FILE).read_text()
    # typed columns: a columnar library reads them with the declared types, null where unmeasured
    metrics = _read_arrow(directory / METRICS, "counters_metrics")
    assert metrics["metric"].to_pylist() == list(counters()["metrics"])
    assert metrics["index"].to_pylist() == [0, 1, 2] and set(metrics["process"].to_pylist()) == {0}
    assert (
        metrics["sum"].to_pylist() == [0.0531, 1.0, None] and metrics["per_hwthread_n"].to_pylist() == [2] * 3
    )
    values = _read_arrow(directory / METRIC_HWTHREADS, "counters_metric_hwthreads")
    assert values["hwthread"].type == pa.int64() and values["hwthread"].to_pylist() == [0, 4] * 3
    assert values["metric_index"].to_pylist() == [0, 0, 1, 1, 2, 2]
    assert values["value"].to_pylist() == [0.0265, 0.0266, 1.0, None, None, None]
    deepest = _read_arrow(
        directory / "facts.counters_event_counter_hwthreads.csv", "counters_event_counter_hwthreads"
    )
    assert deepest.num_rows == 6 and deepest["counter_index"].to_pylist() == [0, 0, 1, 1, 0, 0]
    # an integer stays an integer, a float a float (1 vs 1.0): the exact JSON types come back
    assert (directory / METRIC_HWTHREADS).read_text().splitlines()[3:5] == ["0,1,0,0,1", "0,1,1,4,null"]


@pytest.mark.parametrize("path", REAL_FILES, ids=[p.name for p in REAL_FILES])
def test_real_likwid_counters_read_back_exactly_and_flat(tmp_path, path):
    """Each real output's first region shaped as jobs/counter_record.py shapes the `compute` region."""
    region = next(iter(likwid_csv.parse_perfctr_file(path).values()))
    value = {
        "status": "ok",
        "group": region["group"],
        "cpus": region["hwthreads"],
        "region": counter_record.REGION,
        "hwthreads": region["hwthreads"],
        "likwid": {"label_style": region["label_style"], "versions": region["likwid_versions"]},
        "metrics": region["metrics"],
        "events": region["events"],
        "region_info": region["region_info"],
    }
    assert value["metrics"] and value["events"]
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, value)])
    read = _read(directory)
    assert not read.problems and _same(read.records[0]["counters"], value)
    (line,) = _facts(directory)
    assert line.get("flat") == ["counters"] and "metrics" not in line["counters"]
    measured = [v for m in value["metrics"].values() for v in m["per_hwthread"].values()]
    stored = _read_arrow(directory / METRIC_HWTHREADS, "counters_metric_hwthreads")["value"].to_pylist()
    assert stored == measured


NOT_FLAT = {
    "text where a number is declared": lambda c: c["metrics"]["CPI"]["per_hwthread"].update({"4": "-"}),
    "a NaN": lambda c: c["metrics"]["CPI"].update({"avg": math.nan}),
    "an infinity": lambda c: c["events"]["INSTR_RETIRED_ANY"].update({"max": math.inf}),
    "keys out of the declared order": lambda c: c["metrics"].update(
        {"CPI": {"sum": 1, "per_hwthread": {"0": 1}, "min": 1, "max": 1, "avg": 1}}
    ),
    "an undeclared key": lambda c: c["metrics"]["CPI"].update({"unit": "1"}),
    "a hardware thread not a plain integer": lambda c: c["metrics"]["CPI"].update(
        {"per_hwthread": {"01": 1}}
    ),
    "a metric name with a line break": lambda c: c["metrics"].update({"two\nlines": {}}),
    "a boolean": lambda c: c["metrics"]["CPI"].update({"sum": True}),
    "a list of metrics": lambda c: c.update({"metrics": [1, 2]}),
    "a hardware thread as an integer key": lambda c: c["metrics"]["CPI"].update({"per_hwthread": {0: 1}}),
    "the name of a count taken": lambda c: c.update({"metrics_n": 3}),
}


@pytest.mark.parametrize("spoil", NOT_FLAT.values(), ids=list(NOT_FLAT))
def test_counters_the_tables_would_not_give_back_stay_whole_in_the_facts_line(tmp_path, spoil):
    value = counters()
    spoil(value)
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, value)])
    read = _read(directory)
    assert not read.problems and _same(read.records[0]["counters"], value)
    (line,) = _facts(directory)
    assert "flat" not in line and _same(line["counters"], value)
    assert not list(directory.glob("facts.*.csv"))


@pytest.mark.parametrize(
    "value",
    [None, {"status": "unavailable", "group": "MEM", "cpus": None, "reason": "no access"}, {"status": "off"}],
    ids=["null", "unavailable", "off"],
)
def test_counters_without_metrics_read_back(tmp_path, value):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, value)])
    assert _same(_read(directory).records[0]["counters"], value)


def test_null_and_empty_metrics_and_hwthreads_read_back(tmp_path):
    value = counters() | {"metrics": {"CPI": {"per_hwthread": {}, "sum": None}, "Clock": {}}, "events": None}
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, value)])
    assert _same(_read(directory).records[0]["counters"], value)
    assert _facts(directory)[0]["counters"]["events_n"] is None


def test_a_facts_table_of_another_header_is_never_appended_to(tmp_path):
    directory = _dir(tmp_path)
    foreign = b'process,index,metric,unit\n0,0,"CPI","1"\n'
    (directory / METRICS).write_bytes(foreign)
    record_store.store(directory, [rec(0, counters())])
    assert (directory / METRICS).read_bytes() == foreign
    assert "flat" not in _facts(directory)[0]
    assert not (directory / METRIC_HWTHREADS).exists()
    read = _read(directory)
    assert _same(read.records[0]["counters"], counters())


def test_facts_lines_with_the_whole_counters_are_still_read(tmp_path):
    """A campaign written before the facts tables: counters whole in each facts line."""
    directory = _dir(tmp_path)
    records = [rec(0, counters()), rec(1, counters())]
    facts, parts = record_rows.split(records)
    (directory / stored_records.FACTS_FILE).write_bytes(
        json.dumps(facts | {"store": "scalebench.run/2", "process": 0}, separators=(",", ":")).encode()
        + b"\n"
    )
    (directory / stored_records.REPS_FILE).write_bytes(
        record_rows.HEADER + b"".join(record_rows.row(p, 0) for p in parts)
    )
    read = _read(directory)
    assert not read.problems and _back(read, records)
    # a later process of the same case goes to the tables; both read back
    later = rec(2, counters() | {"group": "L2"}, invocation=1)
    record_store.store(directory, [later])
    read = _read(directory)
    assert not read.problems and _back(read, [later, *records])
    assert [("flat" in line) for line in _facts(directory)] == [False, True]


def test_a_row_cut_by_a_crash_is_not_read_and_named_once_completed(tmp_path):
    """A writer killed while writing its facts tables: its facts line is on disk, its rows never came.
    The cut row is not read; the next writer takes the next process number and starts on a new line,
    so the cut row (then complete, but not a row) is named by file and line and counts for nothing."""
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters())])
    line, tables = record_rows.facts_encode(record_rows.split([rec(1, counters(), invocation=1)])[0], 1)
    with (directory / stored_records.FACTS_FILE).open("ab") as handle:
        handle.write(line)
    with (directory / METRICS).open("ab") as handle:
        handle.write(tables["counters_metrics"][:12])  # '1,0,"Runtim': cut inside the quoted name
    read = _read(directory)
    assert not read.problems and list(read.records) == [0] and read.processes == 2
    later = rec(1, counters() | {"group": "L3"}, invocation=2)
    assert record_store.store(directory, [later]) == [later]
    read = _read(directory)
    assert _back(read, [later, rec(0, counters())])
    cut = len(_lines(directory / METRICS)) - 3  # the process-2 rows follow the completed cut row
    assert [p[:2] for p in read.problems] == [(METRICS, cut)] and "not a row" in read.problems[0][2]
    assert _facts(directory)[-1]["process"] == 2


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


BAD_ROWS = {
    "text in a number": (lambda row: row.replace(b",0.0531,", b",abc,"), "sum: 'abc' is not a number"),
    "a cell fewer": (lambda row: row.rsplit(b",", 1)[0], "7 cells, the header has 8"),
    "no integer index": (lambda row: row.replace(b"0,0,", b"0,x,", 1), "index: 'x' is not an integer"),
}


@pytest.mark.parametrize("spoil,why", BAD_ROWS.values(), ids=list(BAD_ROWS))
def test_a_bad_row_is_named_by_file_and_line_and_its_process_not_counted(tmp_path, spoil, why):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters()), rec(1, counters())])
    lines = _lines(directory / METRICS)
    assert lines[1].startswith(b'0,0,"Runtime (RDTSC) [s]",2,0.0531,')
    (directory / METRICS).write_bytes(b"\n".join([lines[0], spoil(lines[1]), *lines[2:]]) + b"\n")
    read = _read(directory)
    assert read.records == {}
    named = [(name, line) for name, line, _ in read.problems]
    assert named[0] == (METRICS, 2) and why in read.problems[0][2]
    # each row of the process names the facts line its tables no longer complete
    assert named[1:] == [("reps.csv", 2), ("reps.csv", 3)]
    assert all(
        f"facts.jsonl:1: counters.metrics: 3 keys, not all in {METRICS}" in p[2] for p in read.problems[1:]
    )
    # through the layout every command uses: 'raw/<case>/<file>:<line>: why'
    campaign = tmp_path
    (campaign / layout.RAW_DIR).mkdir()
    shutil.move(directory, campaign / layout.RAW_DIR / CASE)
    records, problems = layout.case_lines(campaign, CASE)
    assert not records and any(p.startswith(f"{layout.RAW_DIR}/{CASE}/{METRICS}:2: ") for p in problems)


def test_a_missing_hwthread_row_leaves_the_process_uncounted(tmp_path):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters())])
    lines = _lines(directory / METRIC_HWTHREADS)
    (directory / METRIC_HWTHREADS).write_bytes(b"\n".join(lines[:-1]) + b"\n")
    read = _read(directory)
    assert read.records == {}
    assert read.problems == [
        (
            "reps.csv",
            2,
            f"process 0: facts.jsonl:1: counters.metrics.per_hwthread: 2 keys, not all in {METRIC_HWTHREADS}",
        )
    ]


def test_a_link_in_place_of_a_facts_table_is_not_followed(tmp_path):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters())])
    outside = tmp_path / "outside.csv"
    shutil.move(directory / METRICS, outside)
    (directory / METRICS).symlink_to(outside)
    read = _read(directory)
    assert read.records == {}
    assert [p[:2] for p in read.problems] == [(METRICS, 0), ("reps.csv", 2)] and "not read" in read.problems[
        0
    ][2]
    with pytest.raises(campaign_access.UnsafeFile):  # a writer refuses to store beside it
        record_store.store(directory, [rec(1, counters(), invocation=1)])
    assert outside.read_bytes().startswith(record_rows.FACTS_TABLE_HEADERS["counters_metrics"])


def test_the_facts_tables_are_stored_files():
    """Every list of stored files knows the facts tables: they are records files a run appends to
    (checked before it runs), names a kernel's output may not take, and part of the analysis's cache key."""
    for table in record_rows.FACTS_TABLES:
        name = record_rows.facts_table_file(table)
        assert (
            name in layout.STORED_FILES and stored_records.is_v2_file(name) and layout.is_reserved_name(name)
        )
    assert not stored_records.is_v2_file("facts.csv") and not stored_records.is_v2_file("facts.x.jsonl")


def test_the_case_listing_names_the_facts_tables_with_their_sizes(tmp_path):
    campaign = tmp_path
    directory = campaign / layout.RAW_DIR / CASE
    directory.mkdir(parents=True)
    record_store.store(directory, [rec(0, counters())])
    listed = layout.case_record_files(directory, CASE)
    size = (directory / METRICS).stat().st_size
    assert f"{layout.RAW_DIR}/{CASE}/{METRICS}#{size}" in listed


def test_reading_some_repetitions_gives_them_as_a_whole_read_does(tmp_path):
    """What the writer asks before it appends (read with `reps`): the same records of those repetitions,
    whatever the facts tables hold for other processes (a broken row, a cut one): only the facts-table
    rows of the processes whose rows it reads are decoded."""
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters()), rec(1, counters())])
    record_store.store(directory, [rec(2, counters(), invocation=1)])
    lines = _lines(directory / METRICS)
    spoiled = [*lines[:-1], lines[-1].replace(b",2,", b",two,", 1)]  # a row of process 1 broken
    (directory / METRICS).write_bytes(b"\n".join(spoiled) + b"\n")
    with (directory / METRIC_HWTHREADS).open("ab") as handle:
        handle.write(b'7,0,0,"x')  # a cut row of another process
    whole = _read(directory)
    assert set(whole.records) == {0, 1} and [p[0] for p in whole.problems] == [METRICS, "reps.csv"]
    for wanted in ({0}, {2}, {0, 2}, {5}):
        some = stored_records.read(directory, directory.name, reps=wanted)
        assert some.records == {k: v for k, v in whole.records.items() if k in wanted}, wanted
        assert some.processes == whole.processes
        assert bool(some.problems) == (2 in wanted), (wanted, some.problems)


def test_a_fifo_in_place_of_a_facts_table_hangs_nothing(tmp_path):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0, counters())])
    (directory / METRICS).unlink()
    os.mkfifo(directory / METRICS)
    read = _read(directory)  # opened without blocking: no writer needed
    assert (
        read.records == {}
        and read.problems[0][:2] == (METRICS, 0)
        and "not a regular file" in read.problems[0][2]
    )
    with pytest.raises(campaign_access.UnsafeFile):
        record_store.store(directory, [rec(1, counters(), invocation=1)])
