"""The stored records of scalebench.run/2 read by a columnar library: every case's reps.csv rows, the
long tables the analysis reads (reps.<table>.csv) and its facts.jsonl lines, with the column types the
declaration gives (sbcore/record_rows.py: COLUMN_TYPES, TABLES; sbcore/record_fields.py; never
inferred).

The files of many cases are joined into one buffer per kind and parsed once (pyarrow parses it on its
threads); a row's case is its file's, by the count of its rows. A case whose files are not exactly what
the writer writes is not read here but named in `slow`, to be read by sbcore/stored_records.py (the
one reader, which names every problem with its file and line): a file with another header or a cut
last row, a blank line, a cell that does not parse as its declared type, a quoted line break, a facts
line that is not of the declared types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from sbcore import campaign_access, record_fields, record_rows, stored_records

ARROW_TYPES = {
    record_fields.STRING: pa.string(),
    record_fields.INTEGER: pa.int64(),
    record_fields.NUMBER: pa.float64(),
    record_fields.BOOLEAN: pa.bool_(),
}
CASE = "case_dir"  # the column naming each row's case directory
LINE = "record_line"  # a reps.csv row's line in its file (the header is line 1)


def tables_of(fields) -> list[str]:
    """The long tables holding the items of these fields' arrays and data-keyed objects."""
    parts = [f.shape for f in fields]
    for part in parts:  # (the list grows as it is walked: breadth first)
        parts += part.parts
    return list(dict.fromkeys(part.table for part in parts if part.table))


READ_TABLES = tables_of(f for f in record_fields.REP_FIELDS if f.read != record_fields.UNREAD)
BATCH_BYTES = 1 << 26  # the files joined into one buffer are parsed this many bytes at a time


@dataclass
class ArrowRecords:
    reps: pa.Table  # a row per repetition: case_dir, record_line, then reps.csv's columns
    tables: dict[str, pa.Table]  # long table -> case_dir, then its columns
    facts: list  # a decoded facts line per kernel process (_Facts)
    facts_case: list[str]  # each facts line's case directory
    slow: set[str] = field(default_factory=set)  # cases left to sbcore/stored_records.py


def read(raw: Path, case_ids: list[str]) -> ArrowRecords:
    slow: set[str] = set()
    facts, facts_case = _facts(raw, case_ids, slow)
    reps = _csv(raw, case_ids, stored_records.REPS_FILE, record_rows.HEADER, record_rows.COLUMN_TYPES, slow)
    tables: dict[str, pa.Table] = {}
    for t in READ_TABLES:
        file = stored_records.table_path(Path(stored_records.REPS_FILE), t).name
        tables[t] = _csv(raw, case_ids, file, record_rows.TABLE_HEADERS[t], record_rows.TABLES[t], slow)
    return ArrowRecords(reps, tables, facts, facts_case, slow)


def _csv(raw: Path, case_ids: list[str], name: str, header: bytes, types: dict, slow: set) -> pa.Table:
    """One kind of file of every case as one table (case_dir first), parsed a batch of files at a time
    (memory: the table and one batch of bytes)."""
    tables, batch, size = [], [], 0
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / name, missing=b"")
        if not data:
            continue
        end = data.rfind(b"\n") + 1
        body = data[len(header) : end]
        if not data.startswith(header) or data[end:].strip() or b"\n\n" in body or b"\r" in body:
            slow.add(case_id)
            continue
        batch.append((case_id, body))
        size += len(body)
        if size >= BATCH_BYTES:
            tables.append(_parsed(batch, types, slow))
            batch, size = [], 0
    if batch or not tables:
        tables.append(_parsed(batch, types, slow))
    return pa.concat_tables(tables).unify_dictionaries()


def _arrow_type(type_: str) -> pa.DataType:
    """Text as dictionary-encoded strings (few distinct values: kernel, method, strategy, key)."""
    return pa.dictionary(pa.int32(), pa.string()) if type_ == record_fields.STRING else ARROW_TYPES[type_]


