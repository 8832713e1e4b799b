"""Loading raw records: scan raw/, parse new files in parallel, keep an append-only cache of parsed rows.

A case keeps its records in raw/<case_id>/facts.jsonl and reps.csv (scalebench.run/2: read in columns
by arrow_reader.py and stored_frame.py), or, in campaigns of format v1, as lines of records.jsonl and,
older still, one rep-<k>.json per repetition (read by sbcore/stored_records.py, derived record by
record by derive.py, as is a v2 case the columnar path cannot take as it is); failed attempts are
files of their own. So:
- files are listed with os.scandir, with a stat only for each growing file (records.jsonl,
  facts.jsonl, reps*.csv: its size when listed is part of its key; of records.jsonl exactly that many
  bytes are read);
- only cases not in the cache, or whose files changed, are parsed, by a process pool in chunks of
  cases (each worker builds a DataFrame, so only columnar data crosses the process boundary);
- parsed chunks are appended to `analysis/.cache/chunk-<n>/` (records/cache.py): records are never rewritten
  (docs/formats.md), so a case parsed once stays parsed until it gets new lines or files; a vanished
  case drops its cached rows. Cases with problems are never cached: they are parsed (and reported)
  again on every run.
A corrupt, truncated or schema-violating file or line is reported (file[:line] + reason) and skipped,
never fatal.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.types import union_categoricals

from analysis.records import arrow_reader, derive, stored_frame
from analysis.records.cache import read_chunks, write_chunk
from analysis.records.typed_columns import typed_frame
from sbcore import campaign_access, layout, record_fields, stored_records

RECORD_FILE = "record_file"  # the file each record is in

PARALLEL_THRESHOLD = 4000  # records: below this, a process pool costs more than it saves
# Records (or files) per parsing task: fewer, larger frames to join (at a million records, chunks of 5000
# took 1.7x the main process's time of chunks of 20000, ~0.3 GB per worker).
CHUNK_FILES = 20000
RECORD_BYTES = 2000  # about one record: chunks of about CHUNK_FILES records

COUNTER_COLUMNS = ["case_id", "rep", "metric", "hwthread", "value"]
FAILED_COLUMNS = ["file", "case_id", "rep", "reason", "exit_status"]
PROBLEM_COLUMNS = ["file", "reason"]

# Workers forked from a clean server process: a fork of this one, which may have threads (pyarrow's,
# a caller's), can leave a child waiting for ever on a lock another thread held.
_WORKERS = multiprocessing.get_context("forkserver")


@dataclass
class Parsed:
    """Parsed content of a set of files; the unit of caching."""

    keys: dict[str, None] = field(default_factory=dict)  # relative paths (a dict: ordered, fast lookup)
    records: pd.DataFrame = field(default_factory=pd.DataFrame)
    counters: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COUNTER_COLUMNS))
    failed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FAILED_COLUMNS))
    problems: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PROBLEM_COLUMNS))


@dataclass
class Loaded:
    records: pd.DataFrame
    counters: pd.DataFrame
    failed: pd.DataFrame
    problems: pd.DataFrame
    n_files: int
    n_parsed: int
    notes: list[str]


def read_failed(text: bytes, relpath: str, case_dir: str, rep: int) -> tuple[str, object]:
    """('failed', row) | ('problem', reason) for one failed-attempt file."""
    try:
        record = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return "problem", f"bad JSON: {err}"
    if not isinstance(record, dict):
        return "problem", "failed-attempt file is not a JSON object"
    return "failed", (
        relpath,
        case_dir,
        rep,
        str(record.get("reason", "no reason given")),
        record.get("exit_status"),
    )


def case_files(campaign_dir: Path, case_ids: list[str]) -> dict[str, None]:
    """The record and failed-attempt files of these case directories, as sbcore.layout.raw_files lists
    them for the whole campaign (records.jsonl as 'records.jsonl#<bytes>'): listing in the parsing
    workers keeps it off the main process."""
    found: dict[str, None] = {}
    raw = f"{campaign_dir}/{layout.RAW_DIR}"
    for case_id in case_ids:
        try:
            found.update(dict.fromkeys(layout.case_record_files(f"{raw}/{case_id}", case_id)))
        except OSError:
            continue  # vanished since the campaign was listed: nothing to read there
    return found


def parse_files(campaign_dir: Path, keys: dict[str, None]) -> Parsed:
    """Parse the record and failed-attempt files of these keys (whole case directories): the stored
    records of scalebench.run/2 by Arrow (arrow_reader.py, stored_frame.py), every other case (records
    of format v1, or files the fast reader leaves) by sbcore/stored_records.py, the one reader, whose
    problems (file[:line] + reason) are reported and whose records are derived by derive.py."""
    failed, problems = [], []
    names: dict[str, set[str]] = {}
    failed_files = []
    listed_bytes: dict[str, int] = {}  # case -> its records.jsonl's size when listed: no more is read
    for key in keys:
        relpath, _, size = key.partition("#")
        _, case_dir, name = relpath.split("/", 2)
        if name == layout.RECORDS_FILE and size:
            listed_bytes[case_dir] = int(size)
        failed_name = layout.FAILED_FILE.match(name)
        if failed_name:
            failed_files.append((relpath, case_dir, int(failed_name.group(1))))
        elif name == layout.RECORDS_FILE or layout.REP_FILE.match(name) or stored_records.is_v2_file(name):
            names.setdefault(case_dir, set()).add(name)
        else:
            problems.append((relpath, "not records.jsonl, rep-<k>.json nor a failed-attempt file"))
    for relpath, case_dir, number in failed_files:
        try:
            text = campaign_access.read_path(Path(campaign_dir) / relpath)
        except OSError as err:
            problems.append((relpath, f"unreadable: {err}"))
            continue
        result, value = read_failed(text, relpath, case_dir, number)
        if result == "failed":
            failed.append(value)
        else:
            problems.append((relpath, value))
    raw = Path(campaign_dir) / layout.RAW_DIR
    flat = sorted(c for c, found in names.items() if found <= _WRITER_FILES)
    stored = arrow_reader.read(raw, flat)
    slow = stored.slow | stored_frame.invalid_cases(stored)
    slow |= {c for c in names if c not in flat}
    columns = stored_frame.columns(_without(stored, slow))
    columns.columns[RECORD_FILE] = _flat_files(columns.columns["case_id"])
    problems.extend(columns.problems)
    reference = _reference(raw, sorted(slow), problems, listed_bytes)
    records = _sorted(_declared(typed_frame(_joined([columns.columns, reference.columns]))))
    hwthreads = [c for c in (columns.hwthreads, reference.hwthreads) if c is not None and len(c)]
    return Parsed(
        keys=dict(keys),
        records=records,
        counters=_typed_counters(pd.concat(hwthreads, ignore_index=True)) if hwthreads else Parsed().counters,
        failed=pd.DataFrame(failed, columns=FAILED_COLUMNS),
        problems=pd.DataFrame(problems, columns=PROBLEM_COLUMNS),
    )


_WRITER_FILES = frozenset(stored_records.WRITER_FILES)  # a case holding no other file: read in columns


def _without(stored: arrow_reader.ArrowRecords, cases: set[str]) -> arrow_reader.ArrowRecords:
    """The records of every case but these."""
    if not cases:
        return stored
    gone = pa.array(sorted(cases))

    def kept(table: pa.Table) -> pa.Table:
        return table.filter(pc.invert(pc.is_in(table[arrow_reader.CASE].cast(pa.string()), gone)))

    facts = [(c, f) for c, f in zip(stored.facts_case, stored.facts, strict=True) if c not in cases]
    return arrow_reader.ArrowRecords(
        kept(stored.reps).unify_dictionaries(),
        {t: kept(table) for t, table in stored.tables.items()},
        [f for _, f in facts],
        [c for c, _ in facts],
    )


def _flat_files(case_ids) -> pa.Array:
    names = pc.cast(case_ids, pa.string()) if len(case_ids) else pa.array([], pa.string())
    return pc.binary_join_element_wise(f"{layout.RAW_DIR}/", names, f"/{stored_records.REPS_FILE}", "")


def _reference(raw: Path, cases: list[str], problems: list, listed_bytes: dict) -> stored_frame.Columns:
    """The records of these cases as sbcore/stored_records.py counts them, derived record by record."""
    rows, hwthreads = [], []
    for case_id in cases:
        read = stored_records.read(raw / case_id, case_id, records_bytes=listed_bytes.get(case_id))
        base = f"{layout.RAW_DIR}/{case_id}"
        problems.extend(
            (f"{base}/{name}" + (f":{line}" if line else ""), why) for name, line, why in read.problems
        )
        for rep, record in read.records.items():
            name, line = read.places[rep]
            row = derive.row(record) | {"record_line": line, RECORD_FILE: f"{base}/{name}"}
            rows.append(row)
            values, why = derive.hwthread_values(record)
            problems.extend((f"{base}/{name}" + (f":{line}" if line else ""), f"counters: {w}") for w in why)
            hwthreads += [(case_id, rep, *v) for v in values]
    names = derive.ordered(k for row in rows for k in row)
    columns = {name: [row.get(name) for row in rows] for name in names}
    counters = pd.DataFrame(hwthreads, columns=COUNTER_COLUMNS) if hwthreads else None
    return stored_frame.Columns(columns, counters)


def _typed_counters(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({"case_id": "category", "rep": np.int32, "metric": "category", "hwthread": np.int32})


_NUMBERS = [
    f.name for f in record_fields.FIELDS if f.read == record_fields.COLUMN and f.type == record_fields.NUMBER
]


def _declared(records: pd.DataFrame) -> pd.DataFrame:
    """A copied field declared a number is float64 even where every value is whole (as JSON or CSV
    text may write it): the column's type does not depend on the campaign."""
    whole = [n for n in _NUMBERS if n in records and records[n].dtype == np.int64]
    return records.astype(dict.fromkeys(whole, np.float64)) if whole else records


