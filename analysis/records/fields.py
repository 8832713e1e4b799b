"""The record's fields as the analysis reads them, declared once (docs/formats.md; the kernels'
side is kernels/record.schema.json, and tests/analysis/test_record_fields.py keeps the two in step):

- RECORD_SCHEMA: what a record must hold to be read at all. A JSON Schema (checked with jsonschema)
  so that a bad file gets a precise reason. Checking a million files with jsonschema costs tens of
  seconds, so `looks_valid` is a fast pre-check derived from the same schema: files that pass it are
  valid by construction; only the others go through jsonschema for the message.
- RAW_TEXT, RAW_NUMERIC: the fields copied as they are into a column of their own name. A new plain
  field is one name here: decode.Record decodes it, flatten.py gives its column, and the compiled
  reader (analysis/native/record_cells.*) takes its slot from the header generated from this list
  (records/native_fields.py, built by analysis/native/native.mk).
Fields of a structure of their own (params, placement, pin, counters, probe, ...) are declared where
they are decoded (decode.py).
"""

import jsonschema

NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
STRING = {"type": "string"}

RECORD_SCHEMA = {
    "type": "object",
    "required": [
        "schema",
        "kernel",
        "lang",
        "model",
        "threads",
        "ranks",
        "params",
        "rep",
        "wall_s",
        "checksum",
        "case_id",
        "status",
    ],
    "properties": {
        "schema": {"const": "scalebench.run/1"},
        "kernel": STRING,
        "lang": STRING,
        "model": STRING,
        "threads": {"type": "integer", "minimum": 1},
        "ranks": {"type": "integer", "minimum": 1},
        "params": {"type": "object"},
        "rep": {"type": "integer", "minimum": 0},
        "wall_s": {"type": "number", "exclusiveMinimum": 0},
        "checksum": STRING,
        "case_id": STRING,
        "status": {"const": "ok"},
    },
}

RAW_TEXT = ("campaign", "node_type", "hostname", "host", "kernel", "lang", "model", "checksum", "started")
RAW_TEXT += ("inner_path", "uarch")  # which inner loop ran, on which core design (stats/efficiency.py)
RAW_NUMERIC = (
    "wall_s",
    "setup_s",
    "cpu_user_s",
    "cpu_sys_s",
    "ctx_voluntary",
    "ctx_involuntary",
    "os_threads",
    "work",
    "timer_res_s",
    "runner_wall_s",
    "exit_status",
    "clock_ghz",
    "invocation",
    "in_process_rep",
    # per-worker measurements, mean and maximum over the workers (stats/pop_metrics.py)
    "worker_useful_mean_s",
    "worker_useful_max_s",
    "worker_wait_mean_s",
    "worker_cpu_mean_s",
    "worker_work_mean",
    "worker_work_max",
)

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
