"""Validity checks and loading, against what the synthetic generator planted."""

import json
import shutil

import numpy as np

from analysis.records.load import load_records
from sbcore import layout, record_store, stored_records
from tests.records import case_records


def test_planted_checksum_mismatch_is_caught_and_excluded_from_speedups(standard):
    truth, result = standard
    s = result.summary.set_index("case_id")
    assert truth.wrong_checksum
    for cid in truth.wrong_checksum:
        assert s.loc[cid, "checksum_status"] == "mismatch" and not s.loc[cid, "valid"]
    others = s.drop(index=truth.wrong_checksum)
    assert others["checksum_status"].eq("ok").all()
    sp = result.speedup.set_index("case_id")
    assert sp.loc[truth.wrong_checksum, "speedup"].isna().all()
    assert not set(truth.wrong_checksum) & set(sp["baseline_case_id"].dropna())


def test_placement_violations_failed_missing_and_partial_cases_are_listed(standard):
    truth, result = standard
    assert set(result.violations["case_id"]) == set(truth.violations)
    state = result.completeness.set_index("case_id")["state"]
    assert {c for c in state.index if state[c] == "failed"} == set(truth.failed)
    assert {c for c in state.index if state[c] == "missing"} == set(truth.missing)
    assert {c for c in state.index if state[c] == "partial"} == set(truth.partial)
    reasons = result.completeness.set_index("case_id").loc[truth.failed, "reason"]
    assert reasons.str.contains("timeout").all()


def test_counters_unavailable_are_reported_with_the_reason(standard):
    _, result = standard
    c = result.counters
    unavailable = c[c["counters_status"] == "unavailable"]
    assert set(unavailable["node_type"]) == {"workstation"}
    assert unavailable["counters_reason"].str.contains("MSR").all()
    assert (c[c["counters_status"] == "ok"]["node_type"] == "synth16").all()


def test_noisy_case_is_flagged(standard):
    _, result = standard
    s = result.summary
    planted = s[(s["node_type"] == "workstation") & (s["model"] == "omp") & (s["threads"] == 2)]
    assert planted["noisy"].all()  # sigma 0.3 planted there
    quiet = s[(s["node_type"] == "synth16") & (s["binary"] == "mandelbrot-c-omp")]
    assert not quiet["noisy"].any()


def test_corrupt_files_are_skipped_each_with_a_reason(standard):
    truth, result = standard
    problems = result.loaded.problems.set_index("file")["reason"]
    assert set(problems.index) == set(truth.corrupt_files)
    expect = {
        "bad-json": "not valid JSON",
        "bad-row": "not a row: 2 cells",
        "truncated": "truncated",
        "wrong-schema": "schema",
        "missing-field": "wall_s",
        "wrong-type": "threads",
        "text-in-number": "wall_s: 'fast' is not a number",
    }
    for rel, kind in truth.corrupt_files.items():
        assert expect[kind] in problems[rel], (kind, problems[rel])
    # The rest of that case still counts: its planned repetitions are all there.
    assert len(result.summary) == len(truth.cases) - len(truth.missing) - len(truth.failed)


