"""The parsed rows of the campaign's files, kept between analyses in `analysis/.cache/` (an
accelerator only: deleting it changes no result). Each chunk is a directory `chunk-<n>/` holding the
files it was parsed from (`keys.json`, with the layout's version) and one Parquet file per table; a
chunk is written under a temporary name and renamed into place whole. A chunk that cannot be read
(an older layout, a torn write) is dropped and its files are parsed again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

CACHE_VERSION = 9  # bump when the parsed-row layout changes
KEYS_FILE = "keys.json"


def write_chunk(cache_dir: Path, keys: dict[str, None], tables: dict[str, pd.DataFrame]) -> None:
    """A new chunk of these files' parsed tables (raises OSError when it cannot be written)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    existing = [int(p.name.split("-")[1]) for p in cache_dir.glob("chunk-*") if p.is_dir()]
    final = cache_dir / f"chunk-{max(existing, default=-1) + 1:06d}"
    tmp = cache_dir / f".{final.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        for name, frame in tables.items():
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp / f"{name}.parquet")
        (tmp / KEYS_FILE).write_text(json.dumps({"version": CACHE_VERSION, "keys": list(keys)}))
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_chunks(cache_dir: Path, names: tuple[str, ...], notes: list[str]) -> list[tuple[dict, dict]]:
    """(keys, {name: table}) of every readable chunk; unreadable chunks, torn writes and files of
    another cache layout are removed (with a note)."""
    chunks = []
    for path in sorted(cache_dir.glob("*")):
        if not path.name.startswith("chunk-") or not path.is_dir():  # torn writes, older layouts
            notes.append(f"{path}: removed from the cache (not a chunk of this layout)")
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
            continue
        try:
            listed = json.loads((path / KEYS_FILE).read_text())
            if listed.get("version") != CACHE_VERSION:
                raise ValueError(f"cache version {listed.get('version')}, expected {CACHE_VERSION}")
            tables = {name: read_frame(path / f"{name}.parquet") for name in names}
            chunks.append((dict.fromkeys(listed["keys"]), tables))
        except Exception as err:  # a derived file: drop it and re-parse what it held
            notes.append(f"{path}: ignoring unreadable cache chunk ({err}); its files are parsed again")
            shutil.rmtree(path, ignore_errors=True)
    return chunks


def read_frame(path: Path) -> pd.DataFrame:
    """The table as it was written: a categorical column without any category (a field no record has)
    comes back from Parquet as objects, and is made categorical again as its pandas metadata says."""
    table = pq.read_table(path)
    frame = table.to_pandas()
    described = (table.schema.pandas_metadata or {}).get("columns", [])
    for column in described:
        name = column.get("name")
        if column.get("pandas_type") == "categorical" and name in frame and frame[name].dtype == object:
            frame[name] = frame[name].astype(pd.CategoricalDtype(pd.Index([], dtype=object)))
    return frame