def _sorted(records: pd.DataFrame) -> pd.DataFrame:
    """By case and repetition, the columns in the table's order."""
    if records.empty:
        return records
    order = np.lexsort((records["rep"].to_numpy(), records["case_id"].astype(str).to_numpy()))
    records = records.iloc[order].reset_index(drop=True)
    return records[derive.ordered(records.columns)]


def _joined(parts: list[dict]) -> dict:
    """The columns of both paths as one (each typed once over all rows): Arrow arrays where the parts'
    types agree (text, numbers, a column of nulls in one part), else Python values."""
    parts = [p for p in parts if len(p.get("case_id", ()))]
    if len(parts) <= 1:
        return parts[0] if parts else {}
    sizes = [len(p["case_id"]) for p in parts]
    out = {}
    for name in dict.fromkeys(n for p in parts for n in p):
        pieces = [_arrow(p.get(name), n) for p, n in zip(parts, sizes, strict=True)]
        kinds = {a.type for a in pieces if a is not None and not pa.types.is_null(a.type)}
        if None not in pieces and len(kinds) <= 1:
            kind = kinds.pop() if kinds else pa.null()
            out[name] = pa.concat_arrays([a.cast(kind) for a in pieces])
        elif None not in pieces and kinds == {pa.int64(), pa.float64()}:
            out[name] = pa.concat_arrays([a.cast(pa.float64()) for a in pieces])
        else:
            out[name] = [v for p, n in zip(parts, sizes, strict=True) for v in _python(p.get(name), n)]
    return out


