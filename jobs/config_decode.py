"""Configuration tables decoded into their declared msgspec Structs, every problem one line
'<file>: <key> = <value>: <problem>' (or '<file>: <key>: missing: <problem>').

The Structs (jobs/config_types.py and the tables they hold) are the one declaration of what a file may
hold: types, bounds, patterns and allowed values. A field's own wording of a problem is declared beside
it, `Meta(extra={...})`, under the kind of problem: "type", "min" (a lower bound), "max", "length",
"pattern", "enum", "missing", or "problem" for every kind. Without one, the line says it plainly
("must be an integer", "must be >= 1", "must be one of a, b").
"""

import difflib
import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Literal, Union, get_args, get_origin

import msgspec
from msgspec import structs

from sbcore.errors import UsageError

PLAIN_KEY = re.compile(r"[A-Za-z0-9_.+-]+")
_AT = re.compile(
    r"^(?P<reason>.*?)(?: - at `(?P<key>key)` in `(?P<mpath>[^`]*)`| - at `(?P<path>[^`]*)`)?$", re.S
)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_BOUND = re.compile(r"^Expected `[^`]*` (?P<op>>=|>|<=|<) (?P<num>\S+)$")
_LENGTH = re.compile(r"^Expected `(?P<kind>[^`]*)` of length (?P<op>>=|<=) (?P<num>\d+)$")
_TYPE = re.compile(r"^Expected `(?P<expected>[^`]*)`, got `[^`]*`$")
PLAIN_TYPES = {
    "int": "must be an integer",
    "str": "must be a non-empty string",
    "bool": "must be true or false",
    "float": "must be a number",
    "int | float": "must be a number",
    "object": "must be a table",
    "array": "must be a list",
}


def show(value) -> str:
    """A value as it would look in TOML, shortened; tables are not spelled out."""
    if isinstance(value, dict | msgspec.Struct):
        return "{...}"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = "[" + ", ".join(show(v) for v in value) + "]" if isinstance(value, list) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def key_path(steps, where: str = "") -> str:
    """`where` and then keys and indices as one dotted key: a key that is not a plain name is quoted
    (so that the line stays one line)."""
    text = where
    for step in steps:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            name = step if PLAIN_KEY.fullmatch(step) else msgspec.json.encode(step).decode()
            text += f".{name}" if text else name
    return text


class Checker:
    """Problems with one file's values as one error line: '<file>: <key> = <value>: <problem>'."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, value, problem: str):
        raise UsageError(f"{self.path}: {key} = {show(value)}: {problem}")

    def missing(self, key: str, problem: str):
        raise UsageError(f"{self.path}: {key}: missing: {problem}")

    def unknown_key(self, key: str, value, allowed):
        """A key nothing reads: named, with the closest allowed one when there is one."""
        name = key.rpartition(".")[2]
        close = difflib.get_close_matches(name, sorted(allowed), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        self.fail(key, value, f"unknown key ({hint}allowed: {', '.join(sorted(allowed))})")

    def keys(self, table: dict, allowed, where: str):
        for key in table:
            if key not in allowed:
                self.unknown_key(f"{where}.{key}" if where else key, table[key], allowed)

    def decode(self, data, struct_type, where: str = ""):
        """`data` (a table or value as tomllib read it, found at key `where`) as `struct_type` (a Struct or
        any type msgspec decodes), or the first problem as one line."""
        data = _axes_as_lists(data, struct_type)
        try:
            return msgspec.convert(data, struct_type)
        except msgspec.ValidationError as err:
            try:
                self._explain(str(err), data, struct_type, where)
            except (LookupError, StopIteration, TypeError, AttributeError):  # a path not followed: as is
                raise UsageError(f"{self.path}: {where + ': ' if where else ''}{err}") from None

    def _explain(self, message: str, data, struct_type, where: str):
        """Raise msgspec's error `message` as one line naming the key path and the value there."""
        found = _AT.match(message)
        reason = found["reason"]
        at_key = found["key"] is not None
        value, kind, steps = _walk(
            data, struct_type, _steps(found["mpath"] if at_key else found["path"] or "$")
        )
        if at_key:  # one of a table's keys is wrong: find which
            key_type = get_args(_member(kind, dict))[0]
            key = next(k for k in value if _fails(k, key_type))
            kind, value, steps = key_type, value[key], [*steps, key]
        field = re.fullmatch(r"Object (contains unknown|missing required) field `(.*)`", reason)
        if field and field[1] == "contains unknown":
            allowed = [f.encode_name for f in structs.fields(_member(kind, msgspec.Struct))]
            self.unknown_key(key_path([*steps, field[2]], where), value[field[2]], allowed)
        if field:
            fields = structs.fields(_member(kind, msgspec.Struct))
            extras = _extras(next(f.type for f in fields if f.encode_name == field[2]))
            self.missing(key_path([*steps, field[2]], where), extras.get("missing", "required"))
        self.fail(key_path(steps, where), value, _problem(reason, kind))


