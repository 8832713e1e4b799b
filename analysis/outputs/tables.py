"""Tables as CSV files, streamed to disk: pandas' to_csv formats every value in Python (about a minute for a
million records with their counters). Same shape as pandas writes it (header, no index, empty field for a
missing value); floats in their shortest round-trip form; booleans as true/false; text quoted.

A table whose columns are all numbers, booleans or text (the records and counters tables) is written by
the compiled writer (analysis/native/csv_writer.cpp: rows formatted on every CPU, 0.6 of Arrow's time on
the counters table of a million records), byte for byte as Arrow's C++ writer writes it, which writes
every other table and is the reference (tests/analysis/test_csv_out.py)."""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from analysis.records import native_library
from sbcore.atomic import publish, write_temp_by

# csv_writer.cpp: Kind
_F64, _I64, _I32, _I16, _I8, _BOOL, _TEXT8, _TEXT16, _TEXT32 = range(9)
_TEXT_KINDS = {np.dtype(np.int8): _TEXT8, np.dtype(np.int16): _TEXT16, np.dtype(np.int32): _TEXT32}
_INT_KINDS = {
    np.dtype(np.int64): _I64,
    np.dtype(np.int32): _I32,
    np.dtype(np.int16): _I16,
    np.dtype(np.int8): _I8,
}


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
    lib = native_library.load()
    columns = _native_columns(frame) if lib is not None and len(frame) else None
    if columns is not None:
        return write_temp_by(path, lambda tmp: _write_native(lib, frame, columns, tmp), make_parents=True)
    table = pa.table([_column(frame[c]) for c in frame.columns], names=[str(c) for c in frame.columns])
    return write_temp_by(path, lambda tmp: pacsv.write_csv(table, str(tmp)), make_parents=True)


def _native_columns(frame: pd.DataFrame) -> list[tuple] | None:
    """(kind, values, quoted texts joined, their offsets) per column for the compiled writer, or None
    when a column is of another kind (Arrow writes that table)."""
    out = []
    for name in frame.columns:
        series = frame[name]
        dtype = series.dtype
        text = _text(series)
        if text is not None:
            codes, categories = text
            if not all(isinstance(c, str) for c in categories):
                return None
            encoded = [('"' + c.replace('"', '""') + '"').encode() for c in categories]
            offsets = np.zeros(len(encoded) + 1, np.int64)
            offsets[1:] = np.cumsum([len(e) for e in encoded])
            if codes.dtype not in _TEXT_KINDS:
                codes = codes.astype(np.int32)
            out.append((_TEXT_KINDS[codes.dtype], codes, b"".join(encoded), offsets))
        elif dtype == np.float64:
            out.append((_F64, np.ascontiguousarray(series.to_numpy()), None, None))
        elif dtype in _INT_KINDS:
            out.append((_INT_KINDS[dtype], np.ascontiguousarray(series.to_numpy()), None, None))
        elif dtype == np.bool_:
            out.append((_BOOL, np.ascontiguousarray(series.to_numpy()).view(np.uint8), None, None))
        else:
            return None
    return out


def _text(series: pd.Series) -> tuple[np.ndarray, list] | None:
    """A text column's codes (-1: missing) and the texts they number; None for another column. A
    categorical's own codes (no copy); a string column's in order of appearance: the file holds the
    texts, not their order (sorted categories took 10 ms per column of 20,000 rows)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return np.ascontiguousarray(series.cat.codes.to_numpy()), series.cat.categories.tolist()
    if pd.api.types.is_string_dtype(series.dtype):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        return codes, uniques.tolist()
    return None


def _write_native(lib, frame: pd.DataFrame, columns: list[tuple], tmp: Path, direct: bool = True) -> None:
    """`direct`: past the page cache where the file system allows it (O_DIRECT), which saves the
    kernel's copy of every byte (1.6-2 CPU-s for the records and counters tables of a million
    records)."""
    n = len(columns)
    header = ",".join('"' + str(c).replace('"', '""') + '"' for c in frame.columns) + "\n"
    kinds = (ctypes.c_int * n)(*(kind for kind, _, _, _ in columns))
    data = (ctypes.c_void_p * n)(*(values.ctypes.data for _, values, _, _ in columns))
    texts = (ctypes.c_char_p * n)(*(text for _, _, text, _ in columns))
    offsets = (ctypes.c_void_p * n)(*(o.ctypes.data if o is not None else None for _, _, _, o in columns))
    counts = (ctypes.c_int64 * n)(*(len(o) - 1 if o is not None else 0 for _, _, _, o in columns))
    err = lib.sbw_write_csv(
        os.fsencode(tmp),
        header.encode(),
        len(frame),
        n,
        kinds,
        data,
        texts,
        offsets,
        counts,
        os.cpu_count() or 1,
        int(direct),
    )
    if err:
        raise OSError(err, os.strerror(err), str(tmp))


def write_csvs(tables: dict[Path, pd.DataFrame]) -> None:
    """Several tables at once, biggest first, one thread per CPU: Arrow formats and writes without the
    GIL, so the records and counters tables of a big campaign are written side by side."""
    order = sorted(tables, key=lambda path: -len(tables[path]) * max(1, len(tables[path].columns)))
    with ThreadPoolExecutor(max(1, min(len(order), os.cpu_count() or 1))) as pool:
        for done in [pool.submit(write_csv, tables[path], path) for path in order]:
            done.result()  # the first error (e.g. a full disk) is raised here


class TablesInFlight:
    """Tables being written in a thread while the analysis goes on: the counters table is final once the
    records are loaded, and the compiled writer runs without the GIL, beside the statistics. A second
    thread waits for each written file to reach the disk (its fsync took 0.8-1 s for the tables of a
    million records) and puts it in place, in the order the tables were started, while the first one
    writes the next table."""

    def __init__(self) -> None:
        self._writer: ThreadPoolExecutor | None = None
        self._publisher: ThreadPoolExecutor | None = None
        self.files: dict[Path, Future] = {}
        self._started: list[Future] = []

    def start(self, path: Path, frame: pd.DataFrame) -> None:
        """Writes `frame` to `path` once the tables started before are written: a path started twice
        ends up holding the later table."""
        if self._writer is None:
            self._writer, self._publisher = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
        publisher = self._publisher

        def write() -> Future:
            tmp = write_csv_temp(frame, path)
            return publisher.submit(publish, tmp, path)  # in the order the tables were written

        self.files[path] = self._writer.submit(write)
        self._started.append(self.files[path])

    def wait(self) -> None:
        """Until every table is written and in place; the first error (e.g. a full disk) is raised
        here."""
        try:
            for written in self._started:
                written.result().result()
        finally:
            for pool in (self._writer, self._publisher):
                if pool is not None:
                    pool.shutdown()
