"""Records stored once per process (scalebench.run/2: facts.jsonl + reps.csv, sbcore/record_store.py's
store) and the one reader of a case directory in either layout (sbcore/stored_records.py)."""

import collections
import json
import multiprocessing
import shutil

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from sbcore import layout, record_fields, record_rows, record_store, stored_records
from tests.records import minimal_record

CASE = "c"
V1_CAMPAIGN = layout.Path(__file__).resolve().parents[1] / "fixtures" / "campaign-v1"


def rec(rep: int, **extra) -> dict:
    return minimal_record(CASE, rep, **({"wall_s": 0.5 + rep, "invocation": 0} | extra))


def _dir(tmp_path):
    directory = tmp_path / CASE
    directory.mkdir(exist_ok=True)
    return directory


def _read(directory):
    return stored_records.read(directory, directory.name)


def test_round_trip_and_the_first_record_of_a_repetition_wins(tmp_path):
    directory = _dir(tmp_path)
    assert record_store.store(directory, [rec(0), rec(1)]) == [rec(0), rec(1)]
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    # A second runner racing on the same invocation: its rep 1 is not added, its rep 2 is.
    assert record_store.store(directory, [rec(1, wall_s=9.0, invocation=1), rec(2, invocation=1)]) == [
        rec(2, invocation=1)
    ]
    for name, data in before.items():
        assert (directory / name).read_bytes().startswith(data)  # appended, never rewritten
    read = _read(directory)
    assert read.records == {0: rec(0), 1: rec(1), 2: rec(2, invocation=1)} and not read.problems
    facts = [json.loads(line) for line in (directory / "facts.jsonl").read_text().splitlines()]
    assert [f["process"] for f in facts] == [0, 1] and facts[0]["store"] == record_fields.STORE_SCHEMA
    # what is constant for the process is written once, not on every row
    assert "kernel" not in (directory / "reps.csv").read_text() and facts[0]["kernel"] == "mcpi"


def test_a_process_field_differing_within_a_process_fails_before_anything_is_written(tmp_path):
    directory = _dir(tmp_path)
    with pytest.raises(record_rows.RowProblem, match="'threads' differs within one process"):
        record_store.store(directory, [rec(0), rec(1, threads=2)])
    with pytest.raises(record_rows.RowProblem, match="'hostname' differs within one process"):
        record_store.store(directory, [rec(0, hostname="a"), rec(1)])  # present on one only
    with pytest.raises(record_rows.RowProblem, match="'wall_s'.*not of its declared type number"):
        record_store.store(directory, [rec(0, wall_s="fast")])
    assert not (directory / "facts.jsonl").exists() and _read(directory).records == {}


HOSTILE = ["a,b", 'say "hi"', "two\nlines", "cr\rhere", "", "null", "trailing,", '"', "é ünï"]


def test_hostile_text_survives_a_round_trip(tmp_path):
    directory = _dir(tmp_path)
    records = [
        rec(k, command=["prog", *HOSTILE], checksum=text, started=text, result={"note": text, "k": [text]})
        for k, text in enumerate(HOSTILE)
    ]
    records.append(rec(len(HOSTILE), command=["prog", *HOSTILE], started=None, clock_ghz=None))
    record_store.store(directory, records)
    read = _read(directory)
    assert read.records == {r["rep"]: r for r in records} and not read.problems
    # every row is one line: a newline in a value never splits one
    assert len((directory / "reps.csv").read_bytes().split(b"\n")) == len(records) + 2


def plant_bad_rows(reps):
    """After reps.csv's rows of reps 0 and 1: a row of a process without a facts line, rep 1 again, a
    row that does not decode and a cut one."""
    rows = reps.read_bytes().split(b"\n")
    with reps.open("ab") as handle:
        handle.write(rows[2].replace(b"0,", b"7,", 1) + b"\n")  # process 7 has no facts line
        handle.write(rows[2] + b"\n")  # rep 1 again
        handle.write(b"0,not,a,row\n")
        handle.write(rows[1][:25])  # a writer cut short


