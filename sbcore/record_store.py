"""A case's stored records, appended, never rewritten. The runner writes scalebench.run/2 (`store`, at the
end of this file: a facts.jsonl line per kernel process and a reps.csv row per repetition, docs/formats.md);
`append` writes format v1, raw/<case_id>/records.jsonl, one JSON record per line: what campaigns before
v2 hold (still read by sbcore/stored_records.py) and what the synthetic test and perf campaigns write.

One file per case instead of one per repetition: a million repetitions are a few thousand files to
list, open and read, not a million. The guarantees of a file per repetition hold line by line
(docs/formats.md):
- a line once written is never changed or removed: writers only append (O_APPEND), holding an exclusive
  lock on the file (flock), all lines of one kernel invocation in one write, then fsync;
- a repetition is recorded once: under the lock a writer skips the repetitions the file already holds,
  so the first record of a repetition wins (two runners racing on one case would otherwise both add it);
- a reader never takes part of a line for a record: every record ends with a newline, so a last line
  without one is a write in progress (or one a crash cut short) and is not read; a writer that finds
  such a tail starts its own lines on a new line, so a cut line never swallows the next record.
`jq . records.jsonl` shows the records; `jq 'select(.rep == 3)' records.jsonl` one of them.

A record may come with a detail line for a file beside it (the per-CPU probe times: probes.jsonl). It
is appended under the record file's lock, after the records are on disk, for the records written only:
a detail line never exists without its record (a crash between the two writes leaves a record without
its detail, never the reverse) and never twice.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from sbcore import campaign_access, record_lines, record_rows
from sbcore.atomic import fsync_dir
from sbcore.errors import EnvironmentProblem


def encode(record: dict) -> bytes:
    """One record as one line (compact JSON, newline-terminated)."""
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def complete_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line without its newline) of every newline-terminated, non-blank line: a
    last line without a newline is not complete yet."""
    end = data.rfind(b"\n") + 1
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if line.strip():
            yield number, line


def incomplete_tail(data: bytes) -> bytes:
    """What follows the last newline (a write in progress or cut short by a crash), b'' when none."""
    return data[data.rfind(b"\n") + 1 :]


def reps_of(data: bytes, case_id: str | None = None) -> dict[int, dict]:
    """Repetition -> its counted record (sbcore/record_lines.py: the rule analyze applies too; a line
    it does not count is measured again)."""
    return record_lines.classify(data, case_id).records


def read(path: Path) -> bytes:
    """The file's bytes (b"" when missing), opened by sbcore/campaign_access.py: no link followed, no
    FIFO waited on."""
    return campaign_access.read_path(path, missing=b"")


def append(
    path: Path,
    records: Iterable[dict],
    details: dict[int, dict] | None = None,
    details_path: Path | None = None,
) -> list[dict]:
    """Append the records whose repetition the file does not hold yet; returns those appended (in
    order). `details` (repetition -> line) go to `details_path` for the records appended. Creates the
    files (and fsyncs their directory) on first use."""
    path = Path(path)
    records = list(records)
    fd = _open_append(path)
    created = []
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        existing = campaign_access.read_fd(fd)
        present = reps_of(existing, path.parent.name)
        new = [r for r in records if r["rep"] not in present]
        if new:
            _write_lines(fd, b"".join(encode(r) for r in new), bool(incomplete_tail(existing)), path)
            if not existing:
                created.append(path)
            lines = [details[r["rep"]] for r in new if details and details.get(r["rep"]) is not None]
            if lines and details_path is not None and _append_details(Path(details_path), lines):
                created.append(Path(details_path))
    finally:
        os.close(fd)  # releases the lock
    for directory in {p.parent for p in created}:
        fsync_dir(directory)
    return new


