"""Tables as CSV files, written by Arrow and streamed to disk: pandas' to_csv formats every value in
Python (about a minute for a million records with their counters). Same shape as pandas writes it
(header, no index, empty field for a missing value); floats in their shortest round-trip form; booleans
as true/false; text quoted."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from sbcore.atomic import publish, write_temp_by


def _column(series: pd.Series) -> pa.Array:
    if isinstance(series.dtype, pd.CategoricalDtype):
        # Codes and categories as they are (no object array of a million strings); written as values.
        codes = series.cat.codes.to_numpy()
        categories = series.cat.categories.to_numpy(dtype=object)
        if not len(categories):  # never a value (e.g. an optional field no record has): empty fields
            return pa.nulls(len(series))
        if len(categories) and all(isinstance(c, str) for c in categories):
            return pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), pa.array(categories))
        series = series.astype(object)
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one object column: write them as text
        return pa.array(series.map(lambda v: None if v is None or v != v else str(v)), type=pa.string())


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """The table as CSV at `path`, atomically, streamed (a 15-million-row table never sits in memory
    as text)."""
    publish(write_csv_temp(frame, path), path)


def write_csv_temp(frame: pd.DataFrame, path: Path) -> Path:
    """The table as CSV in a temporary file beside `path`, for sbcore.atomic.publish."""
    table = pa.table([_column(frame[c]) for c in frame.columns], names=[str(c) for c in frame.columns])
    return write_temp_by(path, lambda tmp: pacsv.write_csv(table, str(tmp)), make_parents=True)


def write_csvs(tables: dict[Path, pd.DataFrame]) -> None:
    """Several tables at once, biggest first, one thread per CPU: Arrow formats and writes without the
    GIL, so the records and counters tables of a big campaign are written side by side."""
    order = sorted(tables, key=lambda path: -len(tables[path]) * max(1, len(tables[path].columns)))
    with ThreadPoolExecutor(max(1, min(len(order), os.cpu_count() or 1))) as pool:
        for done in [pool.submit(write_csv, tables[path], path) for path in order]:
            done.result()  # the first error (e.g. a full disk) is raised here
