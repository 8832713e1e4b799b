"""A record split into what its process holds once and what its repetition holds (scalebench.run/2), and
put back together: the encoding of facts.jsonl lines, reps.csv rows and the rows of their long tables
(sbcore/record_store.py writes them, sbcore/stored_records.py reads them; docs/formats.md describes them).

The storage level of every field, and the flat shape of a REP object or array, are declared once
(sbcore/record_fields.py: PROCESS or REP, Field.flat):
- facts line: a JSON object of the PROCESS fields the records have, plus `process` (its number in the
  case) and `store` (the stored schema); a PROCESS object's parts keyed by data that its `flat` declares
  (counters' metrics and events) are replaced in it by '<name>_n' and listed under `flat`, their keys
  rows of facts.<table>.csv (FACTS_TABLES: table -> column -> type), keyed by process, the index of
  each enclosing row ('<key>_index') and index, then the key and its value's columns;
- reps.csv row: `process`, then the columns of every REP field in declaration order: a scalar field under
  its own name, an object's keys as '<name>_<key>' (nested: '<name>_<key>_<key>'), an array's length or
  a data-keyed object's size as '<name>_n' (null when the array or object is null), then `extra_json`
  (a JSON object of any field the declaration does not name or does not fit, and of text holding a
  line break, or empty): a row is one line;
- reps.<table>.csv (beside reps-<n>.csv: reps-<n>.<table>.csv): the items of the arrays declared in that
  long table, one row per (process, rep, index): `process,rep,index`, then the table's columns.
Numbers in shortest round-trip form, text always quoted per RFC 4180; an empty unquoted cell is an absent
field (in a long table: a position beyond its array's length), an unquoted `null` a null; a quoted cell
is text. A value is stored flat only when it reads back exactly (its keys in its order, integers as
integers); otherwise whole in extra_json (a PROCESS field: whole in its facts line).
Pure Python, no imports of the project but the declaration.
"""

from __future__ import annotations

import json
import math

from sbcore import record_fields as rf

PROCESS_KEY = "process"
EXTRA = "extra_json"
COUNT = "_n"  # the suffix of an array's length column
KEYED = {"key": rf.STRING, "integer": rf.INTEGER, "number": rf.NUMBER, "text": rf.STRING}
TABLE_KEYS = (PROCESS_KEY, "rep", "index")
_SCALARS = (rf.STRING, rf.INTEGER, rf.NUMBER, rf.BOOLEAN)


def _layout(part: rf.Part, path: str, reps: list, tables: dict) -> None:
    """The columns of one declared shape: reps.csv's (name, type) and each long table's."""
    if part.type in _SCALARS:
        reps.append((path, part.type))
    elif part.type == rf.OBJECT and not part.table:
        for sub in part.parts:
            _layout(sub, f"{path}_{sub.name}", reps, tables)
    else:  # an array, or an object keyed by data: its length here, its items in its table
        reps.append((path + COUNT, rf.INTEGER))
        columns = tables.setdefault(part.table, []) if part.table else []
        if part.type == rf.OBJECT:
            own = [(f"{path}_{k}", t) for k, t in KEYED.items()]
        else:
            own = [(_item_column(path, p), p.type) for p in part.parts]
        columns.extend(own)
        if part.table:
            ARRAYS[path + COUNT] = (part.table, [c for c, _ in own])


def _item_column(path: str, part: rf.Part) -> str:
    return f"{path}_{part.name}" if part.name else path


# An array (or data-keyed object) stored in a long table: its count column -> (table, its item columns).
ARRAYS: dict[str, tuple[str, list[str]]] = {}
_reps: list = [(PROCESS_KEY, rf.INTEGER)]
_tables: dict = {}
for _field in rf.REP_FIELDS:
    _layout(_field.shape, _field.name, _reps, _tables)
_reps.append((EXTRA, rf.STRING))
COLUMN_TYPES: dict[str, str] = dict(_reps)  # reps.csv: column -> declared type (JSON type name)
TABLES: dict[str, dict[str, str]] = {  # long table -> its columns -> declared type
    t: {k: rf.INTEGER for k in TABLE_KEYS} | dict(cols) for t, cols in _tables.items()
}
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
HEADER: bytes = (",".join(COLUMNS) + "\n").encode()
TABLE_HEADERS: dict[str, bytes] = {t: (",".join(c) + "\n").encode() for t, c in TABLES.items()}

