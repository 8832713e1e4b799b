"""The compiled reader of records.jsonl files (analysis/native/records_reader.cpp, simdjson): the columns of
the records table straight from the files, without a Python object per value.

It takes a file only when the Python path (decode + flatten) would read every line of it without
a problem, and gives exactly the columns and types that path gives; every file it refuses is read by the
Python path, which names the problems. Each JSON value comes back with its kind, and a column is typed
as `typed_columns.typed_column` types the decoded values:
- ints -> int64; ints with null -> float64 (NaN); any float -> float64;
- true/false -> bool; only null -> an empty categorical; text (with null) -> a sorted categorical;
- any other mix: the reader's result is dropped and the Python path reads those files.
Columns derived from JSON objects (params, placement, pinned CPUs, scheduling) come back as one JSON
text per distinct value and are derived by flatten.py's own functions.

Without the built library (`make native`) or with SCALEBENCH_NATIVE=0, `read` returns None.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd

from analysis.records import native_library
from analysis.records.fields import RAW_NUMERIC, RAW_TEXT
from analysis.records.flatten import (
    PerHwthread,
    cpu_list,
    distinct_cpus,
    metric_column,
    params_columns,
    result_json,
    scenario_columns,
)
from analysis.records.machine_state import probe_columns
from analysis.records.typed_columns import Spread, typed_column
from analysis.variants import VARIANT_PARAMS
from sbcore import layout

# Kinds of a cell (analysis/native/record_cells.h: Tag).
NULL, FALSE, TRUE, INT, DBL, STR, UNSET = range(7)

# Columns as flatten.flatten_records orders them (params-derived and counter columns go between).
_HEAD = ("case_id", "rep", *RAW_TEXT, *RAW_NUMERIC)
_MIDDLE = ("threads", "ranks", "warmup", "case_index", "n_warmup", "build_compiler", "build_flags")
_PIN = ("pin_strategy", "pin_cpus", "pin_violations", "counters_status", "counters_group", "counters_reason")
_TAIL = ("clock_max_ghz", *probe_columns(None), "sampling_stop")

# The reader's columns, in the order of analysis/native/record_cells.h's Slot (its JSON-text columns last).
SLOTS = (
    *_HEAD,
    *VARIANT_PARAMS,
    *_MIDDLE,
    "rank_wall_min_s",
    "rank_wall_max_s",
    *(name for name in _PIN if name != "pin_cpus"),
    *_TAIL,
    "slurm_job_id",
    "slurm_array_task_id",
    "record_line",
    "params",
    "placement",
    "pin_cpus",
    "sched",
    "result",
)
_SLOT = {name: number for number, name in enumerate(SLOTS)}
STATS = ("sum", "min", "max", "avg")


class Unlike(ValueError):
    """A column whose values the reader cannot type as the Python path would: that path reads them."""


@dataclass
class NativeRead:
    """Columns of the records table for the files the reader took, and which files those are."""

    columns: dict
    per_hwthread: PerHwthread
    taken: list[bool]


def library():
    """The loaded reader, or None when it is not built or switched off."""
    lib = native_library.load()
    if lib is not None and lib.sbr_slots() != len(SLOTS):  # built from other sources: `make native`
        warnings.warn(
            f"{native_library.LIBRARY}: {lib.sbr_slots()} columns, not {len(SLOTS)} (run make native);"
            " reading records in Python",
            stacklevel=2,
        )
        return None
    return lib


def listing(raw: str, case_ids: list[str], threads: int) -> tuple[list[int], list[bool]] | None:
    """Per case directory under `raw`: the size of its records.jsonl (-1: none) and whether that is all
    the loader reads there (no other name than it and probes.jsonl; False also for a directory that
    could not be read), listed by the compiled reader's lister; None without the library."""
    lib = library()
    if lib is None or not case_ids:
        return None
    n = len(case_ids)
    sizes, plain = np.empty(n, np.int64), np.empty(n, np.uint8)
    names = (ctypes.c_char_p * n)(*map(os.fsencode, case_ids))
    lib.sbl_list(
        os.fsencode(raw),
        n,
        names,
        layout.RECORDS_FILE.encode(),
        layout.PROBES_FILE.encode(),
        max(1, threads),
        sizes.ctypes.data,
        plain.ctypes.data,
    )
    return sizes.tolist(), plain.astype(bool).tolist()


