"""The parsed-rows cache in Parquet (analysis/records/cache.py): tables come back exactly as written,
and whatever is not a readable chunk of this layout is removed and named."""

import json

import numpy as np
import pandas as pd

from analysis.records.cache import CACHE_VERSION, KEYS_FILE, read_chunks, write_chunk


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": pd.Categorical(["b", "a", "b"]),
            "rep": np.array([0, 1, 2], dtype=np.int16),
            "wall_s": [0.1, np.nan, 1e-300],
            "never": pd.Categorical([None] * 3, categories=pd.Index([], dtype=object)),  # no record has it
            "text": ["x", None, "ü 🚀"],
            "ok": [True, False, True],
        }
    )


def test_chunks_come_back_as_written(tmp_path):
    keys = {"raw/a/records.jsonl#100": None, "raw/b/records.jsonl#50": None}
    write_chunk(tmp_path, keys, {"records": frame(), "failed": frame().head(0)})
    write_chunk(tmp_path, {"raw/c/rep-0.json": None}, {"records": frame().tail(1), "failed": frame()})
    notes: list[str] = []
    chunks = read_chunks(tmp_path, ("records", "failed"), notes)
    assert notes == [] and [list(k) for k, _ in chunks] == [list(keys), ["raw/c/rep-0.json"]]
    pd.testing.assert_frame_equal(chunks[0][1]["records"], frame(), check_exact=True)
    empty = chunks[0][1]["failed"]  # (an empty categorical keeps no categories: no row names one)
    assert list(empty.columns) == list(frame().columns) and len(empty) == 0
    pd.testing.assert_frame_equal(chunks[1][1]["records"], frame().tail(1).reset_index(drop=True))


def test_what_is_not_a_readable_chunk_is_removed_with_a_note(tmp_path):
    write_chunk(tmp_path, {"k": None}, {"records": frame()})
    (tmp_path / "chunk-000000.pkl").write_bytes(b"an older layout")
    (tmp_path / ".chunk-000009.tmp").mkdir()  # a write cut short
    old = tmp_path / "chunk-000005"
    old.mkdir()
    (old / KEYS_FILE).write_text(json.dumps({"version": CACHE_VERSION - 1, "keys": ["k"]}))
    torn = tmp_path / "chunk-000006"
    torn.mkdir()
    (torn / KEYS_FILE).write_text(json.dumps({"version": CACHE_VERSION, "keys": ["k"]}))  # no tables
    notes: list[str] = []
    chunks = read_chunks(tmp_path, ("records",), notes)
    assert len(chunks) == 1 and len(notes) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunk-000000"]
    assert any("cache version" in n for n in notes) and any(".tmp" in n for n in notes)