# ---- the long tables beside facts.jsonl: a PROCESS field's objects keyed by data (Field.flat) ---------
FLAT_KEY = "flat"  # a facts line's list of the fields whose parts are in facts.<table>.csv
VALUE = "value"  # the column of a scalar value of an object keyed by data


def _facts_layout(part: rf.Part, outer: tuple[str, ...], tables: dict) -> None:
    """The columns of the long table of one object keyed by data, then those of the tables inside."""
    if (
        part.type != rf.OBJECT
        or not part.table
        or part.key is None
        or part.key.type not in (rf.STRING, rf.INTEGER)
    ):
        raise TypeError(
            f"{part.name}: a PROCESS field's flat part is an object keyed by data, with table and key"
        )
    columns = {PROCESS_KEY: rf.INTEGER} | dict.fromkeys(outer, rf.INTEGER)
    columns |= {"index": rf.INTEGER, part.key.name: part.key.type}
    tables[part.table] = columns
    for sub in part.parts:
        if sub.type in _SCALARS:
            columns[sub.name or VALUE] = sub.type
        else:
            columns[sub.name + COUNT] = rf.INTEGER
            _facts_layout(sub, (*outer, f"{part.key.name}_index"), tables)


FLAT_PROCESS_FIELDS: tuple[rf.Field, ...] = tuple(f for f in rf.PROCESS_FIELDS if f.flat is not None)
_facts_tables: dict = {}
for _field in FLAT_PROCESS_FIELDS:
    for _part in _field.flat.parts:
        _facts_layout(_part, (), _facts_tables)
FACTS_TABLES: dict[str, dict[str, str]] = _facts_tables  # facts.<table>.csv -> its columns -> declared type
FACTS_TABLE_HEADERS: dict[str, bytes] = {t: (",".join(c) + "\n").encode() for t, c in FACTS_TABLES.items()}
FACTS_TABLE_KEYS: dict[str, tuple[str, ...]] = {  # a facts table's key columns: process, ..., index
    t: tuple(c)[: tuple(c).index("index") + 1] for t, c in FACTS_TABLES.items()
}


def facts_table_file(table: str) -> str:
    """The file of a facts table, beside facts.jsonl."""
    return f"facts.{table}.csv"


_DECLARED = frozenset(rf.BY_NAME)
_PROCESS_NAMES = tuple(f.name for f in rf.PROCESS_FIELDS)
_PROCESS_SET = frozenset(_PROCESS_NAMES)
_ABSENT = object()


class RowProblem(ValueError):
    """A record that cannot be stored as it is (a PROCESS field differing within a process, a value
    not of its declared type in a typed column): one line naming the field and value."""


class _NoFit(Exception):
    """A value the declared flat shape does not hold (it goes whole to extra_json)."""


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
    """The facts line with every field whole (what facts_encode falls back to)."""
    return facts_encode(facts, process, tables=False)[0]


def facts_encode(facts: dict, process: int, tables: bool = True) -> tuple[bytes, dict[str, bytes]]:
    """A process's facts line and the rows of its facts tables (table -> bytes, newline-terminated). A
    field declared flat goes to the tables only when it reads back exactly from them (and `tables`):
    else it stays whole in the line."""
    line = dict(facts)
    flat: list[str] = []
    out: dict[str, bytes] = {}
    for field in FLAT_PROCESS_FIELDS if tables else ():
        if field.name not in facts:
            continue
        rows: dict[str, list[dict]] = {}
        try:
            kept = _encode_flat_field(field, facts[field.name], process, rows)
            payloads = {t: _facts_table_bytes(t, r) for t, r in rows.items()}
            items, problems = facts_items({t: FACTS_TABLE_HEADERS[t] + b for t, b in payloads.items()})
            if problems or json.dumps(_decode_flat_field(field, kept, process, items)) != json.dumps(
                facts[field.name]
            ):
                raise _NoFit
        except (_NoFit, ValueError):
            continue
        line[field.name] = kept
        flat.append(field.name)
        for table, payload in payloads.items():
            out[table] = out.get(table, b"") + payload
    line |= {"store": rf.STORE_SCHEMA, PROCESS_KEY: process} | ({FLAT_KEY: flat} if flat else {})
    return (json.dumps(line, separators=(",", ":")) + "\n").encode(), out