def test_cache_is_reused_and_new_files_are_appended(standard, tmp_path):
    truth, _ = standard
    copy = tmp_path / truth.campaign_dir.name
    shutil.copytree(truth.campaign_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    first = load_records(copy, processes=1)
    again = load_records(copy, processes=1)
    assert first.n_parsed == first.n_files
    # Cases with a problem are never cached: their files (and only theirs) are parsed again.
    bad_cases = {layout.key_case(f) for f in truth.corrupt_files}
    in_bad_cases = [k for k in layout.raw_files(copy) if layout.key_case(k) in bad_cases]
    assert len(first.problems) == len(truth.corrupt_files) and again.n_parsed == len(in_bad_cases)
    key = ["case_id", "rep"]
    a = first.records.sort_values(key, ignore_index=True)
    b = again.records.sort_values(key, ignore_index=True)
    assert np.array_equal(a["wall_s"].to_numpy(), b["wall_s"].to_numpy())
    # A rerun stores a process's repetition in a case's reps.csv: only that case is parsed, and it shows up.
    case_dir = next(
        p for p in (copy / "raw").iterdir() if p.name not in bad_cases and (p / "reps.csv").exists()
    )
    record = case_records(copy, case_dir.name)[0]
    assert record_store.store(case_dir, [record | {"rep": 99, "invocation": 99}])
    third = load_records(copy, processes=1)
    in_case = [k for k in layout.raw_files(copy) if layout.key_case(k) == case_dir.name]
    assert third.n_parsed == len(in_case) + len(in_bad_cases) and len(in_case) <= len(layout.STORED_FILES)
    assert len(third.records) == len(first.records) + 1
    assert 99 in set(third.records.loc[third.records["case_id"] == case_dir.name, "rep"])
    assert len([p for p in (copy / "analysis" / ".cache").glob("chunk-*") if p.is_dir()]) == 2


def test_parallel_and_serial_parsing_agree(standard, tmp_path):
    truth, _ = standard
    from analysis.records import load

    serial = load.parse_files(truth.campaign_dir, layout.raw_files(truth.campaign_dir))
    old = load.PARALLEL_THRESHOLD, load.CHUNK_FILES
    load.PARALLEL_THRESHOLD, load.CHUNK_FILES = 0, 100
    try:
        parallel = load.load_records(truth.campaign_dir, processes=2, use_cache=False)
    finally:
        load.PARALLEL_THRESHOLD, load.CHUNK_FILES = old
    assert len(parallel.records) == len(serial.records)
    key = ["case_id", "rep"]
    assert (
        parallel.records[key]
        .astype(str)
        .sort_values(key, ignore_index=True)  # the same rows; the order they are read in may differ
        .equals(serial.records[key].astype(str).sort_values(key, ignore_index=True))
    )
    assert len(parallel.problems) == len(serial.problems)


def test_cases_that_leave_options_at_their_default_are_still_checked(standard, tmp_path):
    """Real plans omit options left at the kernel default (e.g. no `inner`): records say what ran."""
    from analysis.pipeline import Options, analyze

    truth, _ = standard
    copy = tmp_path / truth.campaign_dir.name
    shutil.copytree(truth.campaign_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    lines = []
    for line in (copy / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        case["params"].pop("inner")
        lines.append(json.dumps(case))
    (copy / "cases.jsonl").write_text("\n".join(lines) + "\n")
    result = analyze(copy, Options(n_resamples=200))
    status = result.summary.set_index("case_id")["checksum_status"]
    assert (status[truth.wrong_checksum] == "mismatch").all()
    assert (status.drop(index=truth.wrong_checksum) == "ok").all()


def test_older_rep_file_and_a_line_for_the_same_repetition_agree_everywhere(standard, tmp_path):
    """A resumed campaign of the older layout: rep-<k>.json files beside records.jsonl. Where both hold a
    repetition, the older file counts for the analysis as for status and resume; the line is reported."""
    truth, _ = standard
    copy = tmp_path / truth.campaign_dir.name
    shutil.copytree(truth.campaign_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    case_id = truth.legacy_layout[0]
    older = json.loads((copy / "raw" / case_id / "rep-0.json").read_text())
    assert record_store.append(layout.records_path(copy, case_id), [older | {"wall_s": 99.0}])
    loaded = load_records(copy, processes=1, use_cache=False)
    mine = loaded.records[loaded.records["case_id"] == case_id]
    assert mine.loc[mine["rep"] == 0, "wall_s"].tolist() == [older["wall_s"]]
    assert f"raw/{case_id}/records.jsonl:1" in set(loaded.problems["file"])
    assert layout.case_records(copy, case_id)[0]["wall_s"] == older["wall_s"]


def test_a_file_of_valid_json_with_misplaced_records_is_checked_line_by_line(standard, tmp_path):
    """A records.jsonl whose lines all decode is accepted whole only when every record is in place; a
    repetition twice, a record of another case, or params that are not an object are each reported at
    their line, and the other lines of the file still count."""
    truth, _ = standard
    copy = tmp_path / truth.campaign_dir.name
    shutil.copytree(truth.campaign_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    skip = truth.missing + truth.failed + truth.partial + truth.legacy_layout
    complete = [c["case_id"] for c in truth.cases if c["case_id"] not in skip]
    case_id, other = complete[1], complete[2]  # the first holds planted corrupt lines
    good = case_records(copy, case_id)
    for stored in layout.case_dir(copy, case_id).iterdir():  # the case as a campaign before v2 holds it
        if stored_records.is_v2_file(stored.name):
            stored.unlink()
    path = layout.records_path(copy, case_id)
    bad = [
        good[1] | {"wall_s": 99.0},  # rep 1 again
        good[0] | {"rep": 1000, "case_id": other},  # another case's directory
        good[0] | {"rep": 1001, "params": [1, 2]},  # params not an object
        good[0] | {"rep": 1002},  # in place: counts
    ]
    path.write_bytes(b"".join(record_store.encode(r) for r in good + bad))
    loaded = load_records(copy, processes=1, use_cache=False)
    mine = loaded.records[loaded.records["case_id"] == case_id]
    assert sorted(mine["rep"]) == sorted([r["rep"] for r in good] + [1002])
    assert 99.0 not in set(mine["wall_s"])
    reasons = dict(zip(loaded.problems["file"], loaded.problems["reason"], strict=True))
    where = f"raw/{case_id}/records.jsonl"
    n = len(good)
    assert "recorded twice" in reasons[f"{where}:{n + 1}"]
    assert "does not match its directory" in reasons[f"{where}:{n + 2}"]
    assert "params: [1, 2] is not of type dict" in reasons[f"{where}:{n + 3}"]
    assert f"{where}:{n + 4}" not in reasons
    assert mine.loc[mine["rep"] == 1002, "record_line"].tolist() == [n + 4]


def test_a_case_s_files_stay_in_one_chunk_however_the_count_falls(monkeypatch):
    from analysis.records import load

    monkeypatch.setattr(load, "CHUNK_FILES", 3)
    keys = {
        f"raw/{case}/{name}#1": None
        for case in ("a", "b", "c")
        for name in ("facts.jsonl", "reps.csv", "reps-1.csv")[: {"a": 2, "b": 3, "c": 1}[case]]
    }
    chunks = load.case_chunks(keys)
    assert [list(c) for c in chunks] == [
        [
            "raw/a/facts.jsonl#1",
            "raw/a/reps.csv#1",
            "raw/b/facts.jsonl#1",
            "raw/b/reps.csv#1",
            "raw/b/reps-1.csv#1",
        ],
        ["raw/c/facts.jsonl#1"],
    ]
    assert {k for c in chunks for k in c} == set(keys)