def _open_append(path: Path) -> int:
    campaign, relpath = campaign_access.split(path)
    try:
        return campaign_access.open_in(campaign, relpath, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as err:
        raise EnvironmentProblem(f"{path}: cannot open for appending records: {err.strerror}") from None


def _write_lines(fd: int, payload: bytes, after_cut_line: bool, path: Path) -> None:
    """The lines in one write, then fsync; on a new line when the file ends in a cut one. A failed
    write (a full disk) is one error naming the file; a line it cut short is never read as a record."""
    view = memoryview(b"\n" + payload if after_cut_line else payload)
    try:
        while view:  # a regular file takes it in one write unless the disk is full or a signal lands
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as err:
        raise EnvironmentProblem(
            f"{path}: cannot write records: {err.strerror}; a line cut short is not counted "
            "(status names it) and a resume measures it again"
        ) from None


def _append_details(path: Path, lines: list[dict]) -> bool:
    """The detail lines appended to `path` (the caller holds the record file's lock); whether the file
    was new."""
    fd = _open_append(path)
    try:
        size = os.fstat(fd).st_size
        cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        _write_lines(fd, b"".join(encode(line) for line in lines), cut, path)
    finally:
        os.close(fd)
    return size == 0


# ---- scalebench.run/2: facts once per process, a row per repetition (sbcore/record_rows.py) ----------


def store(directory: Path, records: list[dict], details: dict[int, dict] | None = None) -> list[dict]:
    """The records of ONE kernel process appended to the case directory in scalebench.run/2, for the
    repetitions the case (in either layout, sbcore/stored_records.py) does not count yet; returns those
    stored. Under one lock (on reps.csv): the facts line written and fsynced, then the keys of its
    fields' objects keyed by data to their long tables (facts.<table>.csv; the field whole in the line
    when a table there has another header), then the items of the rows' arrays to theirs
    (reps.<table>.csv), then the rows in one write, then the detail lines (probes.jsonl, keyed by
    process and rep): a row never lacks what it reads, and what a crash cuts short belongs to a process
    number no later writer takes (the cut facts line counts). Raises record_rows.RowProblem (before
    anything is written) when a PROCESS field differs within the process or a value is not of its
    declared type."""
    from sbcore import stored_records  # reads with the rule; imports this module's readers

    directory = Path(directory)
    records = list(records)
    for part in record_rows.split(records)[1]:  # every record checked before the lock: nothing half written
        record_rows.row(part, 0)
    fd = _open_append(directory / stored_records.REPS_FILE)
    created: list[Path] = []
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        present = stored_records.read(directory, directory.name, reps={r["rep"] for r in records})
        new = [r for r in records if r["rep"] not in present.records]
        if new:
            facts, parts = record_rows.split(new)
            process = present.processes
            line, facts_tables = record_rows.facts_encode(facts, process, tables=_facts_tables_fit(directory))
            if _append_payload(directory / stored_records.FACTS_FILE, line):
                created.append(directory / stored_records.FACTS_FILE)
            for table, payload in facts_tables.items():
                path = directory / record_rows.facts_table_file(table)
                if _append_payload(path, payload, header=record_rows.FACTS_TABLE_HEADERS[table]):
                    created.append(path)
            encoded = [record_rows.encode(part, process) for part in parts]
            target = _reps_target(directory)
            tables: dict[str, list[bytes]] = {}
            for _, items in encoded:
                for table, payload in items.items():
                    tables.setdefault(table, []).append(payload)
            for table, payloads in tables.items():  # the items before their rows: a row never lacks them
                path = stored_records.table_path(target, table)
                if _append_payload(path, b"".join(payloads), header=record_rows.TABLE_HEADERS[table]):
                    created.append(path)
            if _append_payload(target, b"".join(row for row, _ in encoded), header=record_rows.HEADER):
                created.append(target)
            lines = [
                details[r["rep"]] | {"process": process} for r in new if details and details.get(r["rep"])
            ]
            if lines and _append_payload(directory / PROBES_FILE, b"".join(encode(line) for line in lines)):
                created.append(directory / PROBES_FILE)
    finally:
        os.close(fd)  # releases the lock
    if created:
        fsync_dir(directory)
    return new


PROBES_FILE = "probes.jsonl"


def _facts_tables_fit(directory: Path) -> bool:
    """Every facts.<table>.csv is new or has this writer's header (one written by another version is
    never appended to: the fields stay whole in their facts lines)."""
    return all(
        not (data := read(directory / record_rows.facts_table_file(t))) or data.startswith(h)
        for t, h in record_rows.FACTS_TABLE_HEADERS.items()
    )


def _reps_target(directory: Path) -> Path:
    """reps.csv when it and its long tables are new or have this writer's headers; else the first
    reps-<n>.csv that is (a file with another header, written by another version, is never rewritten)."""
    from sbcore import stored_records

    n = 0
    while True:
        path = directory / (stored_records.REPS_FILE if n == 0 else f"reps-{n}.csv")
        headers = {path: record_rows.HEADER} | {
            stored_records.table_path(path, t): h for t, h in record_rows.TABLE_HEADERS.items()
        }
        if all(not (data := read(p)) or data.startswith(h) for p, h in headers.items()):
            return path
        n += 1


def _append_payload(path: Path, payload: bytes, header: bytes | None = None) -> bool:
    """`payload` appended to `path` (the caller holds the case's lock), after `header` when the file is
    new, on a new line when it ends in a cut one; whether the file was new."""
    fd = _open_append(path)
    try:
        size = os.fstat(fd).st_size
        cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        _write_lines(fd, (header or b"") + payload if size == 0 else payload, cut, path)
    finally:
        os.close(fd)
    return size == 0
