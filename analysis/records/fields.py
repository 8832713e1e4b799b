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

RAW_TEXT = ("campaign", "node_type", "hostname", "host", "kernel", "lang", "model", "checksum", "started")
RAW_TEXT += ("inner_path", "uarch")  # which inner loop ran, on which core design (stats/efficiency.py)
RAW_TEXT += ("duet_partner",)  # the case measured at the same time on another CPU (jobs/duets.py)
RAW_TEXT += ("pop_method", "scaling")  # a user's program: its per-worker times' method; weak or strong
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
    "trial",  # the trial of its comparison family and its place in it (jobs/families.py)
    "trial_slot",
    "duet_cpu",
    # per-worker measurements, mean and maximum over the workers (stats/pop_metrics.py)
    "worker_useful_mean_s",
    "worker_useful_max_s",
    "worker_wait_mean_s",
    "worker_wait_at_useful_max_s",
    "worker_cpu_mean_s",
    "worker_work_mean",
    "worker_work_max",
    "worker_clock_ghz_mean",
    "worker_clock_ghz_min",
    # a user's program (kernels/programs/): the whole process, and what the POP metrics divide by
    "process_wall_s",
    "pop_wall_s",
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