def _encode_flat_field(field: rf.Field, value, process: int, rows: dict) -> dict:
    """The field's object as its facts line keeps it ('<name>_n' in place of each declared object),
    the rows of those objects added to `rows` (table -> [columns])."""
    if not isinstance(value, dict):
        raise _NoFit
    declared = {p.name: p for p in field.flat.parts}
    kept: dict = {}
    for key, sub in value.items():
        part = declared.get(key)
        if part is None:
            if not isinstance(key, str) or (key.endswith(COUNT) and key.removesuffix(COUNT) in declared):
                raise _NoFit  # the name the count of a declared object takes, or not text
            kept[key] = sub
            continue
        kept[key + COUNT] = _encode_keyed(part, sub, {PROCESS_KEY: process}, rows)
    return kept


def _encode_keyed(part: rf.Part, value, outer: dict, rows: dict) -> int | None:
    """An object keyed by data into the rows of its table (and of the tables inside): its size."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _NoFit
    scalar = len(part.parts) == 1 and not part.parts[0].name
    subs = {p.name: p for p in part.parts}
    for index, (key, sub) in enumerate(value.items()):
        row = outer | {"index": index, part.key.name: _key_cell(part.key.type, key)}
        if scalar:
            _check(part.parts[0].type, sub, part.name)
            row[VALUE] = sub
        elif not isinstance(sub, dict):
            raise _NoFit
        else:
            inner = outer | {f"{part.key.name}_index": index}
            for name, item in sub.items():
                declared = subs.get(name)
                if declared is None:
                    raise _NoFit
                if declared.type in _SCALARS:
                    _check(declared.type, item, name)
                    row[name] = item
                else:
                    row[name + COUNT] = _encode_keyed(declared, item, inner, rows)
        rows.setdefault(part.table, []).append(row)
    return len(value)


def _key_cell(type_: str, key):
    if not isinstance(key, str):
        raise _NoFit  # a key json.dumps would turn into text
    if type_ == rf.INTEGER:
        if not key.isascii() or not key.isdigit() or str(int(key)) != key:
            raise _NoFit  # reads back as str(int): only a key that is its canonical decimal text
        return int(key)
    if "\n" in key or "\r" in key:
        raise _NoFit
    return key


def _facts_table_bytes(table: str, rows: list[dict]) -> bytes:
    columns = FACTS_TABLES[table]
    return "".join(
        ",".join(_cell(t, r[c]) if c in r else "" for c, t in columns.items()) + "\n" for r in rows
    ).encode()


def _decode_flat_field(field: rf.Field, kept, process: int, items: dict):
    """The field's object from its facts line's value and its tables' items (facts_items); ValueError
    naming the object when an item is missing or does not fit."""
    if not isinstance(kept, dict):
        raise ValueError(f"{field.name}: not an object")
    counted = {p.name + COUNT: p for p in field.flat.parts}
    out: dict = {}
    for key, value in kept.items():
        part = counted.get(key)
        if part is None:
            out[key] = value
        else:
            out[part.name] = _decode_keyed(part, value, (process,), items, field.name)
    return out


def _decode_keyed(part: rf.Part, count, outer: tuple, items: dict, path: str):
    path = f"{path}.{part.name}"
    if count is None:
        return None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError(f"{path}{COUNT}: {count!r} is not a count")
    rows = items.get(part.table, {})
    scalar = len(part.parts) == 1 and not part.parts[0].name
    out: dict = {}
    for index in range(count):
        row = rows.get((*outer, index))
        if row is None:
            raise ValueError(f"{path}: {count} keys, not all in {facts_table_file(part.table)}")
        key = row.get(part.key.name)
        if key is None:
            raise ValueError(f"{path}: no {part.key.name} in {facts_table_file(part.table)}")
        key = str(key)
        if key in out:
            raise ValueError(f"{path}: key {_short(key)!r} twice in {facts_table_file(part.table)}")
        if scalar:
            if VALUE not in row:
                raise ValueError(f"{path}: no {VALUE} in {facts_table_file(part.table)}")
            out[key] = row[VALUE]
            continue
        value = {}
        for sub in part.parts:
            if sub.type in _SCALARS:
                if sub.name in row:
                    value[sub.name] = row[sub.name]
            elif sub.name + COUNT in row:
                value[sub.name] = _decode_keyed(sub, row[sub.name + COUNT], (*outer, index), items, path)
        out[key] = value
    return out


def facts_items(
    tables: dict[str, bytes], processes: set[int] | None = None
) -> tuple[dict, list[tuple[str, int, str]]]:
    """The rows of facts tables (table -> the file's bytes): (table -> key tuple -> columns, problems
    as (file name, line, why)). A cut last row is not read (its process's line came first and its
    rows never followed, sbcore/record_store.py); the last row of a key wins. With `processes`, only
    the rows whose first cell is one of them are decoded (and named)."""
    items: dict = {}
    problems = []
    for table, data in tables.items():
        name = facts_table_file(table)
        columns = FACTS_TABLES.get(table, {})
        keys = FACTS_TABLE_KEYS.get(table, (PROCESS_KEY, "index"))
        rows, _ = complete_rows(data)
        header = None
        for number, raw in rows:
            if header is None:
                header = raw.decode(errors="replace").split(",")
                continue
            if processes is not None and _first_cell(raw) not in processes:
                continue
            try:
                found = typed_cells(header, cells(raw), columns)
                key = tuple(found.pop(k, None) for k in keys)
                if not all(isinstance(k, int) for k in key):
                    raise ValueError(f"no integer {', '.join(keys)}")
            except (ValueError, UnicodeDecodeError) as err:
                problems.append((name, number, f"not a row: {err}"))
                continue
            items.setdefault(table, {})[key] = found
    return items, problems


def _first_cell(raw: bytes) -> int | None:
    try:
        return int(raw.split(b",", 1)[0])
    except ValueError:
        return None


def process_facts(line: dict, items: dict) -> dict:
    """A facts line with its flat fields rebuilt from their tables' items (facts_items); ValueError
    naming the field when they do not rebuild it."""
    flat = line.get(FLAT_KEY)
    if flat is None:
        return line
    if not isinstance(flat, list) or not all(isinstance(n, str) for n in flat):
        raise ValueError(f"{FLAT_KEY}: not a list of field names")
    out = dict(line)
    for name in flat:
        field = rf.BY_NAME.get(name)
        if field is None or field.flat is None or field.level != rf.PROCESS or name not in line:
            raise ValueError(f"{FLAT_KEY}: {_short(name)!r} is not a field stored in facts tables")
        out[name] = _decode_flat_field(field, line[name], line.get(PROCESS_KEY), items)
    return out


def row(rep_part: dict, process: int) -> bytes:
    """One repetition's reps.csv row (newline-terminated); RowProblem when a scalar is not of its type."""
    return encode(rep_part, process)[0]


