"""The no-loss check of records stored once per process (scalebench.run/2): the campaign written by the
runner in records format v1 (tests/fixtures/campaign-v1) analysed as it is and, converted to v2 through
the one writer (sbcore/record_store.py's store), analysed again: every table the same."""

import shutil

import pandas as pd

from analysis.pipeline import Options, analyze, write_tables
from sbcore import layout, record_store
from tests.jobs.test_stored_records import V1_CAMPAIGN, _processes


def _tables(campaign, big_csv=True) -> dict[str, pd.DataFrame]:
    result = analyze(campaign, Options(n_resamples=200, seed=1, processes=1, use_cache=False))
    assert not len(result.loaded.problems), result.loaded.problems
    return {p.name: p for p in write_tables(result, big_csv=big_csv)}


def test_every_table_is_the_same_after_converting_the_v1_fixture_to_v2(tmp_path):
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    shutil.copytree(V1_CAMPAIGN, v1)
    shutil.copytree(V1_CAMPAIGN, v2)
    for directory in sorted((v2 / layout.RAW_DIR).iterdir()):
        records, problems = layout.case_lines(v2, directory.name)
        (directory / layout.RECORDS_FILE).unlink()
        for process in _processes(records.values()):
            record_store.store(directory, process)
        assert not (directory / layout.RECORDS_FILE).exists() and (directory / "reps.csv").exists()
    before, after = _tables(v1), _tables(v2)
    assert sorted(before) == sorted(after) and "records.csv" in before
    for name, path in before.items():
        if name.endswith(".parquet"):
            continue
        if name == "records.csv":  # the two columns that say where a record is stored
            old, new = pd.read_csv(path), pd.read_csv(after[name])
            assert old["file"].str.endswith("/records.jsonl").all()
            assert new["file"].str.endswith("/reps.csv").all()
            assert (new["record_line"] == old["record_line"] + 1).all()  # below the header, in order
            where = ["file", "record_line"]
            pd.testing.assert_frame_equal(old.drop(columns=where), new.drop(columns=where))
            continue
        assert path.read_bytes() == after[name].read_bytes(), name
