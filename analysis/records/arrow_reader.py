"""The stored records of scalebench.run/2 read by a columnar library: every case's reps.csv rows, its
long tables (reps.<table>.csv) and its facts.jsonl lines as Arrow tables, with the column types the
declaration gives (sbcore/record_rows.py: COLUMN_TYPES, TABLES; never inferred).

The files of all cases with the writer's header are joined into one buffer per kind and parsed once
(pyarrow parses it on its threads); a row's case is its file's, by the count of its rows. Only
complete rows are read (a cut last row is a write in progress). A file with another header (a
reps-<n>.csv) is not read here: `read` names it in `left`.
Not yet the analysis's path: it reads records through analysis/records/load.py (the counting rule,
precedence of the older layout, the typed decoder); this is the columnar reader measured beside that
load (perf/perf_flat_reader.py).
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


@dataclass
class ArrowRecords:
    reps: pa.Table  # a row per repetition: case_dir, then reps.csv's columns
    tables: dict[str, pa.Table]  # long table -> case_dir, then its columns
    facts: pa.Table  # a row per kernel process: case_dir, process, the scalar PROCESS fields, params
    left: list[str] = field(default_factory=list)  # files not read here (another header)


def read(raw: Path, case_ids: list[str]) -> ArrowRecords:
    left: list[str] = []
    reps = _csv(raw, case_ids, stored_records.REPS_FILE, record_rows.HEADER, record_rows.COLUMN_TYPES, left)
    tables = {
        name: _csv(
            raw, case_ids, f"reps.{name}.csv", record_rows.TABLE_HEADERS[name], record_rows.TABLES[name], left
        )
        for name in record_rows.TABLES
    }
    return ArrowRecords(reps, tables, _facts(raw, case_ids), left)


BATCH_BYTES = 1 << 26  # the files joined into one buffer are parsed this many bytes at a time


def _csv(raw: Path, case_ids: list[str], name: str, header: bytes, types: dict, left: list) -> pa.Table:
    """One kind of file of every case as one table (case_dir first), parsed a batch of files at a time
    (memory: the table and one batch of bytes)."""
    tables, parts, counts, size = [], [], [], 0
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / name, missing=b"")
        if data and not data.startswith(header):
            left.append(f"{case_id}/{name}")
        elif data:
            body = data[len(header) : data.rfind(b"\n") + 1]
            parts.append(body)
            counts.append((case_id, body.count(b"\n")))
            size += len(body)
        if size >= BATCH_BYTES:
            tables.append(_parsed(parts, counts, types))
            parts, counts, size = [], [], 0
    if parts or not tables:
        tables.append(_parsed(parts, counts, types))
    return pa.concat_tables(tables).unify_dictionaries()


def _arrow_type(type_: str) -> pa.DataType:
    """Text as dictionary-encoded strings (few distinct values: kernel, method, strategy, key)."""
    return pa.dictionary(pa.int32(), pa.string()) if type_ == record_fields.STRING else ARROW_TYPES[type_]


def _parsed(parts: list[bytes], counts: list[tuple[str, int]], types: dict) -> pa.Table:
    schema = {CASE: pa.dictionary(pa.int32(), pa.string())} | {c: _arrow_type(t) for c, t in types.items()}
    if not parts:
        return pa.table({c: pa.array([], type=t) for c, t in schema.items()})
    table = pacsv.read_csv(
        pa.py_buffer(b"".join(parts)),
        read_options=pacsv.ReadOptions(column_names=list(types), block_size=1 << 24),
        convert_options=pacsv.ConvertOptions(
            column_types={c: _arrow_type(t) for c, t in types.items()},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=["", "null"],
        ),
    )
    names = pa.array([c for c, _ in counts])
    indices = pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), [n for _, n in counts]))
    return table.add_column(0, CASE, pa.DictionaryArray.from_arrays(indices, names))


_SCALARS = [f for f in record_fields.PROCESS_FIELDS if f.type in ARROW_TYPES]
_PYTHON = {
    record_fields.STRING: str,
    record_fields.INTEGER: int,
    record_fields.NUMBER: float,
    record_fields.BOOLEAN: bool,
}
# A facts line as typed as the declaration: its scalar PROCESS fields, its params kept as JSON text.
_Facts = msgspec.defstruct(
    "_Facts",
    [(record_rows.PROCESS_KEY, int), ("params", msgspec.Raw, msgspec.Raw(b"null"))]
    + [(f.name, _PYTHON[f.type] | None, None) for f in _SCALARS],
)
_DECODER = msgspec.json.Decoder(_Facts)


def _facts(raw: Path, case_ids: list[str]) -> pa.Table:
    """The facts lines: the scalar PROCESS fields as typed columns, params as JSON text. ValueError
    naming the file when a line is not of the declared types."""
    lines: list = []
    cases: list[str] = []
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / stored_records.FACTS_FILE, missing=b"")
        try:
            decoded = _DECODER.decode_lines(data[: data.rfind(b"\n") + 1])
        except msgspec.DecodeError as err:
            raise ValueError(f"{case_id}/{stored_records.FACTS_FILE}: {err}") from None
        lines.extend(decoded)
        cases.extend([case_id] * len(decoded))
    columns = {CASE: pa.array(cases, pa.string())}
    columns[record_rows.PROCESS_KEY] = pa.array([f.process for f in lines], pa.int64())
    columns["params"] = pa.array([bytes(f.params).decode() for f in lines], pa.string())
    for f in _SCALARS:
        column = pa.array([getattr(line, f.name) for line in lines], ARROW_TYPES[f.type])
        columns[f.name] = column.dictionary_encode() if f.type == record_fields.STRING else column
    return pa.table(columns)


def joined(records: ArrowRecords) -> pa.Table:
    """A row per repetition with its process's facts beside it (a row whose process has no facts line:
    nulls there)."""
    reps, facts = records.reps, records.facts
    names = reps[CASE].combine_chunks().dictionary.to_pylist()
    code = {name: i for i, name in enumerate(names)}
    rep_keys = reps[CASE].combine_chunks().indices.to_numpy().astype(np.int64) << 32
    rep_keys |= reps[record_rows.PROCESS_KEY].to_numpy(zero_copy_only=False).astype(np.int64)
    fact_codes = np.array([code.get(c, -1) for c in facts[CASE].to_pylist()], dtype=np.int64)
    fact_keys = (fact_codes << 32) | facts[record_rows.PROCESS_KEY].to_numpy().astype(np.int64)
    order = np.argsort(fact_keys, kind="stable")
    at = np.searchsorted(fact_keys[order], rep_keys).clip(0, max(len(order) - 1, 0))
    found = fact_keys[order][at] == rep_keys if len(order) else np.zeros(len(rep_keys), bool)
    take = pa.array(order[at] if len(order) else at, mask=~found)
    extra = facts.drop_columns([CASE, record_rows.PROCESS_KEY]).take(take)
    for name in extra.column_names:
        reps = reps.append_column(name, extra[name])
    return reps
