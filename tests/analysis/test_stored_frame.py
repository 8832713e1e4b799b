"""The columnar path of the analysis (records/arrow_reader.py, records/stored_frame.py) gives the records
table the reference gives record by record (records/derive.py over the records sbcore/stored_records.py
counts): the same rows, columns, order, values and types, on a synthetic campaign, on the v1 fixture
stored flat and on records whose values the flat shape does not hold (extra_json). A case the columnar
path cannot take as it is goes to the one reader, with that reader's problems."""

import json
import shutil

import pandas as pd
import pytest

from analysis.records import arrow_reader, load, stored_frame
from sbcore import layout, record_store, stored_records

V1_CAMPAIGN = layout.Path(__file__).resolve().parents[1] / "fixtures" / "campaign-v1"


def parsed(campaign, monkeypatch=None):
    """The campaign's records as the analysis parses them (with monkeypatch: every case by the
    reference, record by record)."""
    keys = layout.raw_files(campaign)
    if monkeypatch is None:
        return load.parse_files(campaign, keys)
    with monkeypatch.context() as patch:
        patch.setattr(stored_frame, "invalid_cases", lambda stored: set(stored.facts_case))
        return load.parse_files(campaign, keys)


def assert_same(fast, reference):
    pd.testing.assert_frame_equal(fast.records, reference.records, check_exact=True)
    pd.testing.assert_frame_equal(
        fast.counters.reset_index(drop=True), reference.counters.reset_index(drop=True), check_exact=True
    )
    assert sorted(map(tuple, fast.problems.values)) == sorted(map(tuple, reference.problems.values))


def v1_records() -> dict[str, list[dict]]:
    out = {}
    for directory in sorted((V1_CAMPAIGN / "raw").iterdir()):
        records, _ = layout.case_lines(V1_CAMPAIGN, directory.name)
        out[directory.name] = list(records.values())
    return out


def stored_flat(tmp_path, records_of: dict[str, list[dict]]):
    """A copy of the v1 fixture with these records stored as the runner stores them, a process per
    invocation."""
    campaign = tmp_path / "flat"
    shutil.copytree(V1_CAMPAIGN, campaign)
    for case_id, records in records_of.items():
        directory = campaign / "raw" / case_id
        (directory / layout.RECORDS_FILE).unlink()
        by_process: dict = {}
        for record in records:
            by_process.setdefault(record["invocation"], []).append(record)
        for group in by_process.values():
            record_store.store(directory, group)
    return campaign


def test_the_synthetic_campaign_reads_the_same_both_ways(standard, monkeypatch):
    """v2 cases with counters, corrupt rows and a case of the older layout beside them."""
    truth, _ = standard
    cases = sorted(p.name for p in (truth.campaign_dir / "raw").iterdir())
    stored = arrow_reader.read(truth.campaign_dir / "raw", cases)
    left = stored.slow | stored_frame.invalid_cases(stored)
    corrupt = {layout.key_case(f) for f in truth.corrupt_files} - set(truth.legacy_layout)
    assert left == corrupt  # the rest by the columnar path
    fast = parsed(truth.campaign_dir)
    assert len(fast.records) > 500 and len(fast.counters) and len(fast.problems)
    assert_same(fast, parsed(truth.campaign_dir, monkeypatch))


def test_the_v1_fixture_stored_flat_reads_as_the_fixture_itself(tmp_path, monkeypatch):
    campaign = stored_flat(tmp_path, v1_records())
    fast = parsed(campaign)
    assert_same(fast, parsed(campaign, monkeypatch))
    v1 = parsed(V1_CAMPAIGN)
    where = ["record_line", "record_file"]
    pd.testing.assert_frame_equal(fast.records.drop(columns=where), v1.records.drop(columns=where))
    assert set(fast.records["record_file"].astype(str)) == {
        f"raw/{c}/reps.csv" for c in fast.records["case_id"].astype(str)
    }


def odd(records: list[dict]) -> list[dict]:
    """The records with values the flat shape does not hold, or holds in a rare way."""
    out = [dict(r) for r in records]
    out[0]["pin"] = out[0]["pin"] | {"violations": [{"thread": 0, "cpu": 1, "expected": [0]}]}
    out[1]["probe"] = {
        "before": {"cpus": [0, 1], "int_mul_s": [3e-4, None], "fp_lat_s": [2e-4, 2.5e-4]},
        "after": {"cpus": [0, 1], "int_mul_s": [3.5e-4, 3.1e-4], "fp_lat_s": [2e-4, 2e-4]},
        "runq_wait_s": 1e-4,
    }  # an older kernel's: per-CPU times, no extremes
    out[2]["result"] = {"nested": [1, 2], "pi": 3.14}
    out[2]["checksum"] = "two\nlines"
    out[3]["an_undeclared_field"] = {"x": 1}
    out[3]["rank_wall_s"] = [0.5, 0.25, None]
    out[3]["sched"] = (out[3].get("sched") or {}) | {"an_unknown_key": 1}
    return out


def with_counters(records: list[dict], odd: bool) -> list[dict]:
    """Counted metrics: of numbers (stored in facts tables), or with likwid's '-' and values not by
    hardware thread (the whole object kept in the facts line)."""
    metrics = {  # (in the order jobs/counter_record.py writes them)
        "CPI": {"per_hwthread": {"0": 1.0, "1": 1.5}, "sum": 2.5, "min": 1.0, "max": 1.5, "avg": 1.25},
        "L2 miss ratio": {"per_hwthread": {"0": None}, "sum": 0.2, "min": None, "max": 0.1, "avg": 0.1},
    }
    if odd:
        metrics["L2 miss ratio"] |= {"sum": "-", "avg": "nan", "per_hwthread": {"0": "-"}}
        metrics["Odd"] = {"sum": 1, "per_hwthread": [1, 2]}  # not by hardware thread: dropped, and named
    return [r | {"counters": {"status": "ok", "group": "CPI", "metrics": metrics}} for r in records]


