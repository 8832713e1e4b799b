"""Which lines of a case's records.jsonl count: the one rule status, resume, run-case and analyze apply.

A complete line (newline-terminated) counts as repetition `rep` of its case when it is a JSON object
with the fields the analysis relies on (RECORD_FIELDS: the required fields of sbcore/record_fields.py,
with their type, constant and minimum), its `case_id` is its
directory's, and no earlier counted line holds the same `rep`. Every other line is a problem, named as
`file:line` with the reason; a last line without its newline is a write in progress or one a crash cut
short. A repetition no line counts for is measured again by resume. Pure Python (no pandas): `status`
stays light. The analysis applies the same rule (analysis/records/batches.py; its RECORD_SCHEMA is built from
RECORD_FIELDS in analysis/records/fields.py).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from sbcore import record_fields

# field -> (Python types, constant or None, minimum or None, exclusive minimum?): the required fields of
# the record's one declaration (sbcore/record_fields.py)
RECORD_FIELDS: dict[str, tuple[tuple[type, ...], object, float | None, bool]] = {
    f.name: (f.python_types, f.const, f.minimum, f.exclusive) for f in record_fields.REQUIRED
}
TRUNCATED = "truncated last line (a write in progress, or cut short by a crash)"


def field_problem(record: object) -> str | None:
    """Why a decoded line is not a record the analysis can use, or None."""
    if not isinstance(record, dict):
        return "schema: record: not a JSON object"
    for key in RECORD_FIELDS:
        if key not in record:
            return f"schema: record: '{key}' is a required property"
        why = value_problem(key, record[key])
        if why is not None:
            return why
    return None


def value_problem(key: str, value) -> str | None:
    """Why a required field's value breaks the rule (its type, constant or minimum), or None."""
    types, const, minimum, exclusive = RECORD_FIELDS[key]
    if not isinstance(value, types) or isinstance(value, bool):
        return f"schema: {key}: {_short(value)} is not of type {'/'.join(t.__name__ for t in types)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"schema: {key}: {value} is not a finite number"
    if const is not None and value != const:
        return f"schema: {key}: {const!r} was expected, not {_short(value)}"
    if minimum is not None and (value <= minimum if exclusive else value < minimum):
        return f"schema: {key}: {value} is {'not above' if exclusive else 'below'} the minimum {minimum}"
    return None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class CaseLines:
    """A records.jsonl read with the rule: repetition -> its counted record, and (line, why) problems."""

    records: dict[int, dict] = field(default_factory=dict)
    problems: list[tuple[int, str]] = field(default_factory=list)
    lines: dict[int, int] = field(default_factory=dict)  # repetition -> the line its record is on


def classify(
    data: bytes, case_id: str | None, case: dict | None = None, campaign: str | None = None
) -> CaseLines:
    """Apply the rule to a records.jsonl's bytes (case_id: its directory's; None skips that check; with
    its planned `case` and `campaign` name, records that do not belong to them are not counted either)."""
    result = CaseLines()
    end = data.rfind(b"\n") + 1
    number = 0
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        record, why = decode_line(line)
        if why is None:
            why = placement_problem(record, case_id, result.records)
        if why is None and case is not None:
            why = belonging_problem(record, case, campaign)
        if why is None:
            result.records[record["rep"]] = record
            result.lines[record["rep"]] = number
        else:
            result.problems.append((number, why))
    if data[end:].strip():
        result.problems.append((number + 1, TRUNCATED))
    return result


def decode_line(line: bytes) -> tuple[dict | None, str | None]:
    try:
        record = json.loads(line)
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except json.JSONDecodeError as err:
        cut = err.pos >= len(line.rstrip()) or err.msg.startswith("Unterminated string")
        return None, f"not valid JSON{', truncated?' if cut else ''} ({err.msg} at column {err.colno})"
    why = field_problem(record)
    return (record, None) if why is None else (None, why)


def placement_problem(record: dict, case_id: str | None, counted) -> str | None:
    """A well-formed record in the wrong place: another case's, or a repetition already counted."""
    if case_id is not None and record["case_id"] != case_id:
        return f"case_id {record['case_id']!r} does not match its directory {case_id!r}"
    if record["rep"] in counted:
        return f"rep {record['rep']} is recorded twice; the first record counts"
    return None


def belonging_problem(record: dict, case: dict, campaign: str | None = None) -> str | None:
    """A well-formed record of the case's directory that its plan cannot have produced: a repetition
    outside the case's planned ones, a time longer than the case's timeout_s (its process would have
    been killed first), or a record of another campaign (by the name it carries, when both have one).
    Status, resume and analyze all leave such a record out and name it."""
    reps = case.get("reps")
    if isinstance(reps, int) and not 0 <= record["rep"] < reps:
        return f"rep {record['rep']} is outside the case's plan (reps 0..{reps - 1})"
    timeout = case.get("timeout_s")
    if isinstance(timeout, int | float) and record["wall_s"] > timeout:
        return f"wall_s {record['wall_s']:g} is implausible: longer than the case's timeout_s ({timeout:g} s)"
    other = record.get("campaign")
    if campaign is not None and isinstance(other, str) and other != campaign:
        return f"a record of campaign {_short(other)}, not of {campaign!r}"
    return None