def encode(rep_part: dict, process: int) -> tuple[bytes, dict[str, bytes]]:
    """One repetition's reps.csv row and its long tables' rows (table -> bytes, newline-terminated)."""
    cells: dict = {PROCESS_KEY: process}
    items: dict = {}
    extra: dict = {}
    keyed = isinstance(rep_part.get("rep"), int) and not isinstance(rep_part.get("rep"), bool)
    for key, value in rep_part.items():
        field = rf.BY_NAME.get(key)
        if field is None:
            extra[key] = value
        elif field.type in _SCALARS:
            if isinstance(value, str) and ("\n" in value or "\r" in value) and field.type == rf.STRING:
                extra[key] = value  # a row is one line; JSON text escapes line breaks
            else:
                _check(field.type, value, key, strict=True)
                cells[key] = value
        else:
            own_cells: dict = {}
            own_items: dict = {}
            try:
                if not keyed:
                    raise _NoFit
                _encode(field.shape, key, value, own_cells, own_items)
                if json.dumps(_decode(field.shape, key, own_cells, own_items)) != json.dumps(value):
                    raise _NoFit
            except _NoFit:
                extra[key] = value
                continue
            cells |= own_cells
            for table, rows in own_items.items():
                for index, item in rows.items():
                    items.setdefault(table, {}).setdefault(index, {}).update(item)
    if extra:
        cells[EXTRA] = json.dumps(extra, separators=(",", ":"))
    line = ",".join(_cell(COLUMN_TYPES[c], cells[c]) if c in cells else "" for c in COLUMNS)
    out = {}
    for table, rows in items.items():
        columns = TABLES[table]
        lines = []
        for index in sorted(rows):
            item = rows[index] | {PROCESS_KEY: process, "rep": rep_part["rep"], "index": index}
            lines.append(",".join(_cell(t, item[c]) if c in item else "" for c, t in columns.items()) + "\n")
        out[table] = "".join(lines).encode()
    return (line + "\n").encode(), out


