"""A record split into what its process holds once and what its repetition holds (scalebench.run/2), and
put back together: the encoding of facts.jsonl lines and reps.csv rows (sbcore/record_store.py writes
them, sbcore/stored_records.py reads them; docs/formats.md describes them).

The storage level of every field is declared once (sbcore/record_fields.py: PROCESS or REP):
- facts line: a JSON object of the PROCESS fields the records have, plus `process` (its number in the
  case) and `store` (the stored schema);
- reps.csv row: `process`, then one column per REP field in declaration order: a scalar field under its
  own name (numbers in shortest round-trip form, text always quoted per RFC 4180), an object or array as
  JSON text under '<name>_json', then `extra_json` (a JSON object of any field the declaration does not
  name and of text holding a line break, or empty): a row is one line, every newline ends one.
An empty unquoted cell is an absent field, an unquoted `null` a null; a quoted cell is text.
Pure Python, no imports of the project but the declaration.
"""

from __future__ import annotations

import json
import math

from sbcore import record_fields as rf

PROCESS_KEY = "process"
EXTRA = "extra_json"


def column_name(field: rf.Field) -> str:
    return f"{field.name}_json" if field.type in (rf.OBJECT, rf.ARRAY) else field.name


COLUMNS: tuple[str, ...] = (PROCESS_KEY, *(column_name(f) for f in rf.REP_FIELDS), EXTRA)
HEADER: bytes = (",".join(COLUMNS) + "\n").encode()
_DECLARED = frozenset(rf.BY_NAME)
_PROCESS_NAMES = tuple(f.name for f in rf.PROCESS_FIELDS)
_PROCESS_SET = frozenset(_PROCESS_NAMES)


class RowProblem(ValueError):
    """A record that cannot be stored as it is (a PROCESS field differing within a process, a value
    not of its declared type in a typed column): one line naming the field and value."""


def split(records: list[dict]) -> tuple[dict, list[dict]]:
    """The records of one kernel process -> (their PROCESS fields, each record's REP part). Raises
    RowProblem when a PROCESS field is not equal on all of them (never keeps the first silently)."""
    facts: dict = {}
    for name in _PROCESS_NAMES:
        present = [r[name] for r in records if name in r]
        if not present:
            continue
        if len(present) != len(records) or any(_canonical(v) != _canonical(present[0]) for v in present):
            values = sorted(
                {_canonical(v) for v in present} | ({"<absent>"} if len(present) < len(records) else set())
            )
            shown = ", ".join(_short(v) for v in values[:3])
            raise RowProblem(f"record field {name!r} differs within one process: {shown}")
        facts[name] = present[0]
    reps = [{k: v for k, v in r.items() if k not in _PROCESS_SET} for r in records]
    return facts, reps


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def facts_line(facts: dict, process: int) -> bytes:
    return (
        json.dumps(facts | {"store": rf.STORE_SCHEMA, PROCESS_KEY: process}, separators=(",", ":")) + "\n"
    ).encode()


def row(rep_part: dict, process: int) -> bytes:
    """One repetition's row (newline-terminated)."""
    cells = [str(process)]
    # not in a typed column: fields the declaration does not name, and text holding a line break (a
    # row is one line; JSON text escapes them)
    extra = {
        k: v
        for k, v in rep_part.items()
        if k not in _DECLARED
        or (isinstance(v, str) and ("\n" in v or "\r" in v) and rf.BY_NAME[k].type == rf.STRING)
    }
    for field in rf.REP_FIELDS:
        present = field.name in rep_part and field.name not in extra
        cells.append(_cell(field, rep_part[field.name]) if present else "")
    cells.append(_quote(json.dumps(extra, separators=(",", ":"))) if extra else "")
    return (",".join(cells) + "\n").encode()


def _cell(field: rf.Field, value) -> str:
    if field.type in (rf.OBJECT, rf.ARRAY):
        return _quote(json.dumps(value, separators=(",", ":")))
    if value is None:
        return "null"  # an explicit null, unquoted (quoted, it is the text "null")
    if field.type == rf.STRING and isinstance(value, str):
        return _quote(value)
    if field.type == rf.BOOLEAN and isinstance(value, bool):
        return "true" if value else "false"
    if (
        field.type in (rf.INTEGER, rf.NUMBER)
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ) and (isinstance(value, int) or (field.type == rf.NUMBER and math.isfinite(value))):
        return repr(value)
    raise RowProblem(
        f"record field {field.name!r}: {_short(repr(value))} is not of its declared type {field.type}"
    )


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# ---- reading -----------------------------------------------------------------------------------------


def complete_rows(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """([(1-based line number, row bytes without its newline)], the cut tail): no cell holds a newline
    (the writer sees to it), so every newline ends a row and what follows the last one is not a row yet."""
    end = data.rfind(b"\n") + 1
    return list(enumerate(data[:end].split(b"\n")[:-1], start=1)), data[end:]


def cells(raw: bytes) -> list[tuple[str | None, bool]]:
    """A row's cells by RFC 4180 as (text, quoted): None for an empty unquoted cell."""
    text = raw.decode()
    out: list[tuple[str | None, bool]] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == '"':
            j, parts = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise ValueError("a quoted cell without its closing quote")
                parts.append(text[j:k])
                if k + 1 < n and text[k + 1] == '"':
                    parts.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            out.append(("".join(parts), True))
            if i < n and text[i] != ",":
                raise ValueError(f"text after a closing quote at column {i + 1}")
        else:
            k = text.find(",", i)
            k = n if k < 0 else k
            out.append((text[i:k] or None, False))
            if '"' in text[i:k]:
                raise ValueError(f"a quote inside an unquoted cell at column {i + 1}")
            i = k
        if i >= n:
            return out
        i += 1  # past the comma


def rep_part(header: list[str], values: list[tuple[str | None, bool]]) -> tuple[int, dict]:
    """A row's (process, REP fields): ValueError naming the column when a cell does not decode."""
    if len(values) != len(header):
        raise ValueError(f"{len(values)} cells, the header has {len(header)}")
    by_column = dict(zip(header, values, strict=True))
    process = _integer(by_column.get(PROCESS_KEY, (None, False))[0], PROCESS_KEY)
    part: dict = {}
    for field in rf.REP_FIELDS:
        text, quoted = by_column.get(column_name(field), (None, False))
        if text is not None:
            part[field.name] = None if (text == "null" and not quoted) else _value(field, text)
    extra = by_column.get(EXTRA, (None, False))[0]
    if extra is not None:
        decoded = _json(extra, EXTRA)
        if not isinstance(decoded, dict):
            raise ValueError(f"{EXTRA}: not a JSON object")
        part |= decoded
    return process, part


def _value(field: rf.Field, text: str):
    if field.type in (rf.OBJECT, rf.ARRAY):
        return _json(text, column_name(field))
    if field.type == rf.STRING:
        return text
    if field.type == rf.BOOLEAN:
        if text not in ("true", "false"):
            raise ValueError(f"{field.name}: {_short(text)!r} is not true or false")
        return text == "true"
    if field.type == rf.INTEGER:
        return _integer(text, field.name)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{field.name}: {_short(text)!r} is not a number") from None


def _integer(text: str | None, name: str) -> int:
    try:
        return int(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {_short(str(text))!r} is not an integer") from None


def _json(text: str, name: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}: not valid JSON ({err.msg})") from None


def joined(facts: dict, part: dict) -> dict:
    """The record as the kernel and runner gave it: its process's fields and its repetition's."""
    return {k: v for k, v in facts.items() if k not in (PROCESS_KEY, "store")} | part
