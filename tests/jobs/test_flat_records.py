"""Object and array fields stored flat (scalebench.run/2, sbcore/record_rows.py): every record reads back
exactly as it was given (its keys in their order, integers as integers), in typed columns where the
declaration fits it and whole in extra_json where it does not; an item missing from a long table is named
and its repetition not counted."""

import json
import os

import pytest

from jobs import runcase
from jobs.campaign import create_campaign, load_cases
from sbcore import layout, record_rows, record_store, stored_records
from tests.records import case_records, minimal_record

CASE = "c"
PROBE = {
    "int_mul_iters": 400000,
    "fp_lat_iters": 400000,
    "fp_tput_iters": 500000,
    "xfer_round_trips": 248,
    "runq_wait_s": 0,
    "min_s": {"int_mul": 0.000324, "fp_lat": 0.000325, "fp_tput": 0.00046, "xfer": None},
    "max_s": {"int_mul": 0.000328, "fp_lat": 0.0043, "fp_tput": 0.0045, "xfer": None},
    "n_cpus": 1,
}
PIN = {"strategy": "compact", "cpus": [0, 1], "command": None, "violations": [], "tool": "harness"}
CLOCK = {"before_ghz": 3.69, "after_ghz": 3.7, "method": "dependent integer add chain"}

# (what the record holds beside the minimal fields, the fields expected whole in extra_json)
CASES = {
    "every declared shape": (
        {
            "probe": PROBE,
            "pin": PIN | {"command": ["likwid-pin", "-c", 'N:0,1 "x"']},
            "clock": CLOCK,
            "placement": [[0, 0], [1, -1]],
            "sched": {"nice": None, "worker_nice": "5", "applied": [["other", 0, 0], ["fifo", 1, None]]},
            "result": {"hits": 78530, "pi": 3.1412, "mean": 2.0, "none": None, "name": "a,b"},
            "rank_wall_s": [0.5, 1],
            "warmup_wall_s": [],
        },
        set(),
    ),
    "null and absent nested values": (
        {"clock": {"before_ghz": None, "after_ghz": 3.0}, "pin": PIN | {"cpus": None}, "result": None},
        set(),
    ),
    "an empty result and empty arrays": ({"result": {}, "placement": [], "placement_seen": []}, set()),
    "an undeclared field and an undeclared key": (
        {"novel": {"a": [1, {"b": None}]}, "clock": CLOCK | {"spread": 0.1}, "probe": PROBE},
        {"novel", "clock"},
    ),
    "values the flat shape does not hold": (
        {
            "probe": None,
            "pin": PIN | {"violations": [{"worker": 1, "planned": 1, "seen": [0]}]},
            "placement": [[0]],
            "placement_seen": [[0, 1], []],
            "result": {"ok": True, "nested": {"x": 1}},
            "clock": {},
            "sched": {"worker_nice": "a\nb"},
            "rank_wall_s": ["1"],
        },
        {"probe", "pin", "placement", "placement_seen", "result", "clock", "sched", "rank_wall_s"},
    ),
    "a differing key order": ({"clock": {"method": "m", "before_ghz": 1.0}}, {"clock"}),
}


@pytest.mark.parametrize("name", CASES)
def test_every_record_reads_back_exactly(tmp_path, name):
    fields, whole = CASES[name]
    directory = tmp_path / CASE
    directory.mkdir()
    records = [minimal_record(CASE, rep, **fields, in_process_rep=rep) for rep in range(2)]
    record_store.store(directory, records)
    read = stored_records.read(directory, CASE)
    assert not read.problems and list(read.records.values()) == records
    assert [_texts(r) for r in read.records.values()] == [_texts(r) for r in records]
    rows = (directory / "reps.csv").read_text().splitlines()
    header = rows[0].split(",")
    extra = record_rows.typed_cells(header, record_rows.cells(rows[1].encode()), record_rows.COLUMN_TYPES)
    assert set(json.loads(extra.get(record_rows.EXTRA) or "{}")) == whole


