"""The record's fields as the analysis reads them, derived from their one declaration
(sbcore/record_fields.py; tests/analysis/test_record_fields.py keeps kernels/record.schema.json in step):

- RECORD_SCHEMA: what a record must hold to be read at all. A JSON Schema (checked with jsonschema)
  so that a bad file gets a precise reason. Checking a million files with jsonschema costs tens of
  seconds, so `looks_valid` is a fast pre-check derived from the same schema: files that pass it are
  valid by construction; only the others go through jsonschema for the message.
- RAW_TEXT, RAW_NUMERIC: the fields declared `COLUMN`, copied as they are into a column of their own
  name. A new plain field is one line in the declaration: decode.Record decodes it, flatten.py gives its
  column.
Fields of a structure of their own (params, placement, pin, counters, probe, ...) are decoded as their
declaration says (decode.py) and their columns derived in flatten.py.
"""

import jsonschema

from sbcore import record_fields
from sbcore.record_lines import RECORD_FIELDS

NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
STRING = {"type": "string"}

# The JSON Schema form of the fields every counted record line holds, built from their one
# declaration (sbcore/record_lines.py, the rule status, resume and run-case apply too).
_JSON_TYPES = {(str,): "string", (int,): "integer", (int, float): "number", (dict,): "object"}


def _property(types: tuple, const, minimum, exclusive: bool) -> dict:
    if const is not None:
        return {"const": const}
    spec = {"type": _JSON_TYPES[types]}
    if minimum is not None:
        spec["exclusiveMinimum" if exclusive else "minimum"] = minimum
    return spec


RECORD_SCHEMA = {
    "type": "object",
    "required": list(RECORD_FIELDS),
    "properties": {key: _property(*spec) for key, spec in RECORD_FIELDS.items()},
}

# The fields copied as they are into a column of their own name, text and numbers, in declaration order.
_COLUMNS = [f for f in record_fields.FIELDS if f.read == record_fields.COLUMN]
RAW_TEXT = tuple(f.name for f in _COLUMNS if f.type == record_fields.STRING)
RAW_NUMERIC = tuple(f.name for f in _COLUMNS if f.type != record_fields.STRING)

_VALIDATOR = jsonschema.Draft202012Validator(RECORD_SCHEMA)
_PY_TYPES = {"number": (int, float), "integer": int, "string": str, "object": dict}
_TYPE_CHECKS = [
    (key, _PY_TYPES[spec["type"]]) for key, spec in RECORD_SCHEMA["properties"].items() if "type" in spec
]
_CONSTS = [(key, spec["const"]) for key, spec in RECORD_SCHEMA["properties"].items() if "const" in spec]


def looks_valid(record: object) -> bool:
    """True only if `record` satisfies RECORD_SCHEMA (type, const and the two minimum checks)."""
    if not isinstance(record, dict):
        return False
    try:
        for key, types in _TYPE_CHECKS:
            value = record[key]
            if not isinstance(value, types) or isinstance(value, bool):
                return False
        for key, const in _CONSTS:
            if record[key] != const:
                return False
    except KeyError:
        return False
    return record["wall_s"] > 0 and record["threads"] >= 1 and record["ranks"] >= 1 and record["rep"] >= 0


def schema_problem(record: object) -> str | None:
    """The first schema violation as one readable line, or None."""
    if looks_valid(record):
        return None
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(record))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "record"
    return f"schema: {where}: {error.message}"