def _arrow(column, size: int) -> pa.Array | None:
    """A column as one Arrow array (text decoded from a dictionary), None where Arrow does not type it."""
    if column is None:
        return pa.nulls(size)
    try:
        array = column if isinstance(column, pa.Array | pa.ChunkedArray) else pa.array(column)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return None
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    return array.cast(array.type.value_type) if pa.types.is_dictionary(array.type) else array


def _python(column, size: int) -> list:
    if column is None:
        return [None] * size
    return column.to_pylist() if isinstance(column, pa.Array | pa.ChunkedArray) else list(column)


def _parse_chunk(args: tuple[Path, dict]) -> Parsed:
    return parse_files(*args)


def _parse_cases(args: tuple[Path, list[str]]) -> Parsed:
    campaign_dir, case_ids = args
    return parse_files(campaign_dir, case_files(campaign_dir, case_ids))


def case_chunks(keys: dict[str, None]) -> list[dict[str, None]]:
    """The keys in chunks of about CHUNK_FILES, a case's files always in one chunk: a chunk reads a
    v2 case whole (facts.jsonl and every reps*.csv), so a case cut in two would be counted twice."""
    chunks: list[dict[str, None]] = []
    chunk: dict[str, None] = {}
    case = None
    for key, value in keys.items():
        if len(chunk) >= CHUNK_FILES and layout.key_case(key) != case:
            chunks.append(chunk)
            chunk = {}
        chunk[key], case = value, layout.key_case(key)
    if chunk:
        chunks.append(chunk)
    return chunks