def _texts(record: dict) -> dict:
    """Each field as JSON text: equal only when exactly equal (an object's keys in their order, 2.0 not
    2, 0 not 0.0; the record's own fields are in declaration order, the facts first)."""
    return {key: json.dumps(value) for key, value in record.items()}


def test_the_flat_columns_hold_the_values(tmp_path):
    directory = tmp_path / CASE
    directory.mkdir()
    record_store.store(directory, [minimal_record(CASE, 0, **CASES["every declared shape"][0])])
    header, row = (directory / "reps.csv").read_text().splitlines()
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    assert cells["probe_min_s_int_mul"] == "0.000324" and cells["probe_min_s_xfer"] == "null"
    assert cells["probe_int_alu_iters"] == "" and cells["clock_method"] == '"dependent integer add chain"'
    assert cells["placement_n"] == "2" and cells["result_n"] == "5" and cells["warmup_wall_s_n"] == "0"
    threads = (directory / "reps.threads.csv").read_text().splitlines()
    assert threads == [
        "process,rep,index,placement_start_cpu,placement_end_cpu,"
        "sched_applied_policy,sched_applied_priority,sched_applied_nice",
        '0,0,0,0,0,"other",0,0',
        '0,0,1,1,-1,"fifo",1,null',
    ]
    results = (directory / "reps.results.csv").read_text().splitlines()
    assert results[1:3] == ['0,0,0,"hits",78530,,', '0,0,1,"pi",,3.1412,']
    assert not (directory / "reps.warmups.csv").exists()


def test_a_repetition_missing_its_items_is_named_and_not_counted(tmp_path):
    directory = tmp_path / CASE
    directory.mkdir()
    record_store.store(directory, [minimal_record(CASE, r, placement=[[0, 0], [1, 1]]) for r in range(2)])
    table = directory / "reps.threads.csv"
    lines = table.read_bytes().splitlines(keepends=True)
    table.write_bytes(b"".join(lines[:-1]))  # rep 1's second item lost
    read = stored_records.read(directory, CASE)
    assert list(read.records) == [0]
    assert read.problems == [("reps.csv", 3, "not a row: placement: 2 items, not all in reps.threads.csv")]


EXPERIMENT = """
description = "a real run stored flat"
repetitions = 3
warmup = 1
[[sweep]]
binary = ["mcpi-c-pthreads"]
threads = [2]
pin = ["compact"]
params = { samples = [20000] }
"""


def test_a_real_run_case_run_reads_back_exactly_and_flat(tmp_path, bin_dir, monkeypatch):
    given, store = [], record_store.store

    def keep(directory, records, details=None):
        given.extend(json.loads(json.dumps(r)) for r in records)
        return store(directory, records, details)

    monkeypatch.setattr(runcase.record_store, "store", keep)
    experiment = tmp_path / "e.toml"
    experiment.write_text(EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    assert {r["outcome"] for r in runcase.run_case(campaign, 0, env=env)} == {"ok"}
    case_id = load_cases(campaign)[0]["case_id"]
    stored = case_records(campaign, case_id)
    assert len(stored) == 3 and [_texts(r) for r in stored] == [_texts(r) for r in given]
    assert {"probe", "placement", "sched", "pin", "clock", "result"} <= set(stored[0])
    header, *rows = layout.reps_path(campaign, case_id).read_text().splitlines()
    for row in rows:  # every field of a kernel's record in its declared columns
        cells = record_rows.typed_cells(header.split(","), record_rows.cells(row.encode()), {})
        assert record_rows.EXTRA not in cells


def test_after_the_rows_are_removed_by_hand_the_newer_items_count(tmp_path):
    directory = tmp_path / CASE
    directory.mkdir()
    record_store.store(directory, [minimal_record(CASE, 0, placement=[[0, 0], [1, 1]])])
    for name in ("facts.jsonl", "reps.csv"):  # the long tables left behind
        (directory / name).unlink()
    record_store.store(directory, [minimal_record(CASE, 0, placement=[[1, 0]])])
    read = stored_records.read(directory, CASE)
    assert not read.problems and read.records[0]["placement"] == [[1, 0]]