def read(
    base: Path,
    files: list[tuple[str, str, int]],
    threads: int,
) -> NativeRead | None:
    """The records of these records.jsonl files (relative path, case directory, bytes to read or -1),
    given in order of their case directories: one table, rows by case and repetition. None when the
    reader is not available or the taken records hold a column it cannot type."""
    lib = library()
    if lib is None or not files:
        return None
    n = len(files)
    paths = (ctypes.c_char_p * n)(*(os.fsencode(f"{base}/{relpath}") for relpath, _, _ in files))
    dirs = (ctypes.c_char_p * n)(*(os.fsencode(case_dir) for _, case_dir, _ in files))
    sizes = (ctypes.c_int64 * n)(*(size for _, _, size in files))
    handle = lib.sbr_read(n, paths, sizes, dirs, max(1, threads))  # (without the GIL)
    try:
        taken = np.ctypeslib.as_array(lib.sbr_taken(handle), shape=(n,)).astype(bool).tolist()
        rows = lib.sbr_rows(handle)
        try:
            columns, per_hwthread = _columns(lib, handle, rows) if rows else ({}, None)
        except Unlike:
            return None
    finally:
        lib.sbr_free(handle)
    return NativeRead(columns, per_hwthread, taken)


def _filled(fill, *dtypes_and_count) -> list[np.ndarray]:
    """Arrays of these dtypes and lengths, filled by the reader through `fill(pointers...)`."""
    arrays = [np.empty(count, dtype) for dtype, count in dtypes_and_count]
    if all(len(a) for a in arrays):
        fill(*(a.ctypes.data for a in arrays))
    return arrays


def _strings(lib, handle, slot: int) -> list[str]:
    joined = ctypes.c_char_p()
    offsets = ctypes.POINTER(ctypes.c_int64)()
    count = lib.sbr_strings(handle, slot, ctypes.byref(joined), ctypes.byref(offsets))
    if count == 0:
        return []
    ends = np.ctypeslib.as_array(offsets, shape=(count + 1,)).tolist()
    data = ctypes.string_at(ctypes.cast(joined, ctypes.c_void_p), ends[-1])
    return [data[a:b].decode() for a, b in zip(ends[:-1], ends[1:], strict=True)]


@dataclass
class Cells:
    """One column as the reader gives it: kinds, 8-byte values, the distinct strings; `doubles`: the
    reader gave a column of numbers and nulls as doubles (null: NaN)."""

    tags: np.ndarray
    values: np.ndarray
    strings: list[str]
    doubles: bool = False


def _cells(lib, handle, slot: int, count: int, as_double: bool = False) -> Cells:
    """One column, which the reader then frees."""
    tags, values = _filled(
        lambda t, v: lib.sbr_column(handle, slot, t, v, int(as_double)), (np.uint8, count), (np.int64, count)
    )
    return Cells(tags, values, _strings(lib, handle, slot), as_double)


def _kinds(lib, handle, slot: int) -> set[int]:
    bits = lib.sbr_kinds(handle, slot)
    return {tag for tag in range(UNSET + 1) if bits >> tag & 1}


class _Columns(dict):
    """The reader's columns by name, each copied (and freed in the reader) when first asked for."""

    def __init__(self, lib, handle, n: int) -> None:
        super().__init__()
        self.lib, self.handle, self.n = lib, handle, n

    def __missing__(self, name: str) -> Cells:
        cells = self[name] = _cells(self.lib, self.handle, _SLOT[name], self.n)
        return cells

    def typed(self, name: str):
        """The column typed, its cells dropped. A column of numbers with a double or a null among them
        comes as doubles from the reader (converted as it copies them out, not by numpy after)."""
        if name in self:
            return typed(self.pop(name))
        slot = _SLOT[name]
        kinds = _kinds(self.lib, self.handle, slot)
        floats = kinds <= {INT, DBL, NULL} and not kinds <= {INT} and not kinds <= {NULL}
        return typed(_cells(self.lib, self.handle, slot, self.n, as_double=floats))


