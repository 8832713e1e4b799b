"""The stored records of scalebench.run/2 read by a columnar library: every case's reps.csv rows, its
long tables (reps.<table>.csv) and its facts.jsonl lines as Arrow tables, with the column types the
declaration gives (sbcore/record_rows.py: COLUMN_TYPES, TABLES; never inferred).

The files of all cases with the writer's header are joined into one buffer per kind and parsed once
(pyarrow parses it on its threads); a row's case is its file's, by the count of its rows. Only
complete rows are read (a cut last row is a write in progress). A file with another header (a
reps-<n>.csv) is not read here: `read` names it in `left`.
Not yet the analysis's path: it reads records through analysis/records/load.py (the counting rule,
precedence of the older layout, the typed decoder); this is the columnar reader measured against the
compiled one (perf/perf_flat_reader.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

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


def _csv(raw: Path, case_ids: list[str], name: str, header: bytes, types: dict, left: list) -> pa.Table:
    """One kind of file of every case as one table (case_dir first)."""
    parts, counts = [], []
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / name, missing=b"")
        if not data:
            continue
        if not data.startswith(header):
            left.append(f"{case_id}/{name}")
            continue
        body = data[len(header) : data.rfind(b"\n") + 1]
        parts.append(body)
        counts.append((case_id, body.count(b"\n")))
    schema = {CASE: pa.dictionary(pa.int32(), pa.string())} | {c: ARROW_TYPES[t] for c, t in types.items()}
    if not parts:
        return pa.table({c: pa.array([], type=t) for c, t in schema.items()})
    table = pacsv.read_csv(
        pa.py_buffer(b"".join(parts)),
        read_options=pacsv.ReadOptions(column_names=list(types), block_size=1 << 24),
        convert_options=pacsv.ConvertOptions(
            column_types={c: ARROW_TYPES[t] for c, t in types.items()},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=["", "null"],
        ),
    )
    names = pa.array([c for c, _ in counts])
    indices = pa.array(np.repeat(np.arange(len(counts), dtype=np.int32), [n for _, n in counts]))
    return table.add_column(0, CASE, pa.DictionaryArray.from_arrays(indices, names))


def _facts(raw: Path, case_ids: list[str]) -> pa.Table:
    """The facts lines: the scalar PROCESS fields as typed columns, params as JSON text."""
    scalars = [f for f in record_fields.PROCESS_FIELDS if f.type in ARROW_TYPES]
    columns: dict[str, list] = {CASE: [], record_rows.PROCESS_KEY: [], "params": []}
    columns |= {f.name: [] for f in scalars}
    for case_id in case_ids:
        data = campaign_access.read_path(raw / case_id / stored_records.FACTS_FILE, missing=b"")
        for line in data[: data.rfind(b"\n") + 1].splitlines():
            facts = json.loads(line)
            columns[CASE].append(case_id)
            columns[record_rows.PROCESS_KEY].append(facts.get(record_rows.PROCESS_KEY))
            columns["params"].append(json.dumps(facts.get("params"), separators=(",", ":")))
            for f in scalars:
                value = facts.get(f.name)
                columns[f.name].append(
                    value if isinstance(value, record_fields.PYTHON_TYPES[f.type]) else None
                )
    types = {CASE: pa.string(), record_rows.PROCESS_KEY: pa.int64(), "params": pa.string()}
    types |= {f.name: ARROW_TYPES[f.type] for f in scalars}
    return pa.table({name: pa.array(values, type=types[name]) for name, values in columns.items()})


def joined(records: ArrowRecords) -> pa.Table:
    """A row per repetition with its process's facts beside it (reps left-joined to facts)."""
    reps = records.reps.set_column(0, CASE, records.reps[CASE].cast(pa.string()))
    return reps.join(records.facts, [CASE, record_rows.PROCESS_KEY], join_type="left outer")