def _check(type_: str, value, name: str, strict: bool = False) -> None:
    """A scalar of its declared type (or null); strict: RowProblem, else _NoFit."""
    if value is None:
        return
    if type_ == rf.STRING:
        ok = isinstance(value, str) and (strict or ("\n" not in value and "\r" not in value))
    elif type_ == rf.BOOLEAN:
        ok = isinstance(value, bool)
    elif type_ == rf.INTEGER:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value)
        )
    if not ok:
        if strict:
            raise RowProblem(
                f"record field {name!r}: {_short(repr(value))} is not of its declared type {type_}"
            )
        raise _NoFit


def _encode(part: rf.Part, path: str, value, cells: dict, items: dict) -> None:
    """A value into its declared columns (cells) and long-table items (table -> index -> columns)."""
    if part.type in _SCALARS:
        _check(part.type, value, path)
        cells[path] = value
    elif part.type == rf.OBJECT and not part.table:
        if not isinstance(value, dict) or not value:  # {} would read back as absent
            raise _NoFit
        subs = {p.name: p for p in part.parts}
        for key, sub in value.items():
            if key not in subs:
                raise _NoFit
            _encode(subs[key], f"{path}_{key}", sub, cells, items)
    elif part.type == rf.OBJECT and value is None:  # a null object keyed by data: its size null
        cells[path + COUNT] = None
    elif part.type == rf.OBJECT:
        if not isinstance(value, dict):
            raise _NoFit
        cells[path + COUNT] = len(value)
        rows = items.setdefault(part.table, {})
        for index, (key, sub) in enumerate(value.items()):
            kind = "number" if sub is None else _kind(sub)
            rows[index] = {f"{path}_key": key, f"{path}_{kind}": sub}
    elif value is None:  # a null array: its length null
        cells[path + COUNT] = None
    else:
        if not isinstance(value, list) or (value and not part.parts):
            raise _NoFit
        cells[path + COUNT] = len(value)
        rows = items.setdefault(part.table, {}) if value else {}
        scalar = len(part.parts) == 1 and not part.parts[0].name
        for index, item in enumerate(value):
            if scalar:
                _check(part.parts[0].type, item, path)
                rows[index] = {path: item}
                continue
            if not isinstance(item, list) or len(item) != len(part.parts):
                raise _NoFit
            for sub, sub_value in zip(part.parts, item, strict=True):
                _check(sub.type, sub_value, path)
            rows[index] = {_item_column(path, p): v for p, v in zip(part.parts, item, strict=True)}


def _kind(value) -> str:
    """The column of a data-keyed object's value."""
    if isinstance(value, bool):
        raise _NoFit
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float) and math.isfinite(value):
        return "number"
    if isinstance(value, str) and "\n" not in value and "\r" not in value:
        return "text"
    raise _NoFit


