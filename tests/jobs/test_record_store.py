"""The per-case record file: appended, never rewritten, each repetition once, cut lines never read."""

import json
import multiprocessing
import shutil
import subprocess

import pytest

from sbcore import layout, record_store
from tests.records import minimal_record

CASE = "c"  # the records live in raw/c/: record_store checks a record's case_id against its directory


def rec(rep: int, **extra) -> dict:
    return minimal_record(CASE, rep, **({"wall_s": 0.5 + rep} | extra))


def _case_dir(tmp_path):
    directory = tmp_path / CASE
    directory.mkdir(exist_ok=True)
    return directory


def test_appends_and_keeps_the_first_record_of_a_repetition(tmp_path):
    path = _case_dir(tmp_path) / "records.jsonl"
    assert record_store.append(path, [rec(0), rec(1)]) == [rec(0), rec(1)]
    before = path.read_bytes()
    # A second runner racing on the same invocation: its rep 1 is not added, its rep 2 is.
    assert record_store.append(path, [rec(1, wall_s=9.0), rec(2)]) == [rec(2)]
    assert path.read_bytes().startswith(before)
    assert record_store.reps_of(path.read_bytes()) == {0: rec(0), 1: rec(1), 2: rec(2)}
    assert path.read_bytes().count(b"\n") == 3


def test_a_cut_last_line_is_not_read_and_does_not_swallow_the_next(tmp_path):
    path = _case_dir(tmp_path) / "records.jsonl"
    record_store.append(path, [rec(0)])
    with path.open("ab") as handle:  # a crash in the middle of a write
        handle.write(record_store.encode(rec(1))[:20])
    assert record_store.reps_of(path.read_bytes()) == {0: rec(0)}
    assert record_store.incomplete_tail(path.read_bytes())
    assert record_store.append(path, [rec(1)]) == [rec(1)]
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[2]) == rec(1)  # on a line of its own, after the cut one
    assert record_store.reps_of(path.read_bytes()) == {0: rec(0), 1: rec(1)}


def test_failed_and_unparsable_lines_do_not_count_as_done(tmp_path):
    data = (
        record_store.encode(rec(0, status="failed"))
        + b"{not json\n"
        + record_store.encode(rec(1))
        + record_store.encode(rec(2) | {"rep": "x"})
    )
    assert record_store.reps_of(data) == {1: rec(1)}


def _append_many(args):
    path, start = args
    for k in range(start, start + 40):
        record_store.append(path, [rec(k % 60, writer=start)])


def test_concurrent_writers_record_each_repetition_once(tmp_path):
    path = _case_dir(tmp_path) / "records.jsonl"
    # forkserver: a fork of the test process, which has threads (pyarrow's), can deadlock in the child
    with multiprocessing.get_context("forkserver").Pool(4) as pool:
        pool.map(_append_many, [(path, s) for s in (0, 10, 20, 30)])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    reps = [json.loads(line)["rep"] for line in lines[:-1]]  # every line whole
    assert sorted(reps) == list(range(60))


def test_case_records_read_both_layouts(tmp_path):
    case = {"case_id": "c", "reps": 4}
    directory = layout.case_dir(tmp_path, "c")
    directory.mkdir(parents=True)
    (directory / layout.rep_name(0)).write_text(json.dumps(rec(0)))  # an older campaign's file
    record_store.append(layout.records_path(tmp_path, "c"), [rec(1), rec(2), rec(7)])
    assert layout.ok_records(tmp_path, case) == {0: rec(0), 1: rec(1), 2: rec(2)}  # rep 7 is not planned


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed (scripts/setup.sh installs it)")
def test_a_person_reads_it_with_jq(tmp_path):
    path = _case_dir(tmp_path) / "records.jsonl"
    record_store.append(path, [rec(0), rec(1)])
    record_store.append(path, [rec(2)])
    out = subprocess.run(
        ["jq", "-c", "select(.rep == 1) | .wall_s", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == "1.5"


def test_detail_lines_go_beside_the_records_written_and_only_those(tmp_path):
    path, beside = _case_dir(tmp_path) / "records.jsonl", tmp_path / "probes.jsonl"
    details = {k: {"rep": k, "before": {"cpus": [k]}} for k in range(3)}
    record_store.append(path, [rec(0), rec(1)], details, beside)
    # A racing runner's rep 1 is not added, nor is its detail; rep 2 without a detail line adds none.
    record_store.append(path, [rec(1, wall_s=9.0), rec(2)], {1: {"rep": 1, "late": True}}, beside)
    lines = [json.loads(line) for line in beside.read_text().splitlines()]
    assert lines == [details[0], details[1]]
    record_store.append(path, [rec(3)], {3: details[2] | {"rep": 3}}, beside)
    assert [json.loads(line)["rep"] for line in beside.read_text().splitlines()] == [0, 1, 3]


def test_a_cut_detail_line_does_not_swallow_the_next(tmp_path):
    path, beside = _case_dir(tmp_path) / "records.jsonl", tmp_path / "probes.jsonl"
    record_store.append(path, [rec(0)], {0: {"rep": 0}}, beside)
    with beside.open("a") as handle:
        handle.write('{"rep": 1, "bef')  # a writer killed between the two writes of rep 1
    record_store.append(path, [rec(1)], {1: {"rep": 1}}, beside)
    assert beside.read_text().splitlines() == ['{"rep":0}', '{"rep": 1, "bef', '{"rep":1}']
