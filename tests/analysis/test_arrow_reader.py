"""The columnar reader of the flat layout (analysis/records/arrow_reader.py) gives the values the one
reader of a case directory gives (sbcore/stored_records.py), typed as declared."""

import shutil

import pyarrow as pa

from analysis.records import arrow_reader
from sbcore import layout, record_store

V1_CAMPAIGN = layout.Path(__file__).resolve().parents[1] / "fixtures" / "campaign-v1"


def test_the_v1_fixture_stored_flat_reads_back_in_columns(tmp_path):
    campaign = tmp_path / "v2"
    shutil.copytree(V1_CAMPAIGN, campaign)
    expected = {}
    for directory in sorted((campaign / "raw").iterdir()):
        records, _ = layout.case_lines(campaign, directory.name)
        (directory / layout.RECORDS_FILE).unlink()
        by_process = {}
        for record in records.values():
            by_process.setdefault(record["invocation"], []).append(record)
        for group in by_process.values():
            record_store.store(directory, group)
        expected |= {(directory.name, k): r for k, r in records.items()}
    case_ids = sorted(p.name for p in (campaign / "raw").iterdir())
    read = arrow_reader.read(campaign / "raw", case_ids)
    table = arrow_reader.joined(read)
    assert not read.left and table.num_rows == len(expected)
    rows = table.to_pylist()
    for row in rows:
        record = expected[(row["case_dir"], row["rep"])]
        assert row["wall_s"] == record["wall_s"] and row["kernel"] == record["kernel"]
        assert (
            row["threads"] == record["threads"]
            and row["probe_min_s_int_mul"] == record["probe"]["min_s"]["int_mul"]
        )
        assert row["clock_method"] == record["clock"]["method"] and row["placement_n"] == len(
            record["placement"]
        )
    assert table.schema.field("wall_s").type == pa.float64() and table.schema.field("rep").type == pa.int64()
    results = read.tables["results"].to_pylist()
    assert len(results) == sum(len(r["result"]) for r in expected.values())
    first = [r for r in results if (r["case_dir"], r["rep"]) == min(expected)]
    record = expected[min(expected)]
    assert [
        (r["result_key"], r["result_integer"] if r["result_integer"] is not None else r["result_number"])
        for r in first
    ] == list(record["result"].items())