def parse_python(campaign_dir: Path, keys: dict[str, None], processes: int) -> list[Parsed]:
    items = list(keys.items())
    chunks = case_chunks(keys)
    if processes <= 1 or len(items) < PARALLEL_THRESHOLD:
        return [parse_files(campaign_dir, keys)] if items else []
    with ProcessPoolExecutor(processes, mp_context=_WORKERS) as pool:
        return list(pool.map(_parse_chunk, [(campaign_dir, chunk) for chunk in chunks]))


def parse_campaign(campaign_dir: Path, processes: int) -> list[Parsed]:
    """Every file of the campaign, when nothing is cached. The workers list the case directories
    themselves (a million file names are never built, sent and matched in the main process)."""
    raw = Path(campaign_dir) / layout.RAW_DIR
    if not raw.is_dir():
        return []
    with os.scandir(raw) as entries:
        case_ids = sorted(entry.name for entry in entries if entry.is_dir())
    bytes_per_case = max(1, sum(map(_listed_bytes, case_files(campaign_dir, case_ids[:1]))))
    per_chunk = max(1, CHUNK_FILES * RECORD_BYTES // bytes_per_case)  # the first case stands for all
    chunks = [case_ids[i : i + per_chunk] for i in range(0, len(case_ids), per_chunk)]
    if processes <= 1 or len(case_ids) * bytes_per_case < PARALLEL_THRESHOLD * RECORD_BYTES:
        return [_parse_cases((campaign_dir, chunk)) for chunk in chunks]
    with ProcessPoolExecutor(processes, mp_context=_WORKERS) as pool:
        return list(pool.map(_parse_cases, [(campaign_dir, chunk) for chunk in chunks]))


def _listed_bytes(key: str) -> int:
    """About how many bytes a listed file holds: a records.jsonl says it, a record file is ~2 kB."""
    _, _, size = key.partition("#")
    return int(size) if size else RECORD_BYTES


TABLES = ("records", "counters", "failed", "problems")  # Parsed's tables, as the cache keeps them


def read_cache(cache_dir: Path, notes: list[str]) -> list[Parsed]:
    return [Parsed(keys, **tables) for keys, tables in read_chunks(cache_dir, TABLES, notes)]


def append_cache(cache_dir: Path, parsed: Parsed, notes: list[str]) -> None:
    try:
        write_chunk(cache_dir, parsed.keys, {name: getattr(parsed, name) for name in TABLES})
    except OSError as err:
        notes.append(f"{cache_dir}: cache not written ({err}); the next run parses these files again")


def load_records(
    campaign_dir: Path,
    processes: int | None = None,
    use_cache: bool = True,
) -> Loaded:
    """The campaign's records, counter rows, failed attempts and problems."""
    campaign_dir = Path(campaign_dir)
    notes: list[str] = []
    processes = processes or os.cpu_count() or 1
    cache_dir = layout.analysis_dir(campaign_dir) / ".cache"
    cached = read_cache(cache_dir, notes) if use_cache and cache_dir.is_dir() else []
    kept: list[Parsed] = []
    if cached:  # only cases whose files changed since they were cached are parsed
        on_disk = layout.raw_files(campaign_dir)
        disk_cases = _by_case(on_disk)
        fresh_cases: set[str] = set()
        for chunk in cached:
            valid = {c for c, files in _by_case(chunk.keys).items() if disk_cases.get(c) == files}
            if valid:
                kept.append(_restrict(chunk, valid) if len(valid) < len(_by_case(chunk.keys)) else chunk)
                fresh_cases |= valid
        new_keys = {k: v for k, v in on_disk.items() if layout.key_case(k) not in fresh_cases}
        new_chunks = parse_python(campaign_dir, new_keys, processes)
        n_files, n_parsed = len(on_disk), len(new_keys)
    else:  # everything is new
        new_chunks = parse_campaign(campaign_dir, processes)
        n_files = n_parsed = sum(len(chunk.keys) for chunk in new_chunks)
    if use_cache and new_chunks:
        merged = _concat(new_chunks)
        # A case with a problem (a bad file or line) is never cached: it is parsed and reported again.
        bad = {layout.key_case(f) for f in merged.problems["file"]}
        good = {k: None for k in merged.keys if layout.key_case(k) not in bad}
        if good:
            cache_dir.mkdir(parents=True, exist_ok=True)
            # Only cases with a problem are left out: no copy of a million rows when there is none.
            cacheable = _restrict(merged, {layout.key_case(k) for k in good}) if bad else merged
            append_cache(cache_dir, cacheable, notes)
        new_chunks = [merged]
    everything = _concat(kept + new_chunks)
    return Loaded(
        records=everything.records,
        counters=everything.counters,
        failed=everything.failed,
        problems=everything.problems.sort_values("file", ignore_index=True),
        n_files=n_files,
        n_parsed=n_parsed,
        notes=notes,
    )


def record_file(records: pd.DataFrame) -> pd.Series:
    """The file each parsed record came from: raw/<case_id>/reps.csv (line `record_line`),
    records.jsonl of format v1 (line `record_line`) or an older rep-<k>.json (line 0)."""
    return records[RECORD_FILE]


def _by_case(keys) -> dict[str, frozenset[str]]:
    """case id -> its listed files (records.jsonl with its size)."""
    out: dict[str, set[str]] = {}
    for key in keys:
        out.setdefault(layout.key_case(key), set()).add(key)
    return {case: frozenset(files) for case, files in out.items()}


def _restrict(chunk: Parsed, cases: set[str]) -> Parsed:
    """The part of a parsed chunk that belongs to these cases."""

    def sel(df: pd.DataFrame) -> pd.DataFrame:
        if df.empty:
            return df
        case = df["case_id"].astype(str) if "case_id" in df else df["file"].map(layout.key_case)
        return df[case.isin(cases).to_numpy()]

    return Parsed(
        keys={k: v for k, v in chunk.keys.items() if layout.key_case(k) in cases},
        records=sel(chunk.records),
        counters=sel(chunk.counters),
        failed=sel(chunk.failed),
        problems=sel(chunk.problems),
    )


def _concat(chunks: list[Parsed]) -> Parsed:
    """One Parsed of many. Consumes them: each table of the chunks is released as soon as it is joined,
    so a million records never sit in memory three times (chunks, result and the next table's chunks)."""
    if not chunks:
        return Parsed()
    if len(chunks) == 1:
        return chunks[0]

    def cat(table: str, columns: list[str] | None = None) -> pd.DataFrame:
        frames = [getattr(c, table) for c in chunks]
        for chunk in chunks:
            setattr(chunk, table, None)
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=columns)
        return concat_frames(frames)

    keys: dict[str, None] = {}
    for chunk in chunks:
        keys.update(chunk.keys)
    return Parsed(
        keys=keys,
        records=cat("records"),
        counters=cat("counters", COUNTER_COLUMNS),
        failed=cat("failed", FAILED_COLUMNS),
        problems=cat("problems", PROBLEM_COLUMNS),
    )


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """pd.concat, except that categorical columns are merged by their codes (union_categoricals):
    plain concat turns categoricals with different categories into Python objects. Categories are
    sorted, as in one frame of all rows: the table does not depend on how the files were chunked."""
    if len(frames) == 1:  # (the frame itself when its index is the row numbers: no copy)
        only = frames[0]
        numbered = only.index.equals(pd.RangeIndex(len(only)))
        return only if numbered and isinstance(only.index, pd.RangeIndex) else only.reset_index(drop=True)
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    shared = [
        c for c in columns if all(c in f and isinstance(f[c].dtype, pd.CategoricalDtype) for f in frames)
    ]
    merged = {}
    for column in shared:
        try:
            merged[column] = union_categoricals([f[column] for f in frames], sort_categories=True)
        except TypeError:  # categories of different dtypes (e.g. an all-missing column): go through objects
            merged[column] = pd.Categorical(
                np.concatenate([f[column].astype(object).to_numpy() for f in frames])
            )
    rest = pd.concat([f.drop(columns=shared) for f in frames], ignore_index=True)
    return rest.assign(**merged)[columns]


if __name__ == "__main__":  # quick look: python -m analysis.records.load CAMPAIGN_DIR
    loaded = load_records(Path(sys.argv[1]))
    print(loaded.records.shape, len(loaded.problems), "problems", loaded.n_parsed, "parsed")
