"""Decoding raw records fast: many files in one msgspec call, typed by the schema, with a per-file
fallback that names what is wrong with each bad file.

The `Record` type mirrors RECORD_SCHEMA (analysis/records/fields.py): decoding a file into it succeeds
exactly when the file is valid JSON satisfying the schema, and only the fields the analysis reads are
built as Python objects; everything else is skipped in C. Fields that repeat unchanged over the
repetitions of a case (params, placement, pinned CPUs) stay raw bytes here, and flatten.py derives their
columns once per distinct value.

The structs are not tracked by the cycle collector (gc=False): decoded JSON holds no cycles, and a million
tracked records cost ~10 % more to decode and to free.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec

from analysis.records.fields import RAW_NUMERIC, RAW_TEXT, schema_problem

UNSET = msgspec.UNSET
NULL = msgspec.Raw(b"null")  # the default of an absent raw field (msgspec.Raw takes part in no union)


class Pin(msgspec.Struct, gc=False):
    strategy: Any = None
    cpus: msgspec.Raw = NULL
    violations: Any = None


class Metric(msgspec.Struct, gc=False):
    sum: Any = None
    min: Any = None
    max: Any = None
    avg: Any = None
    # {"<hwthread>": value}: kept raw, parsed for all records at once (flatten.PerHwthread); likwid
    # prints '-'/nan for unmeasured values
    per_hwthread: msgspec.Raw = NULL


class Counters(msgspec.Struct, gc=False):
    status: Any = None
    group: Any = None
    reason: Any = None
    metrics: dict[str, Metric] | None = None


# Required by RECORD_SCHEMA, with its constraints (tests/analysis/test_record_fields.py checks them).
_REQUIRED = [
    ("schema", Literal["scalebench.run/1"]),
    ("kernel", str),
    ("lang", str),
    ("model", str),
    ("threads", Annotated[int, msgspec.Meta(ge=1)]),
    ("ranks", Annotated[int, msgspec.Meta(ge=1)]),
    ("params", msgspec.Raw),  # a JSON object (checked when its columns are derived)
    ("rep", Annotated[int, msgspec.Meta(ge=0)]),
    ("wall_s", Annotated[float, msgspec.Meta(gt=0)]),
    ("checksum", str),
    ("case_id", str),
    ("status", Literal["ok"]),
]
_NAMES = {name for name, _ in _REQUIRED}
# Optional, any JSON value, copied into a column of its own name (fields.RAW_TEXT, RAW_NUMERIC).
_COPIED = [(name, Any, None) for name in (*RAW_TEXT, *RAW_NUMERIC) if name not in _NAMES]
# Optional, of a structure of their own, each read by flatten.py as it says.
_STRUCTURED = [
    ("schedule", Any, UNSET),  # (unset: the case's params say it)
    ("sync", Any, UNSET),
    ("inner", Any, UNSET),
    ("warmup", Any, False),
    ("case_index", Any, None),
    ("warmup_wall_s", Any, None),
    ("build", Any, None),
    ("rank_wall_s", Any, None),
    ("placement", msgspec.Raw, NULL),
    ("pin", Pin | None, None),
    ("counters", Counters | None, None),
    ("slurm", Any, None),
    ("clock", Any, None),  # {before_ghz, after_ghz, method}
    # machine-state probe: one time per CPU, read for all records at once (machine_state_columns)
    ("probe", msgspec.Raw, NULL),
    ("sampling", Any, None),
    # scheduling scenario asked and applied, one entry per worker: derived per distinct value
    # (flatten.scenario_columns)
    ("sched", msgspec.Raw, NULL),
    ("load", Any, None),  # competing load and the CPU it got
    ("result", msgspec.Raw, NULL),  # the kernel's own statistics (flatten.result_json)
]
# What a record is decoded into: the fields the analysis reads, every other one skipped in C.
Record = msgspec.defstruct("Record", [*_REQUIRED, *_COPIED, *_STRUCTURED], gc=False)


# What decoding bad bytes raises: invalid JSON or schema, and text that is not UTF-8.
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)

_BATCH = msgspec.json.Decoder(list[Record])
_ONE = msgspec.json.Decoder(Record)


def decode_batch(blobs: list[bytes]) -> list[Record] | None:
    """All blobs as records in one call, or None when any of them is not a valid record (or not exactly
    one JSON value): the caller then decodes them one by one to find which."""
    try:
        records = _BATCH.decode(b"[" + b",".join(blobs) + b"]")
    except DECODE_ERRORS:
        return None
    return records if len(records) == len(blobs) else None


def decode_lines(data: bytes) -> list[Record]:
    """Every line of a records.jsonl as records (one of DECODE_ERRORS when any line is not a valid
    record: the caller then decodes line by line to name them)."""
    return _ONE.decode_lines(data)


def decode_one(blob: bytes) -> tuple[Record | None, str | None]:
    """(record, None) or (None, the reason in one line, as precise as the standard parsers give it)."""
    try:
        return _ONE.decode(blob), None
    except DECODE_ERRORS as err:
        failure = str(err)
    try:
        value = json.loads(blob)
    except UnicodeDecodeError as err:
        return None, f"unreadable: {err}"
    except json.JSONDecodeError as err:
        cut = err.pos >= len(blob.rstrip()) or err.msg.startswith("Unterminated string")
        truncated = " (truncated?)" if cut else ""
        return None, f"bad JSON{truncated}: {err.msg} at line {err.lineno} column {err.colno}"
    return None, schema_problem(value) or f"schema: {failure}"