def _parsed(batch: list[tuple[str, bytes]], types: dict, slow: set) -> pa.Table:
    """The rows of these cases' files; when the joined buffer does not parse, or holds another number of
    rows than of lines (a quoted line break), each case alone, and the ones that fail go to `slow`."""
    schema = {CASE: pa.dictionary(pa.int32(), pa.string()), LINE: pa.int64()}
    schema |= {c: _arrow_type(t) for c, t in types.items()}
    counts = [body.count(b"\n") for _, body in batch]
    try:
        table = _read_csv(b"".join(body for _, body in batch), types) if batch else None
    except pa.ArrowInvalid:
        table = None
    if batch and (table is None or table.num_rows != sum(counts)):
        if len(batch) > 1:
            return pa.concat_tables([_parsed([one], types, slow) for one in batch]).unify_dictionaries()
        slow.add(batch[0][0])
        batch = []
    if not batch:
        return pa.table({c: pa.array([], type=t) for c, t in schema.items()})
    names = pa.array([case for case, _ in batch])
    indices = pa.array(np.repeat(np.arange(len(batch), dtype=np.int32), counts))
    lines = np.concatenate([np.arange(2, n + 2) for n in counts])
    table = table.add_column(0, LINE, pa.array(lines))
    return table.add_column(0, CASE, pa.DictionaryArray.from_arrays(indices, names))


def _read_csv(data: bytes, types: dict) -> pa.Table:
    return pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=list(types), block_size=1 << 24),
        parse_options=pacsv.ParseOptions(newlines_in_values=False),
        convert_options=pacsv.ConvertOptions(
            column_types={c: _arrow_type(t) for c, t in types.items()},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=["", "null"],
        ),
    )


# The Python type a facts line's scalar is decoded to: its JSON type's (a number: float, the last of two).
_PYTHON = {t: record_fields.PYTHON_TYPES[t][-1] for t in ARROW_TYPES}


def _facts_field(f: record_fields.Field) -> tuple:
    if f.absent == record_fields.FROM_PARAMS:  # absent and null differ: absent takes the params' value
        return f.name, _PYTHON[f.type] | None | msgspec.UnsetType, msgspec.UNSET
    if f.type in _PYTHON:
        return f.name, _PYTHON[f.type] | None, None
    return f.name, msgspec.Raw, msgspec.Raw(b"null")  # an object or array: its JSON text


# A facts line as the declaration types it: the PROCESS fields the analysis reads (objects and arrays as
# JSON text, derived once per distinct value), and the process number.
PROCESS_READ = [f for f in record_fields.PROCESS_FIELDS if f.read != record_fields.UNREAD]
Facts = msgspec.defstruct(
    "Facts",
    [(record_rows.PROCESS_KEY, int)]
    + [_facts_field(f) for f in PROCESS_READ]
    + [(record_rows.FLAT_KEY, msgspec.Raw, msgspec.Raw(b"null"))],  # fields with parts in facts tables
    gc=False,
)
_DECODER = msgspec.json.Decoder(Facts)


def _facts(raw: Path, case_ids: list[str], slow: set) -> tuple[list, list[str]]:
    """The facts lines of the cases (a case whose lines are not all of the declared types, or with a
    cut last line: in `slow`)."""
    lines: list = []
    cases: list[str] = []
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / stored_records.FACTS_FILE, missing=b"")
        end = data.rfind(b"\n") + 1
        try:
            if data[end:].strip() or b"\n\n" in data or data.startswith(b"\n"):
                raise ValueError("a cut last line or a blank one")
            decoded = _DECODER.decode_lines(data[:end])
            _rebuild(raw / case_id, decoded)
        except (ValueError, TypeError):  # (msgspec.DecodeError is a ValueError)
            slow.add(case_id)
            continue
        lines.extend(decoded)
        cases.extend([case_id] * len(decoded))
    return lines, cases


def _rebuild(directory: Path, lines: list) -> None:
    """The lines' fields with parts in facts.<table>.csv rebuilt from those tables by
    sbcore/record_rows.py (in place, as JSON text); ValueError or TypeError when a table row or a field
    does not decode."""
    flat = [line for line in lines if bytes(line.flat) != b"null"]
    if not flat:
        return
    tables = {
        t: campaign_access.read_path(directory / record_rows.facts_table_file(t), missing=b"")
        for t in record_rows.FACTS_TABLES
    }
    items, problems = record_rows.facts_items({t: data for t, data in tables.items() if data})
    if problems:
        raise ValueError(f"not a row of a facts table: {problems[0]}")
    for line in flat:
        names = msgspec.json.decode(line.flat)
        values = {
            n: msgspec.json.decode(getattr(line, n)) for n in names if isinstance(n, str) and hasattr(line, n)
        }
        shown = {record_rows.PROCESS_KEY: line.process, record_rows.FLAT_KEY: names} | values
        rebuilt = record_rows.process_facts(shown, items)
        for name in values:
            setattr(line, name, msgspec.Raw(msgspec.json.encode(rebuilt[name])))
