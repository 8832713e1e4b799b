"""Loading raw records: scan raw/, parse new files in parallel, keep an append-only cache of parsed rows.

A case keeps its records in raw/<case_id>/facts.jsonl and reps.csv (scalebench.run/2: read by
sbcore/stored_records.py, records rebuilt as the decoder takes them), or, in campaigns of format v1,
as lines of records.jsonl and, older still, one
rep-<k>.json per repetition; failed attempts are files of their own. So:
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

import gc
import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from analysis.records.batches import CountedRecords, DecodedFiles, record_where
from analysis.records.cache import read_chunks, write_chunk
from analysis.records.flatten import PerHwthread, flatten_records
from analysis.records.typed_columns import typed_frame
from sbcore import campaign_access, layout, stored_records

RECORD_FILE = "record_file"  # a column of records of scalebench.run/2: the file each is in

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


PREFETCH_BATCH = 256  # files opened and announced to the kernel together, then read


def read_files(base: str, relpaths: list[str]) -> list[bytes | OSError]:
    """Contents of the files (or the error), in order. Files are opened a batch at a time and announced
    with POSIX_FADV_WILLNEED, so reads of files not in the page cache are in flight together instead of
    one at a time (measured: 232 -> 113 us per evicted file); each file is opened once, relative to its
    open case directory (openat: no walk of the whole path per file, ~40 % less system time)."""
    out: list[bytes | OSError] = []
    advise = getattr(os, "posix_fadvise", None)
    directory, dir_fd, dir_error = None, None, None
    try:
        for start in range(0, len(relpaths), PREFETCH_BATCH):
            fds: list[int | OSError] = []
            for relpath in relpaths[start : start + PREFETCH_BATCH]:
                parent, _, name = relpath.rpartition("/")
                try:
                    if parent != directory:
                        if dir_fd is not None:
                            os.close(dir_fd)
                        directory, dir_fd, dir_error = parent, None, None
                        try:
                            dir_fd = os.open(base + parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                        except OSError as err:
                            dir_error = err
                    if dir_error is not None:
                        raise dir_error
                    fd = campaign_access.open_at(name, dir_fd)
                except OSError as err:
                    fds.append(err)
                    continue
                if advise:
                    advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
                fds.append(fd)
            for fd in fds:
                if isinstance(fd, OSError):
                    out.append(fd)
                    continue
                try:
                    parts = [os.read(fd, 1 << 16)]
                    while len(parts[-1]) == 1 << 16:  # records are a few kB: one read almost always
                        parts.append(os.read(fd, 1 << 16))
                    out.append(b"".join(parts) if len(parts) > 1 else parts[0])
                except OSError as err:
                    out.append(err)
                finally:
                    os.close(fd)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    return out


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
    """Parse record and failed-attempt files: records are decoded together (decode.py), a file or
    line with a problem is reported (file + reason) and skipped."""
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of new objects per chunk, none in a cycle: no collection passes
    try:
        return _parse_files(campaign_dir, keys)
    finally:
        if collecting:
            gc.enable()


def _parse_files(campaign_dir: Path, keys: dict[str, None]) -> Parsed:
    failed, problems = [], []
    wanted = []
    # A case with records of scalebench.run/2 (facts.jsonl, reps*.csv) is read whole by sbcore's one
    # reader of a case directory, its older files too (their precedence is that reader's).
    stored = {layout.key_case(k) for k in keys if stored_records.is_v2_file(_name(k))}
    for key in keys:
        relpath, _, size = key.partition("#")
        _, case_dir, name = relpath.split("/", 2)
        if case_dir in stored and (stored_records.is_v2_file(name) or layout.FAILED_FILE.match(name) is None):
            continue
        if name == layout.RECORDS_FILE:
            wanted.append((relpath, case_dir, "lines", int(size or -1)))
            continue
        record_name = layout.REP_FILE.match(name)
        failed_name = None if record_name else layout.FAILED_FILE.match(name)
        if record_name:
            wanted.append((relpath, case_dir, "rep", int(record_name.group(1))))
        elif failed_name:
            wanted.append((relpath, case_dir, "failed", int(failed_name.group(1))))
        else:
            problems.append((relpath, "not records.jsonl, rep-<k>.json nor a failed-attempt file"))
    contents = read_files(f"{campaign_dir}/", [w[0] for w in wanted])
    decoded = DecodedFiles()
    blobs, places = [], []  # per-repetition files of older campaigns: decoded together
    lines_files = []  # records.jsonl contents
    for (relpath, case_dir, kind, number), text in zip(wanted, contents, strict=True):
        if isinstance(text, OSError):
            problems.append((relpath, f"unreadable: {text}"))
        elif kind == "failed":
            result, value = read_failed(text, relpath, case_dir, number)
            if result == "failed":
                failed.append(value)
            else:
                problems.append((relpath, value))
        elif kind == "lines":
            # Only the bytes the listing saw: what a writer appended since is for the next analysis.
            lines_files.append((text[:number] if number >= 0 else text, relpath, case_dir))
        else:
            blobs.append(text)
            places.append((relpath, case_dir, number, 0))
    decoded.add_blobs(blobs, places)  # first: where an older rep-<k>.json and a line both hold rep k,
    for data, relpath, case_dir in lines_files:  # the older file counts (as for status and resume)
        decoded.add_lines(data, relpath, case_dir)
    for case_dir in sorted(stored):
        problems.extend(_add_stored(decoded, campaign_dir, case_dir))
    problems.extend(decoded.problems)
    checked = CountedRecords()
    for batch in decoded.batches:
        checked.add(*batch)
    problems.extend(checked.problems)
    good, lines, files = checked.records, checked.lines, checked.files
    where_in_order = list(zip(map(attrgetter("case_id"), good), map(attrgetter("rep"), good), strict=True))
    order = sorted(range(len(good)), key=where_in_order.__getitem__)
    if order != list(range(len(good))):  # lines are in the order invocations finished: by case and rep
        good, lines, files = [good[i] for i in order], [lines[i] for i in order], [files[i] for i in order]
    columns, per_hwthread = flatten_records(good)
    columns["record_line"] = lines
    if stored:  # where a record of scalebench.run/2 is: its reps*.csv (records_table drops the column)
        columns[RECORD_FILE] = files
    for row, why in per_hwthread.problems:  # the record counts; only these values are missing
        where_row = f"{files[row]}:{lines[row]}" if stored else record_where(good[row], lines[row])
        problems.append((where_row, f"counters: {why}"))
    records = typed_frame(columns)
    return Parsed(
        keys=dict(keys),
        records=records,
        counters=explode_counters(records["case_id"].array, records["rep"].to_numpy(), per_hwthread),
        failed=pd.DataFrame(failed, columns=FAILED_COLUMNS),
        problems=pd.DataFrame(problems, columns=PROBLEM_COLUMNS),
    )


def _name(key: str) -> str:
    """A listed file's name ('raw/<case_id>/<name>[#<size>]')."""
    return key.partition("#")[0].rpartition("/")[2]


def _add_stored(decoded: DecodedFiles, campaign_dir: Path, case_dir: str) -> list[tuple[str, str]]:
    """A case directory holding records of scalebench.run/2 read by sbcore/stored_records.py (both
    layouts, the one rule): its counted records handed to the decoder as JSON with their file and
    line, its problems returned as (file:line, why)."""
    base = f"{layout.RAW_DIR}/{case_dir}"
    read = stored_records.read(Path(campaign_dir) / layout.RAW_DIR / case_dir, case_dir)
    blobs = [json.dumps(record).encode() for record in read.records.values()]
    places = [(f"{base}/{read.places[rep][0]}", case_dir, None, read.places[rep][1]) for rep in read.records]
    decoded.add_blobs(blobs, places)
    return [(f"{base}/{name}" + (f":{line}" if line else ""), why) for name, line, why in read.problems]


def explode_counters(case_ids: pd.Categorical, reps: np.ndarray, values: PerHwthread) -> pd.DataFrame:
    """One row per (record, metric, hardware thread) from the flat per-hwthread values of the records
    whose case ids and repetitions these are.

    Tens of millions of rows on a big campaign: strings are categoricals (integer codes); each entry's
    case, repetition and metric are worked out once and repeated in their narrow dtypes (no index of
    a row per value, no per-row Python objects). The case categories are only the cases that have
    counter rows: the same table however the files were chunked."""
    if not len(values.row):
        return pd.DataFrame(columns=COUNTER_COLUMNS)
    rows, lengths = values.row, values.lengths
    codes = np.asarray(case_ids.codes)
    used = np.unique(codes[rows[lengths > 0]])
    renumber = np.full(len(case_ids.categories), -1, np.int16 if len(used) < 2**15 else np.int32)
    renumber[used] = np.arange(len(used))
    metric = pd.Categorical(values.metric)
    metric_codes = np.repeat(metric.codes, lengths)
    return pd.DataFrame(
        {
            "case_id": pd.Categorical.from_codes(
                np.repeat(renumber[codes[rows]], lengths), categories=case_ids.categories[used]
            ),
            "rep": np.repeat(reps.astype(np.int32, copy=False)[rows], lengths),
            "metric": pd.Categorical.from_codes(metric_codes, categories=metric.categories),
            "hwthread": values.hwthread,
            "value": values.value,
        },
        copy=False,  # arrays of its own: not copied into one block per dtype (240 MB on a big campaign)
    )


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
    """The file each parsed record came from: raw/<case_id>/records.jsonl (line `record_line`), or
    raw/<case_id>/rep-<k>.json in campaigns of the older layout (record_line 0). Built per case
    (categorical codes), not per record: a million string concatenations take seconds."""
    cases = records["case_id"].astype("category")
    files = pd.Categorical.from_codes(
        cases.cat.codes.to_numpy(),
        categories=[f"{layout.RAW_DIR}/{c}/{layout.RECORDS_FILE}" for c in cases.cat.categories],
    )
    out = pd.Series(files, index=records.index)
    lines = records["record_line"].to_numpy() if "record_line" in records else np.zeros(len(records), int)
    legacy = lines <= 0
    if RECORD_FILE in records and records[RECORD_FILE].notna().any():
        stored = records[RECORD_FILE].notna().to_numpy()
        out = out.astype(object)
        out[stored] = records[RECORD_FILE][stored].astype(str)
        legacy &= ~stored
    if legacy.any():
        out = out.astype(object)
        older = records[legacy]
        out[legacy] = (
            f"{layout.RAW_DIR}/"
            + older["case_id"].astype(str)
            + "/rep-"
            + older["rep"].astype(int).astype(str)
            + ".json"
        )
    return out


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