def _decode(part: rf.Part, path: str, cells: dict, items: dict):
    """The value of a declared shape from its columns (absent: _ABSENT); ValueError when an item of
    its long table is missing."""
    if part.type in _SCALARS:
        return cells.get(path, _ABSENT)
    if part.type == rf.OBJECT and not part.table:
        out = {}
        for sub in part.parts:
            value = _decode(sub, f"{path}_{sub.name}", cells, items)
            if value is not _ABSENT:
                out[sub.name] = value
        return out or _ABSENT
    count = cells.get(path + COUNT, _ABSENT)
    if count is _ABSENT or count is None:
        return count
    if not isinstance(count, int) or count < 0:
        raise ValueError(f"{path}{COUNT}: {count!r} is not a length")
    rows = items.get(part.table, {})
    try:
        if part.type == rf.OBJECT:
            out = {}
            for index in range(count):
                item = rows[index]
                kind = next(k for k in ("integer", "number", "text") if f"{path}_{k}" in item)
                out[item[f"{path}_key"]] = item[f"{path}_{kind}"]
            return out
        if len(part.parts) == 1 and not part.parts[0].name:
            return [rows[index][path] for index in range(count)]
        return [[rows[index][_item_column(path, p)] for p in part.parts] for index in range(count)]
    except (KeyError, StopIteration):
        raise ValueError(f"{path}: {count} items, not all in reps.{part.table}.csv") from None


def _cell(type_: str, value) -> str:
    if value is None:
        return "null"  # an explicit null, unquoted (quoted, it is the text "null")
    if type_ == rf.STRING:
        return _quote(value)
    if type_ == rf.BOOLEAN:
        return "true" if value else "false"
    return repr(value)


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
    if '"' not in text:  # no quoted cell: the same cells, split at once
        return [(cell or None, False) for cell in text.split(",")]
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


def typed_cells(header: list[str], values: list[tuple[str | None, bool]], types: dict[str, str]) -> dict:
    """A row's cells by column, decoded by the column's declared type (`types`; a column it does not
    name is text): an absent cell left out, an unquoted `null` None. ValueError naming the column."""
    if len(values) != len(header):
        raise ValueError(f"{len(values)} cells, the header has {len(header)}")
    out = {}
    for name, (text, quoted) in zip(header, values, strict=True):
        if text is None and not quoted:
            continue
        out[name] = (
            None if (text == "null" and not quoted) else _value(types.get(name, rf.STRING), name, text)
        )
    return out


def table_rows(header: list[str], values: list[tuple[str | None, bool]], table: str) -> tuple[tuple, dict]:
    """A long table's row: ((process, rep, index), its item columns)."""
    cells = typed_cells(header, values, TABLES.get(table, {}))
    key = tuple(cells.pop(k, None) for k in TABLE_KEYS)
    if not all(isinstance(k, int) for k in key):
        raise ValueError("no integer process, rep and index")
    return key, cells


def rep_part(
    header: list[str], values: list[tuple[str | None, bool]], items: dict | None = None
) -> tuple[int, dict]:
    """A row's (process, REP fields), its arrays' items from `items` ((process, rep) -> table -> index ->
    columns, sbcore/stored_records.py gathers them): ValueError naming the column when a cell does not
    decode or an item is missing."""
    cells = typed_cells(header, values, COLUMN_TYPES)
    process = cells.get(PROCESS_KEY)
    if not isinstance(process, int):
        raise ValueError(f"{PROCESS_KEY}: not an integer")
    part = part_of(cells, (items or {}).get((process, cells.get("rep")), {}))
    extra = cells.get(EXTRA)
    if extra is not None:
        decoded = _json(extra, EXTRA)
        if not isinstance(decoded, dict):
            raise ValueError(f"{EXTRA}: not a JSON object")
        part |= decoded
    return process, part


def part_of(cells: dict, items: dict, fields=rf.REP_FIELDS) -> dict:
    """The REP fields (or `fields`) of a row from its typed cells (column -> value; an absent cell left
    out) and its items (table -> index -> columns): ValueError when an item is missing."""
    part: dict = {}
    for field in fields:
        value = _decode(field.shape, field.name, cells, items)
        if value is not _ABSENT:
            part[field.name] = value
    return part


def _value(type_: str, name: str, text: str):
    if type_ == rf.STRING:
        return text
    if type_ == rf.BOOLEAN:
        if text not in ("true", "false"):
            raise ValueError(f"{name}: {_short(text)!r} is not true or false")
        return text == "true"
    if type_ == rf.INTEGER:
        return _integer(text, name)
    if text.isdecimal() or (text[:1] == "-" and text[1:].isdecimal()):
        return int(text)  # what the try below gives, without its exception for every float
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{name}: {_short(text)!r} is not a number") from None


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
    return {k: v for k, v in facts.items() if k not in (PROCESS_KEY, "store", FLAT_KEY)} | part
