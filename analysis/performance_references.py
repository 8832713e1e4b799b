"""Performance-reference files: expected median times per node type and case, each with a tolerance
band, for `scalebench check --references FILE` (written by `check --write-references FILE`).

Not the published figures of config/reference/ (those are a study's numbers a reproduction is set
beside); these are this site's own expectations, kept where the user chooses (e.g.
config/performance-references/<cluster>.toml). The format (docs/performance-gate.md):

    format = "scalebench-performance-references"
    version = 1
    written_from = "smoke-20261126T101500Z"      # optional: the campaign it was made from

    [[case]]
    node_type = "skylake"                        # the case key: where it runs ...
    binary = "mcpi-c-omp"                        # ... and what runs (as `compare` matches cases)
    threads = 4
    ranks = 1
    pin = "compact"
    counter_group = ""                           # "" or omitted: no counters
    params = { samples = 1000000, seed = 1, schedule = "static", sync = "none", inner = "scalar" }
    median_s = 0.2841                            # the expected median time [s], or instead
                                                 # speedup = 3.6 (against the analysis's baseline)
    lower = 0.10                                 # tolerated: 10 % faster ...
    upper = 0.10                                 # ... and 10 % slower than expected
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pandas as pd
import tomli_w

from analysis.records.derive import canonical_json
from analysis.stats.verdicts import Band
from sbcore.atomic import write_atomic
from sbcore.errors import UsageError

FORMAT = "scalebench-performance-references"
VERSION = 1
KEY = ["node_type", "binary", "threads", "ranks", "pin", "counter_group", "params_json"]
METRICS = ("median_s", "speedup")  # what an entry expects: one of them
COLUMNS = [*KEY, "metric", "expected", "lower", "upper"]
DEFAULT_TOLERANCE = 0.10
_TYPES = {
    "node_type": str,
    "binary": str,
    "threads": int,
    "ranks": int,
    "pin": str,
    "counter_group": str,
    "params": dict,
    "median_s": float,
    "speedup": float,
    "lower": float,
    "upper": float,
}
_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", dict: "a table"}
_OPTIONAL = {"counter_group": "", "ranks": 1, "pin": ""}


def read_references(path: Path) -> pd.DataFrame:
    """The reference file as a table of COLUMNS; a bad file, entry, key or value is a UsageError naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such reference file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"{path}: not a readable TOML file: {err}") from None
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise UsageError(
            f"{path}: format = {data.get('format')!r}, version = {data.get('version')!r}: expected "
            f"format = {FORMAT!r}, version = {VERSION} (docs/performance-gate.md)"
        )
    entries = data.get("case")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: no [[case]] entries")
    return pd.DataFrame([_entry(path, i, e) for i, e in enumerate(entries, 1)], columns=COLUMNS)


def _entry(path: Path, number: int, entry: dict) -> dict:
    where = f"{path}: [[case]] number {number}"
    unknown = sorted(set(entry) - set(_TYPES))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(_TYPES)})")
    row = {}
    given = [m for m in METRICS if m in entry]
    if len(given) != 1:
        raise UsageError(f"{where}: expected exactly one of median_s and speedup, found {len(given)}")
    metric = given[0]
    for key, kind in _TYPES.items():
        if key in METRICS and key != metric:
            continue
        value = entry.get(key, _OPTIONAL.get(key))
        if value is None:
            raise UsageError(f"{where}: {key} is missing")
        ok = isinstance(value, int | float) and not isinstance(value, bool) if kind is float else None
        if not (ok if ok is not None else isinstance(value, kind) and not isinstance(value, bool)):
            raise UsageError(f"{where}: {key} = {value!r}: expected {_KIND_NAMES[kind]}")
        row[key] = float(value) if kind is float else value
    row["metric"], row["expected"] = metric, row.pop(metric)
    if not (row["expected"] > 0 and math.isfinite(row["expected"])):
        raise UsageError(f"{where}: {metric} = {row['expected']!r}: expected a finite value > 0")
    try:
        Band.around_one(row["lower"], row["upper"])
    except ValueError:
        raise UsageError(
            f"{where}: lower = {row['lower']!r}, upper = {row['upper']!r}: expected fractions, "
            "0 <= lower < 1, upper >= 0 (0.1 = 10 %)"
        ) from None
    row["params_json"] = canonical_json(row.pop("params"))
    return row


def key_frame(cases: pd.DataFrame) -> pd.DataFrame:
    """The case key columns of a case table, as strings the reference file's read back as."""
    out = cases[KEY].copy()
    out["params_json"] = [canonical_json(_json_to_toml(p)) for p in out["params_json"]]
    for column in ("pin", "counter_group"):
        out[column] = out[column].astype(object).where(out[column].notna(), "").astype(str)
    return out


def write_references(
    path: Path, cases: pd.DataFrame, source: str, lower: float, upper: float, metric: str = "median_s"
) -> int:
    """Writes the reference file of `cases` (a case table with the `metric` column); returns the entries
    written (cases without a value of it are left out).
    An existing file is never overwritten (a reference is a measurement)."""
    path = Path(path)
    if path.exists():
        raise UsageError(
            f"--write-references {path}: exists; references are not overwritten (choose a new file)"
        )
    keys = key_frame(cases)
    entries = []
    for (_, key), value in zip(keys.iterrows(), cases[metric], strict=True):
        if pd.isna(value):  # no value (a case without a baseline has no speedup)
            continue
        entry = {
            "node_type": key["node_type"],
            "binary": key["binary"],
            "threads": int(key["threads"]),
            "ranks": int(key["ranks"]),
            "pin": key["pin"],
            "counter_group": key["counter_group"],
            "params": _json_to_toml(key["params_json"]),
            metric: float(f"{value:.6g}"),
            "lower": round(lower, 6),
            "upper": round(upper, 6),
        }
        entries.append(entry)
    doc = {"format": FORMAT, "version": VERSION, "written_from": source, "case": entries}
    header = "# scalebench performance references (docs/performance-gate.md); edit the values and bands\n"
    write_atomic(path, header + tomli_w.dumps(doc), make_parents=True)
    return len(entries)


def _json_to_toml(params_json: str) -> dict:
    """The params without null values (TOML has none: a reference file cannot hold them)."""
    return {k: v for k, v in json.loads(params_json).items() if v is not None}