def test_cut_rows_missing_facts_duplicates_and_wrong_cases_are_named_and_not_counted(tmp_path):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0), rec(1)])
    plant_bad_rows(directory / "reps.csv")
    read = _read(directory)
    assert set(read.records) == {0, 1}
    assert [(name, line) for name, line, _ in read.problems] == [
        ("reps.csv", 4), ("reps.csv", 5), ("reps.csv", 6), ("reps.csv", 7)
    ]  # fmt: skip
    whys = [why for _, _, why in read.problems]
    assert "process 7 has no facts line" in whys[0] and "rep 1 is recorded twice" in whys[1]
    assert "not a row" in whys[2] and whys[3] == stored_records.record_lines.TRUNCATED
    # the next writer starts on a new line: its row counts
    record_store.store(directory, [rec(2, invocation=1)])
    assert set(_read(directory).records) == {0, 1, 2}
    # a record of another case in this directory is named, not counted
    record_store.store(directory, [rec(3, invocation=2) | {"case_id": "other"}])
    assert 3 not in _read(directory).records
    assert "case_id 'other' does not match its directory 'c'" in _read(directory).problems[-1][2]


def test_a_cut_facts_line_leaves_its_rows_uncounted(tmp_path):
    directory = _dir(tmp_path)
    with (directory / "facts.jsonl").open("wb") as handle:
        handle.write(b'{"process":0,"kern')  # killed before its fsync completed
    (directory / "reps.csv").write_bytes(
        record_rows.HEADER + record_rows.row(record_rows.split([rec(0)])[1][0], 0)
    )
    assert _read(directory).records == {}
    assert _read(directory).problems[0] == ("facts.jsonl", 1, stored_records.record_lines.TRUNCATED)
    assert "process 0 has no facts line" in _read(directory).problems[1][2]
    (directory / "reps.csv").unlink()
    record_store.store(directory, [rec(0)])
    read = _read(directory)
    assert read.records == {0: rec(0)}
    assert json.loads((directory / "facts.jsonl").read_text().splitlines()[1])["process"] == 1
    assert [(name, line) for name, line, _ in read.problems] == [("facts.jsonl", 1)]
    assert read.problems[0][2].startswith("not a facts line")


def test_a_mixed_v1_and_v2_case_counts_v1_first(tmp_path):
    directory = layout.case_dir(tmp_path, CASE)
    directory.mkdir(parents=True)
    record_store.append(directory / layout.RECORDS_FILE, [rec(0), rec(1)])  # an old campaign
    with (directory / "reps.csv").open("ab"):
        pass
    # resumed by this code: rep 1 written again in v2 (a race) does not replace the v1 one
    (directory / "facts.jsonl").write_bytes(record_rows.facts_line(record_rows.split([rec(1)])[0], 0))
    (directory / "reps.csv").write_bytes(
        record_rows.HEADER + record_rows.row(record_rows.split([rec(1, wall_s=9.0)])[1][0], 0)
    )
    assert record_store.store(directory, [rec(1, invocation=3), rec(2, invocation=3)]) == [
        rec(2, invocation=3)
    ]
    records, problems = layout.case_lines(tmp_path, CASE, {"case_id": CASE, "reps": 3})
    assert records == {0: rec(0), 1: rec(1), 2: rec(2, invocation=3)}
    assert problems == [f"raw/{CASE}/reps.csv:2: rep 1 is recorded twice; the first record counts"]


def test_a_reps_file_of_another_version_is_never_rewritten(tmp_path):
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0)])
    older = directory / "reps.csv"
    foreign = older.read_bytes().replace(b"process,checksum", b"process,checksum_old", 1)
    older.write_bytes(foreign)  # as another version would have written it: read by column name
    record_store.store(directory, [rec(1, invocation=1)])
    assert older.read_bytes() == foreign and (directory / "reps-1.csv").read_bytes().startswith(
        record_rows.HEADER
    )
    read = _read(directory)
    # both files read, by column name: the renamed column leaves rep 0 without its checksum
    assert read.records == {1: rec(1, invocation=1)}
    assert read.problems == [("reps.csv", 2, "schema: record: 'checksum' is a required property")]


