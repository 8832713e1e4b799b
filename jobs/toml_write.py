"""TOML for the resolved campaign.toml and the node-type blocks `discover` prints, written by tomli-w
(tomllib reads TOML but cannot write it): any Unicode in any string round-trips through tomllib
(tests/jobs/test_plan.py)."""

import tomli_w


def dumps(data: dict) -> str:
    """A TOML document of `data` (strings, numbers, booleans, arrays, tables, arrays of tables)."""
    return tomli_w.dumps(data)


def value(item) -> str:
    """The TOML literal of one value, for a line written around it (e.g. an experiment file in a test)."""
    return tomli_w.dumps({"v": item}).removeprefix("v = ").rstrip("\n")