def test_values_the_flat_shape_does_not_hold_read_the_same_both_ways(tmp_path, monkeypatch):
    cases = v1_records()
    first, second, third = sorted(cases, key=lambda c: -len(cases[c]))[:3]  # 4 records, 2, 2
    cases[first] = odd(cases[first])
    cases[second] = with_counters(cases[second], odd=True)
    cases[third] = with_counters(cases[third], odd=False)
    cases[third][0]["warmup_wall_s"] = [0.5, 0.25]  # the last warm-up's time is its own column
    cases[third][1]["warmup_wall_s"] = [0.4, None]
    campaign = stored_flat(tmp_path, cases)
    assert (campaign / "raw" / third / "facts.counters_metric_hwthreads.csv").is_file()
    extra = (campaign / "raw" / first / "reps.csv").read_text()
    assert extra.count('"{') >= 4  # the odd values went whole to extra_json
    fast = parsed(campaign)
    assert_same(fast, parsed(campaign, monkeypatch))
    mine = fast.records[fast.records["case_id"] == first].reset_index(drop=True)
    assert mine.loc[0, "pin_violations"] == 1 and mine.loc[1, "probe_int_mul_max_s"] == 3.5e-4
    assert mine.loc[2, "checksum"] == "two\nlines" and json.loads(mine.loc[2, "result_json"])["nested"] == [
        1,
        2,
    ]
    assert mine.loc[3, "rank_wall_max_s"] == 0.5
    counted = fast.counters[fast.counters["case_id"] == second]
    assert len(counted) == 3 * len(cases[second]) and counted["value"].isna().sum() == len(cases[second])
    dropped = fast.problems[fast.problems["reason"].str.contains("per_hwthread values dropped")]
    assert len(dropped) == len(cases[second])
    flat = fast.counters[fast.counters["case_id"] == third]
    assert len(flat) == 3 * len(cases[third]) and flat["value"].isna().sum() == len(cases[third])
    assert set(fast.records.loc[fast.records["case_id"] == third, "ctr_cpi_avg"]) == {1.25}
    warm = fast.records.loc[fast.records["case_id"] == third, "warmup_last_s"].tolist()
    assert warm[:2] == [0.25, 0.4] and all(pd.isna(w) for w in warm[2:]), warm


def _plant(campaign, cases: list[str]) -> dict[str, str]:
    """One defect per case, each of a kind the columnar path leaves to the one reader."""
    raw = campaign / "raw"
    reps = [raw / c / stored_records.REPS_FILE for c in cases]
    lines = reps[0].read_text().splitlines(keepends=True)
    reps[0].write_text("".join(lines + [lines[1]]))  # a repetition twice
    lines = reps[1].read_text().splitlines(keepends=True)
    reps[1].write_text("".join(lines + ["99" + lines[1][lines[1].index(",") :]]))  # a process without facts
    threads = raw / cases[2] / "reps.threads.csv"
    lines = threads.read_text().splitlines(keepends=True)
    threads.write_text("".join(lines[:-1]))  # an item of an array missing
    with reps[3].open("a") as handle:
        handle.write(lines[1][:10])  # a cut last row
    header, *rows = reps[4].read_text().splitlines(keepends=True)
    cells = rows[0].split(",")
    cells[header.split(",").index("wall_s")] = "0"
    reps[4].write_text(header + ",".join(cells) + "".join(rows[1:]))  # a time not above 0
    facts = raw / cases[5] / stored_records.FACTS_FILE
    facts.write_text(facts.read_text().replace('"threads":', '"threads":-', 1))  # a process of -n threads
    kinds = ("twice", "no facts", "item missing", "cut", "wall_s 0", "threads < 1")
    return dict(zip(cases, kinds, strict=True))


def test_a_case_the_columnar_path_cannot_take_is_read_by_the_one_reader(tmp_path, monkeypatch):
    campaign = stored_flat(tmp_path, v1_records())
    cases = sorted(p.name for p in (campaign / "raw").iterdir())
    planted = _plant(campaign, cases[:6])
    stored = arrow_reader.read(campaign / "raw", cases)
    assert stored.slow == {c for c, kind in planted.items() if kind == "cut"}
    assert stored_frame.invalid_cases(stored) == {c for c, kind in planted.items() if kind != "cut"}
    fast = parsed(campaign)
    assert_same(fast, parsed(campaign, monkeypatch))
    for case_id in planted:
        read = stored_records.read(campaign / "raw" / case_id, case_id)
        expected = {
            (f"raw/{case_id}/{name}" + (f":{line}" if line else ""), why) for name, line, why in read.problems
        }
        mine = {(f, r) for f, r in fast.problems.values if f.startswith(f"raw/{case_id}/")}
        assert expected and mine == expected, planted[case_id]
        assert sorted(fast.records.loc[fast.records["case_id"] == case_id, "rep"]) == sorted(read.records)


@pytest.mark.parametrize("cut", [b"\n\n", b"\r\n"])
def test_a_blank_line_or_a_carriage_return_sends_the_case_to_the_one_reader(tmp_path, cut):
    campaign = stored_flat(tmp_path, v1_records())
    case_id = sorted(p.name for p in (campaign / "raw").iterdir())[0]
    path = campaign / "raw" / case_id / stored_records.REPS_FILE
    path.write_bytes(path.read_bytes().replace(b"\n", cut, 2))
    assert case_id in arrow_reader.read(campaign / "raw", [case_id]).slow