def typed(cells: Cells):
    """The column typed_columns.typed_column gives for these values (Unlike where it would need pandas)."""
    if cells.doubles:
        return cells.values.view(np.float64)
    tags, values = cells.tags, cells.values
    kinds = set(np.flatnonzero(np.bincount(tags, minlength=UNSET + 1)).tolist())
    n = len(tags)
    if kinds <= {NULL}:
        return pd.Categorical.from_codes(np.full(n, -1, np.int8), categories=pd.Index([], dtype=object))
    if kinds <= {STR, NULL}:
        codes = np.where(tags == STR, values, -1)
        if kinds == {STR} and codes.min() == codes.max():
            first = cells.strings[int(codes[0])]
            return pd.Categorical.from_codes(np.zeros(n, np.int8), categories=pd.Index([first], dtype="str"))
        order = sorted(range(len(cells.strings)), key=cells.strings.__getitem__)
        rank = np.empty(max(1, len(order)), np.int64)
        rank[order] = np.arange(len(order))
        used = np.zeros(len(order), bool)
        used[codes[codes >= 0]] = True
        # only the strings that occur (the reader's table may hold strings of rows taken away since)
        kept = [k for k in order if used[k]]
        renumber = np.full(max(1, len(order)), -1, np.int64)
        renumber[kept] = np.arange(len(kept))
        codes = np.where(codes >= 0, renumber[np.maximum(codes, 0)], -1).astype(np.int32)
        categories = pd.Index([cells.strings[k] for k in kept], dtype="str")
        return pd.Categorical.from_codes(codes, categories=categories)
    if kinds <= {INT}:
        return values
    if kinds <= {INT, DBL, NULL}:  # floats (in place: the cells are this function's own copy)
        out = values.view(np.float64)
        if INT in kinds:
            ints = tags == INT
            out[ints] = values[ints]
        if NULL in kinds:
            out[tags == NULL] = np.nan
        return out
    if kinds <= {FALSE, TRUE}:
        return tags == TRUE
    raise Unlike(f"kinds {sorted(kinds)}")


def _python_values(cells: Cells) -> list:
    """The cells as the Python values the decoder gives (for the few columns derived per row)."""
    out: list = [None] * len(cells.tags)
    floats = cells.values.view(np.float64)
    for row, tag in enumerate(cells.tags.tolist()):
        if tag == INT:
            out[row] = int(cells.values[row])
        elif tag == DBL:
            out[row] = float(floats[row])
        elif tag == STR:
            out[row] = cells.strings[int(cells.values[row])]
        elif tag in (TRUE, FALSE):
            out[row] = tag == TRUE
    return out


def _columns(lib, handle, n: int) -> tuple[dict, PerHwthread]:
    """The records table's columns in flatten.flatten_records' order, and the per-hwthread values.
    The plain columns two at a time: the reader copies one out (without the GIL) while numpy types
    the other."""
    with ThreadPoolExecutor(2) as pool:
        return _columns_with(lib, handle, n, pool)


def _columns_with(lib, handle, n: int, pool: ThreadPoolExecutor) -> tuple[dict, PerHwthread]:
    cell = _Columns(lib, handle, n)
    head = pool.map(cell.typed, _HEAD)  # (submitted at once: the counter values are copied meanwhile)
    entries = _entries(lib, handle)
    per_hwthread = _per_hwthread(lib, handle, entries)
    col: dict = dict(zip(_HEAD, head, strict=True))
    counter_columns = _counter_columns(lib, handle, n, entries)
    params_text = cell["params"]
    derived = [params_columns(text.encode()) for text in params_text.strings]
    which = params_text.values
    col["params_json"] = Spread(which, [d[0] for d in derived])
    for key in dict.fromkeys(k for d in derived for k in d[1]):
        col[key] = Spread(which, [d[1].get(key) for d in derived])
    for i, key in enumerate(VARIANT_PARAMS):  # the record's own field, else what its params say
        own = cell[key]
        unset = own.tags == UNSET
        if not unset.any():
            col[key] = cell.typed(key)
            continue
        from_params = Spread(which, [d[2][i] for d in derived])
        if unset.all():
            col[key] = from_params
        else:
            values = _python_values(own)
            col[key] = [p if u else v for p, v, u in zip(from_params, values, unset.tolist(), strict=True)]
    col.update(zip(_MIDDLE, pool.map(cell.typed, _MIDDLE), strict=True))
    if lib.sbr_any_rank_wall(handle):
        col["rank_wall_min_s"] = cell.typed("rank_wall_min_s")
        col["rank_wall_max_s"] = cell.typed("rank_wall_max_s")
    placement = cell["placement"]
    col["placement_cpus"] = Spread(placement.values, [distinct_cpus(t.encode()) for t in placement.strings])
    pinned = cell["pin_cpus"]
    pin = {"pin_cpus": Spread(pinned.values, [cpu_list(t.encode()) for t in pinned.strings])}
    for name in _PIN:
        col[name] = pin[name] if name in pin else cell.typed(name)
    col.update(counter_columns)
    col.update(zip(_TAIL, pool.map(cell.typed, _TAIL), strict=True))
    sched = cell["sched"]
    scenarios = [scenario_columns(msgspec.json.decode(t), None) for t in sched.strings]
    for key in scenario_columns(None, None):
        col[key] = Spread(sched.values, [row[key] for row in scenarios])
    col["slurm_job_id"] = cell.typed("slurm_job_id")
    col["slurm_array_task_id"] = cell.typed("slurm_array_task_id")
    results = cell["result"]
    texts = [result_json(t.encode()) for t in results.strings]
    if any(t is not None for t in texts):  # (only microbenchmarks and tools write a result)
        col["result_json"] = Spread(results.values, texts)
    col["record_line"] = cell.typed("record_line")
    return {
        name: typed_column(v) if isinstance(v, Spread | list) else v for name, v in col.items()
    }, per_hwthread


