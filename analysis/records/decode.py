"""Decoding raw records fast: many files in one msgspec call, typed by the schema, with a per-file
fallback that names what is wrong with each bad file.

The `Record` type is built from the record's declaration (sbcore/record_fields.py), as RECORD_SCHEMA
(analysis/records/fields.py) is: decoding a file into it succeeds exactly when the file is valid JSON
satisfying the schema, and only the fields the analysis reads are built as Python objects; everything
else is skipped in C. Fields that repeat unchanged over the repetitions of a case (params, placement,
pinned CPUs) stay raw bytes here, and flatten.py derives their columns once per distinct value.

The structs are not tracked by the cycle collector (gc=False): decoded JSON holds no cycles, and a million
tracked records cost ~10 % more to decode and to free.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec

from analysis.records.fields import schema_problem
from sbcore import record_fields
from sbcore.record_fields import Field

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


# Fields decoded into a struct of their own (declared SHAPED).
_SHAPED = {"pin": Pin | None, "counters": Counters | None}


def _required_type(spec: Field):
    """A required field's type with the rule's constraints (tests/analysis/test_record_fields.py)."""
    if spec.const is not None:
        return Literal[spec.const]
    if spec.read == record_fields.RAW:
        return msgspec.Raw  # a JSON object (checked when its columns are derived)
    base = {record_fields.STRING: str, record_fields.INTEGER: int, record_fields.NUMBER: float}[spec.type]
    if spec.minimum is None:
        return base
    bound = {"gt" if spec.exclusive else "ge": spec.minimum}
    return Annotated[base, msgspec.Meta(**bound)]


def _optional(spec: Field) -> tuple:
    """An optional field: (name, type, default when absent)."""
    if spec.read == record_fields.RAW:
        return spec.name, msgspec.Raw, NULL
    if spec.read == record_fields.SHAPED:
        return spec.name, _SHAPED[spec.name], None
    return spec.name, Any, UNSET if spec.absent == record_fields.FROM_PARAMS else spec.absent


# What a record is decoded into: the declared fields the analysis reads, every other one skipped in C
# (keyword-only: required and optional fields in declaration order).
_READ = [f for f in record_fields.FIELDS if f.read != record_fields.UNREAD]
_FIELDS = [(f.name, _required_type(f)) if f.required else _optional(f) for f in _READ]
Record = msgspec.defstruct("Record", _FIELDS, kw_only=True, gc=False)


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