def test_reading_some_repetitions_gives_them_as_a_whole_read_does(tmp_path):
    """What the writer asks before it appends (read with `reps`): the same records of those repetitions,
    whatever the rows of the others hold (a row of a process without facts, a duplicate, a broken row, a
    cut one, a broken long-table row)."""
    directory = _dir(tmp_path)
    record_store.store(directory, [rec(0), rec(1, placement=[{"start_cpu": 0, "end_cpu": 0}])])
    record_store.store(directory, [rec(2, invocation=1), rec(3, invocation=1)])
    reps = directory / "reps.csv"
    plant_bad_rows(reps)
    threads = stored_records.table_path(reps, "threads")
    with threads.open("ab") as handle:
        handle.write(b"1,3,0,x,y\n")  # a broken item of rep 3
    record_store.store(directory, [rec(4, invocation=2)])
    whole = _read(directory)
    assert set(whole.records) == {0, 1, 2, 3, 4} and len(whole.problems) >= 3
    for wanted in ({0}, {1}, {3}, {4}, {1, 2}, {5}, set(range(6))):
        some = stored_records.read(directory, directory.name, reps=wanted)
        assert some.records == {k: v for k, v in whole.records.items() if k in wanted}, wanted
        assert some.processes == whole.processes


def _store_many(args):
    directory, start = args
    for k in range(start, start + 40):
        record_store.store(directory, [rec(k % 60, invocation=start)])


def test_concurrent_writers_store_each_repetition_once(tmp_path):
    directory = _dir(tmp_path)
    with multiprocessing.get_context("forkserver").Pool(4) as pool:  # a fork of a threaded process can hang
        pool.map(_store_many, [(directory, s) for s in (0, 10, 20, 30)])
    read = _read(directory)
    assert sorted(read.records) == list(range(60)) and not read.problems
    assert (directory / "reps.csv").read_bytes().count(b"\n") == 61  # the header, a row per repetition


def _processes(records):
    by_process = collections.defaultdict(list)
    for r in records:
        by_process[(r.get("invocation"), json.dumps(r.get("slurm")), r.get("trial"))].append(r)
    return list(by_process.values())


def test_the_v1_fixture_converted_to_v2_reads_back_the_same_records(tmp_path):
    campaign = tmp_path / "v2"
    shutil.copytree(V1_CAMPAIGN, campaign)
    for directory in sorted((campaign / "raw").iterdir()):
        v1, problems = layout.case_lines(campaign, directory.name)
        assert v1 and not problems
        (directory / layout.RECORDS_FILE).unlink()
        for records in _processes(v1.values()):
            record_store.store(directory, records)
        assert layout.case_lines(campaign, directory.name) == (v1, [])
        # a columnar library reads the rows with the column types the declaration gives
        table = _read_arrow(directory / "reps.csv", record_rows.COLUMN_TYPES)
        assert table.num_rows == len(v1) and sorted(table["rep"].to_pylist()) == sorted(v1)
        assert table["wall_s"].to_pylist() == [v1[k]["wall_s"] for k in table["rep"].to_pylist()]
        # flat: every field of these records in its declared columns, none left in extra_json
        assert table[record_rows.EXTRA].null_count == table.num_rows
        reps = table["rep"].to_pylist()
        mins = table["probe_min_s_int_mul"].to_pylist()
        assert mins == [v1[k]["probe"]["min_s"]["int_mul"] for k in reps]
        threads = _read_arrow(directory / "reps.threads.csv", record_rows.TABLES["threads"])
        assert threads.num_rows == sum(len(r["placement"]) for r in v1.values())
        firsts = [
            (r, i, c)
            for r, i, c in zip(
                *(threads[k].to_pylist() for k in ("rep", "index", "placement_start_cpu")), strict=True
            )
        ]
        assert firsts == [(k, i, pair[0]) for k in reps for i, pair in enumerate(v1[k]["placement"])]


def _read_arrow(path, columns: dict[str, str]):
    """A columnar library reads the file with the column types the declaration gives (none inferred)."""
    return pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=_arrow_types(columns),
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )


def _arrow_types(columns: dict[str, str]) -> dict:
    kinds = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_()}
    return {name: kinds[kind] for name, kind in columns.items()}


def test_every_field_has_a_storage_level():
    assert {f.level for f in record_fields.FIELDS} == {record_fields.PROCESS, record_fields.REP}
    assert record_rows.COLUMNS[0] == "process" and len(set(record_rows.COLUMNS)) == len(record_rows.COLUMNS)
