"""A small TOML writer for the resolved campaign.toml (tomllib reads TOML but cannot write it).

Covers what a resolved experiment holds: strings, integers, floats, booleans, arrays of those, tables and
arrays of tables. tests/jobs check that tomllib reads back exactly what was written.
"""

import json
import math
import re

BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if BARE_KEY.match(key) else json.dumps(key)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _is_table_array(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def dumps(data: dict, prefix: str = "") -> str:
    lines, nested = [], []
    for key, value in data.items():
        if isinstance(value, dict) or _is_table_array(value):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in nested:
        name = f"{prefix}.{_key(key)}" if prefix else _key(key)
        if isinstance(value, dict):
            lines += ["", f"[{name}]", dumps(value, name).rstrip("\n")]
        else:
            for item in value:
                lines += ["", f"[[{name}]]", dumps(item, name).rstrip("\n")]
    return "\n".join(line for line in lines if line is not None) + "\n"
