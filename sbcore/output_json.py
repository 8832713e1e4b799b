"""The one JSON document `--json` prints (status, analyze, compare, check, history): its name and
version, declared here and nowhere else. Its schema is docs/output.schema.json (docs/json-output.md).

Every document is an object {"format": FORMAT, "version": VERSION, "command": ..., ...}; numbers that
are not finite (a CI that could not be computed) are null. A field added keeps the version; a field
renamed, removed or changed in meaning raises it.
"""

import json
import math
import sys

FORMAT = "scalebench-output"
VERSION = 2  # 2: compare and check judge undisturbed repetitions (their medians changed meaning)


def plain(value):
    """value with numpy scalars as Python numbers, NaN/inf as None, tuples as lists (recursively)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if value is not None and not isinstance(value, str | int | float | bool):
        return str(value)
    return value


def document(command: str, **body) -> dict:
    return {"format": FORMAT, "version": VERSION, "command": command, **plain(body)}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def print_document(doc: dict, out=None) -> None:
    (out or sys.stdout).write(dumps(doc))