@dataclass
class _Entries:
    """The records' counter entries (record row, metric name, whether and how many per-hwthread values)
    and the metric names."""

    rows: np.ndarray
    name_of: np.ndarray
    has_values: np.ndarray
    lengths: np.ndarray
    names: list[str]


def _entries(lib, handle) -> _Entries:
    count = lib.sbr_entries(handle)
    rows, name_of, has_values, lengths = _filled(
        lambda *arrays: lib.sbr_entry_arrays(handle, *arrays),
        (np.int64, count),
        (np.int32, count),
        (np.uint8, count),
        (np.int64, count),
    )
    return _Entries(rows, name_of, has_values.astype(bool), lengths, _strings(lib, handle, -1))


def _counter_columns(lib, handle, n: int, entries: _Entries) -> dict:
    """ctr_<metric>_<stat> columns as flatten.flatten_records makes them: per record, the later of two
    metrics with one column name counts."""
    col: dict = {}
    stats = [_cells(lib, handle, len(SLOTS) + s, len(entries.rows)) for s in range(len(STATS))]
    # Names are numbered as first seen, so columns in order of their first name are first seen first.
    column_of_name = [metric_column(name) for name in entries.names]
    columns = list(dict.fromkeys(column_of_name))
    number = {column: i for i, column in enumerate(columns)}
    code = np.array([number[c] for c in column_of_name], np.int64)[entries.name_of]
    by_column = np.argsort(code, kind="stable")  # each column's entries in order
    bounds = np.searchsorted(code[by_column], np.arange(len(columns) + 1))
    for i, column in enumerate(columns):
        mine = by_column[bounds[i] : bounds[i + 1]]
        for stat, cells in zip(STATS, stats, strict=True):
            tags = np.full(n, NULL, np.uint8)
            values = np.zeros(n, np.int64)
            tags[entries.rows[mine]] = cells.tags[mine]  # a row twice: the later entry, as numpy assigns
            values[entries.rows[mine]] = cells.values[mine]
            if STR in cells.tags[mine]:
                raise Unlike("text in a counter value")
            col[f"ctr_{column}_{stat}"] = typed(Cells(tags, values, cells.strings))
    return col


def _per_hwthread(lib, handle, entries: _Entries) -> PerHwthread:
    """The per-hwthread values of the entries that have them."""
    has_values = entries.has_values
    total = lib.sbr_values_count(handle)
    threads, values = _filled(
        lambda t, v: lib.sbr_hw_values(handle, t, v), (np.int32, total), (np.float64, total)
    )
    # As pd.Categorical of the names gives them (the names that occur, sorted), from their codes: no
    # Python string per entry (millions on a big campaign).
    codes = entries.name_of[has_values]
    used = np.unique(codes)
    ranked = sorted(range(len(used)), key=lambda i: entries.names[used[i]])
    renumber = np.zeros(len(entries.names), np.int32)
    renumber[used[ranked]] = np.arange(len(used), dtype=np.int32)
    metric = pd.Categorical.from_codes(
        renumber[codes], categories=pd.Index([entries.names[used[i]] for i in ranked], dtype="str")
    )
    return PerHwthread(entries.rows[has_values], metric, entries.lengths[has_values], threads, values)