def _axes_as_lists(data, kind):
    """`data` with a plain value of every axis (a field declared with extra "axis") made a list of one."""
    if _extras(kind).get("axis") and not isinstance(data, list):
        return [data]
    for k in _flat(kind):
        if isinstance(k, type) and issubclass(k, msgspec.Struct) and isinstance(data, dict):
            types = {f.encode_name: f.type for f in structs.fields(k)}
            return {key: _axes_as_lists(v, types[key]) if key in types else v for key, v in data.items()}
        if get_origin(k) is list and isinstance(data, list):
            return [_axes_as_lists(v, get_args(k)[0]) for v in data]
        if get_origin(k) is dict and isinstance(data, dict):
            return {key: _axes_as_lists(v, get_args(k)[1]) for key, v in data.items()}
    return data


def _steps(path: str) -> list:
    return [int(i) if i.isdigit() else name or i for name, i in _STEP.findall(path[1:])]


def _walk(data, kind, steps):
    """The value and declared type at a ValidationError's path, and the path's keys: '[...]' (a table's
    value, which msgspec does not name) becomes the first key whose value does not decode."""
    named = []
    for step in steps:
        if step == "...":
            value_type = get_args(_member(kind, dict))[1]
            step = next(k for k, v in data.items() if _fails(v, value_type))
            kind = value_type
        elif isinstance(step, str):
            struct = _member(kind, msgspec.Struct)
            kind = next(f.type for f in structs.fields(struct) if f.encode_name == step)
        else:
            kind = get_args(_member(kind, list))[0]
        data = data[step]
        named.append(step)
    return data, kind, named


def _fails(value, kind) -> bool:
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return True
    return False


def _flat(kind) -> list:
    """A declared type's alternatives, each Annotated wrapper kept (for its extras) and unwrapped."""
    if get_origin(kind) is Annotated:
        return [kind, *_flat(get_args(kind)[0])]
    if get_origin(kind) in (Union, UnionType):
        return [k for t in get_args(kind) for k in _flat(t)]
    return [kind]


def _member(kind, wanted):
    """The alternative of a declared type that is a `wanted` (a Struct, list or dict)."""
    for k in _flat(kind):
        if get_origin(k) is wanted or (isinstance(k, type) and issubclass(k, wanted)):
            return k
    raise LookupError(f"no {wanted} in {kind}")


def _extras(kind) -> dict:
    merged = {}
    for k in _flat(kind):
        if get_origin(k) is Annotated:
            for meta in get_args(k)[1:]:
                merged |= getattr(meta, "extra", None) or {}
    return merged


def _problem(reason: str, kind) -> str:
    """msgspec's reason in the field's own words, or plainly."""
    extras = _extras(kind)
    if (bound := _BOUND.match(reason)) is not None:
        number = float(bound["num"])
        shown = f"{int(number)}" if number.is_integer() else bound["num"]
        which = "min" if bound["op"].startswith(">") else "max"
        return extras.get(which) or extras.get("problem") or f"must be {bound['op']} {shown}"
    if (length := _LENGTH.match(reason)) is not None:
        plain = (
            "must not be empty" if length["num"] == "1" else f"length must be {length['op']} {length['num']}"
        )
        return extras.get("length") or extras.get("problem") or plain
    if reason.startswith("Expected `str` matching regex"):
        return extras.get("pattern") or extras.get("problem") or "has the wrong form"
    if reason.startswith("Invalid enum value"):
        values = [v for k in _flat(kind) if get_origin(k) is Literal for v in get_args(k)]
        return extras.get("enum") or extras.get("problem") or f"must be one of {', '.join(map(str, values))}"
    if (wrong := _TYPE.match(reason)) is not None:
        expected = wrong["expected"].removesuffix(" | null")
        return extras.get("type") or extras.get("problem") or PLAIN_TYPES.get(expected, f"must be {expected}")
    return extras.get("problem") or reason
