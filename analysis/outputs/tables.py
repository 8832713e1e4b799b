"""Tables as files, written by Arrow: `<name>.parquet` (the big records and counters tables: typed,
compressed, read back by pandas.read_parquet) or `<name>.csv`, streamed to disk (pandas' to_csv formats
every value in Python: about a minute for a million records with their counters). The CSV has the shape
pandas writes (header, no index, empty field for a missing value); floats in their shortest round-trip
form; booleans as true/false; text quoted. Both hold the same values: tests/analysis/test_outputs.py
writes one table both ways."""

from __future__ import annotations

import errno
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from sbcore.atomic import write_atomic_by
from sbcore.errors import EnvironmentProblem


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


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    return pa.table([_column(frame[c]) for c in frame.columns], names=[str(c) for c in frame.columns])


WRITERS = {".csv": pacsv.write_csv, ".parquet": pq.write_table}  # by the file's suffix


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """The table at `path` (CSV or Parquet, by its suffix), atomically, streamed (a 15-million-row
    table never sits in memory as text)."""
    write = WRITERS.get(Path(path).suffix)
    if write is None:
        raise ValueError(f"{path}: no table format for {Path(path).suffix!r} (one of {', '.join(WRITERS)})")
    table = arrow_table(frame)

    def write_checked(tmp: Path) -> None:
        # Through a stream whose size is known: a write the disk cut short (Arrow may lose the error of
        # its last buffered write) is an error, never a short or empty table renamed into place.
        with pa.OSFile(str(tmp), "wb") as sink:
            write(table, sink)
            written = sink.tell()
        if os.stat(tmp).st_size != written:
            raise OSError(errno.ENOSPC, "short write (disk full?)", str(path))

    try:
        write_atomic_by(path, write_checked, make_parents=True)
    except OSError as err:  # a full or read-only disk: Arrow's message names no file
        raise EnvironmentProblem(f"{path}: cannot write: {err.strerror or err}") from None


def write_files(tables: dict[Path, pd.DataFrame]) -> None:
    """Several tables at once, biggest first, one thread per CPU: Arrow formats and writes without the
    GIL, so the records and counters tables of a big campaign are written side by side."""
    order = sorted(tables, key=lambda path: -len(tables[path]) * max(1, len(tables[path].columns)))
    with ThreadPoolExecutor(max(1, min(len(order), os.cpu_count() or 1))) as pool:
        for done in [pool.submit(write_table, tables[path], path) for path in order]:
            done.result()  # the first error (e.g. a full disk) is raised here
