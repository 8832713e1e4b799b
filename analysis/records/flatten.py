"""Decoded raw records -> the columns of the tidy records table (one row per record), plus their
per-hwthread counters.

Counter metrics become four columns per metric in the row (`ctr_<metric>_sum|min|max|avg`); the values
per hardware thread go to a separate long table (one row per record x metric x hwthread), because a
wide column per hardware thread would be mostly empty on a 512-CPU node.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from msgspec.structs import astuple

from analysis.records.decode import UNSET, Counters, Pin, Record, decode_one
from analysis.records.fields import RAW_NUMERIC, RAW_TEXT
from analysis.records.joined_parts import count_per_part
from analysis.records.machine_state import NO_PROBE, machine_state_columns, probe_columns
from analysis.records.typed_columns import distinct, spread
from analysis.variants import VARIANT_PARAMS


@lru_cache(maxsize=4096)
def metric_column(name: str) -> str:
    """'L2 miss ratio' -> 'l2_miss_ratio', 'Runtime (RDTSC) [s]' -> 'runtime_rdtsc_s'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class NotAnObject(ValueError):
    """A field the schema requires to be a JSON object is something else."""


@lru_cache(maxsize=65536)
def params_columns(raw: bytes) -> tuple[str, dict, tuple]:
    """(params_json, {param_<key>: value}, (schedule, sync, inner) from params) of one raw params
    object. Cached: every repetition of a case has the same params."""
    params = msgspec.json.decode(raw)
    if not isinstance(params, dict):
        raise NotAnObject("schema: params: not an object")
    columns = {
        f"param_{key}": value if isinstance(value, str | int | float) else canonical_json(value)
        for key, value in params.items()
        if key not in VARIANT_PARAMS
    }
    return canonical_json(params), columns, tuple(params.get(key) for key in VARIANT_PARAMS)


@lru_cache(maxsize=65536)
def distinct_cpus(raw: bytes) -> int | None:
    """placement [[worker, cpu], ...] -> how many distinct numbers it names (as before: any entry)."""
    placement = msgspec.json.decode(raw)
    try:
        return len({cpu for pair in placement for cpu in pair}) if placement else None
    except TypeError:  # not a list of pairs: no placement to count
        return None


@lru_cache(maxsize=65536)
def cpu_list(raw: bytes) -> str | None:
    cpus = msgspec.json.decode(raw)
    return ",".join(map(str, cpus)) if isinstance(cpus, list) and cpus else None


def flatten_records(records: list[Record]) -> tuple[dict[str, Sequence], PerHwthread]:
    """(columns of the records table, the per-hwthread counter values of the counted metrics).

    Column by column over the decoded records: the records are transposed into one tuple per field in C
    (msgspec's astuple, zip); values repeating over a case's repetitions (params, placement, pinned
    CPUs) are derived once per distinct value and spread with numpy; dict-valued fields that no record
    has (probe, scheduling, load, ...) give their empty columns without a pass over the records. No file
    column: the loader adds where each record is stored (record_line)."""
    n = len(records)
    by_field = zip(*map(astuple, records), strict=True) if n else [()] * len(_FIELDS)
    fields = dict(zip(_FIELDS, by_field, strict=True))
    col: dict[str, Sequence] = {key: fields[key] for key in ("case_id", "rep", *RAW_TEXT, *RAW_NUMERIC)}
    params, derived = distinct(map(bytes, fields["params"]), params_columns)
    col["params_json"] = spread(params, [d[0] for d in derived])
    for key in dict.fromkeys(k for d in derived for k in d[1]):
        col[key] = spread(params, [d[1].get(key) for d in derived])
    for i, key in enumerate(VARIANT_PARAMS):  # the record's own field, else what its params say
        own = fields[key]
        unset = own.count(UNSET)
        if unset == 0:
            col[key] = own
            continue
        from_params = spread(params, [d[2][i] for d in derived])
        col[key] = (
            from_params
            if unset == n
            else [p if v is UNSET else v for p, v in zip(from_params, own, strict=True)]
        )
    col["threads"] = fields["threads"]
    col["ranks"] = fields["ranks"]
    col["warmup"] = list(map(bool, fields["warmup"]))
    col["case_index"] = fields["case_index"]
    col["n_warmup"] = list(map(_list_length, fields["warmup_wall_s"]))
    builds = [b if isinstance(b, dict) else _EMPTY for b in fields["build"]]
    col["build_compiler"] = [b.get("compiler") for b in builds]
    col["build_flags"] = [b.get("flags") for b in builds]
    rank_wall = fields["rank_wall_s"]
    if any(rank_wall):
        times = list(map(_numbers, rank_wall))
        col["rank_wall_min_s"] = [min(t) if t else None for t in times]
        col["rank_wall_max_s"] = [max(t) if t else None for t in times]
    placements, cpus_of = distinct(map(bytes, fields["placement"]), distinct_cpus)
    col["placement_cpus"] = spread(placements, cpus_of)
    pins = [p or _NO_PIN for p in fields["pin"]]
    col["pin_strategy"] = [p.strategy for p in pins]
    pinned, pinned_lists = distinct(map(bytes, map(attrgetter("cpus"), pins)), cpu_list)
    col["pin_cpus"] = spread(pinned, pinned_lists)
    col["pin_violations"] = [_list_length(p.violations) for p in pins]
    counters = [c or _NO_COUNTERS for c in fields["counters"]]
    col["counters_status"] = [c.status for c in counters]
    col["counters_group"] = [c.group for c in counters]
    col["counters_reason"] = [c.reason for c in counters]
    counted = [(i, c.metrics) for i, c in enumerate(counters) if c.status == "ok" and c.metrics]
    pairs = [(i, name, metric) for i, metrics in counted for name, metric in metrics.items()]
    rows, names, metrics = zip(*pairs, strict=True) if pairs else ((), (), ())
    sums, mins, maxs, avgs, raws = zip(*map(astuple, metrics), strict=True) if pairs else ((),) * 5
    rows = np.asarray(rows, dtype=np.intp)
    columns = np.asarray([metric_column(name) for name in names], dtype=object)
    stats = {"sum": sums, "min": mins, "max": maxs, "avg": avgs}
    for stat, values in stats.items():
        stats[stat] = np.empty(len(values), dtype=object)
        stats[stat][:] = values
    for column in dict.fromkeys(columns):  # first seen first, as the records list them
        mine = np.flatnonzero(columns == column)
        for stat, values in stats.items():
            cells = np.full(n, None, dtype=object)
            cells[rows[mine]] = values[mine]  # two names of one column in a record: the later one, as before
            col[f"ctr_{column}_{stat}"] = cells
    # per-hwthread values: exploded into one row per hwthread later (load.explode_counters)
    valued = [k for k, raw in enumerate(map(bytes, raws)) if raw not in _NO_VALUES]
    hw_rows = [int(rows[k]) for k in valued]
    hw_metrics = [names[k] for k in valued]
    hw_raws = [bytes(raws[k]) for k in valued]
    if fields["clock"].count(None) == n:
        col["clock_max_ghz"] = fields["clock_ghz"]
    else:
        col["clock_max_ghz"] = list(map(clock_max_ghz, fields["clock"], fields["clock_ghz"]))
    probes = list(map(bytes, fields["probe"]))
    if probes.count(NO_PROBE) == n:  # campaigns of older runners: the empty columns, no pass per record
        col.update({key: [value] * n for key, value in probe_columns(None).items()})
    else:
        col.update(machine_state_columns(probes))
    col["sampling_stop"] = [s.get("stop") if isinstance(s, dict) else None for s in fields["sampling"]]
    col.update(_scenarios(list(map(bytes, fields["sched"])), fields["load"]))
    slurm = [s if isinstance(s, dict) else _EMPTY for s in fields["slurm"]]
    col["slurm_job_id"] = [s.get("job_id") for s in slurm]
    col["slurm_array_task_id"] = [s.get("array_task_id") for s in slurm]
    results = list(map(bytes, fields["result"]))
    if results.count(NULL_TEXT) < n:  # (only microbenchmarks and tools write a result)
        which, texts = distinct(results, result_json)
        col["result_json"] = spread(which, texts)
    return col, PerHwthread.parse(hw_rows, hw_metrics, hw_raws)


NULL_TEXT = b"null"


def result_json(raw: bytes) -> str | None:
    """A record's `result` (a kernel's own statistics: docs/formats.md) as compact JSON text, its keys
    in the record's order (a tool's `compares_with` names our kernel's parameters in its order); None
    without one."""
    return None if raw == NULL_TEXT else msgspec.json.encode(msgspec.json.decode(raw)).decode()


def _list_length(value) -> int:
    """How many entries a list field has (a value of another kind: none)."""
    return len(value) if isinstance(value, list) else 0


def _numbers(value) -> list:
    """The numbers of a list field (anything else in it, or a value that is no list, is not a time)."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]


def _scenarios(scheds: list[bytes], loads: Sequence) -> dict[str, Sequence]:
    """scenario_columns of every record: per distinct scheduling scenario (it repeats over a case's
    repetitions; its `applied` has one entry per worker) unless a competing load makes rows differ."""
    n = len(scheds)
    if not any(load is not None for load in loads):
        which, rows = distinct(scheds, lambda raw: scenario_columns(msgspec.json.decode(raw), None))
        return {key: spread(which, [row[key] for row in rows]) for key in scenario_columns(None, None)}
    decoded = {raw: msgspec.json.decode(raw) for raw in dict.fromkeys(scheds)}
    rows = [scenario_columns(decoded[raw], load) for raw, load in zip(scheds, loads, strict=True)]
    return {key: [row[key] for row in rows] for key in scenario_columns(None, None)} if n else {}


_FIELDS = Record.__struct_fields__
_EMPTY: dict = {}


_NO_VALUES = (b"null", b"{}")
_TO_CSV = bytes.maketrans(b",:", b"\n,")  # '"0":1.5,"1":2.0' -> lines '0,1.5' and '1,2.0'
_CSV_READ = pacsv.ReadOptions(column_names=["hwthread", "value"], use_threads=False)  # a process per CPU
_CSV_CONVERT = pacsv.ConvertOptions(
    column_types={"hwthread": pa.int32(), "value": pa.float64()},
    null_values=["-", "nan", "NaN", "-nan", "null"],
    strings_can_be_null=True,
)


@dataclass
class PerHwthread:
    """Per-hardware-thread counter values of many (record, metric) pairs, flat: entry e (record row[e],
    metric metric[e]) has lengths[e] values, in order in hwthread and value."""

    row: np.ndarray
    metric: Sequence[str]  # the metric names (a list)
    lengths: np.ndarray
    hwthread: np.ndarray
    value: np.ndarray
    problems: list[tuple[int, str]] = field(default_factory=list)  # (row, why its values were dropped)

    @classmethod
    def parse(cls, rows: list[int], metrics: list[str], raws: list[bytes]) -> PerHwthread:
        """From the raw JSON objects {"<hwthread>": number, ...}: all of them in one pass in C (the
        punctuation rewritten into CSV lines 'hwthread,value', read by Arrow); objects that do not fit
        that shape (odd keys or values) are decoded one by one."""
        if not raws:
            return cls(np.zeros(0, np.int64), [], np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0))
        joined = b",".join(raws)
        lengths = count_per_part(joined, raws, b":")  # one ':' per value
        text = joined.translate(_TO_CSV, b'{}" \t\r\n')
        try:
            table = pacsv.read_csv(io.BytesIO(text), read_options=_CSV_READ, convert_options=_CSV_CONVERT)
        except pa.ArrowInvalid:
            table = None
        if table is not None and table.num_rows == lengths.sum() and table.column(0).null_count == 0:
            ids = table.column(0).to_numpy()
            values = table.column(1).to_numpy(zero_copy_only=False)  # unmeasured ('-', nan): NaN
            return cls(np.asarray(rows, np.int64), metrics, lengths, ids, values)
        return cls._one_by_one(rows, metrics, raws)

    @classmethod
    def _one_by_one(cls, rows, metrics, raws) -> PerHwthread:
        ids, values, lengths, problems = [], [], [], []
        for row, raw in zip(rows, raws, strict=True):
            try:
                parsed = msgspec.json.decode(raw)
                if not isinstance(parsed, dict):
                    raise ValueError("not an object")
                pairs = [(int(k), _number(v)) for k, v in parsed.items()]
            except (msgspec.DecodeError, ValueError, TypeError) as err:
                problems.append((row, f"per_hwthread values dropped ({err})"))
                pairs = []
            ids += [k for k, _ in pairs]
            values += [v for _, v in pairs]
            lengths.append(len(pairs))
        return cls(
            np.asarray(rows, np.int64),
            metrics,
            np.asarray(lengths, np.int64),
            np.asarray(ids, np.int32),
            np.asarray(values, float),
            problems,
        )


def _number(value) -> float:
    """A counter value: a number, or NaN for what likwid could not measure ('-', 'nan', null)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


_NO_PIN = Pin()
_NO_COUNTERS = Counters()


def flatten_record(record: dict, relpath: str = "") -> tuple[dict, list[tuple]]:
    """One record held as a dict -> (its row, its per-hwthread counters): for tools and tests that hold a
    single record; the analysis itself decodes files in batches (analysis/records/load.py)."""
    decoded, problem = decode_one(msgspec.json.encode(record))
    if decoded is None:
        raise ValueError(f"{relpath or 'record'}: {problem}")
    col, per_hwthread = flatten_records([decoded])
    return {key: values[0] for key, values in col.items()}, per_hwthread


def clock_max_ghz(clock, mean_ghz):
    """The higher of the two clock readings around the compute region: an interruption (another
    process, the hypervisor) only lowers a reading, so the higher one is the core's clock; the record's
    clock_ghz (their mean) where the readings are missing."""
    if isinstance(clock, dict):
        readings = [
            v
            for v in (clock.get("before_ghz"), clock.get("after_ghz"))
            if isinstance(v, int | float) and v > 0
        ]
        if readings:
            return max(readings)
    return mean_ghz


def wait_column(sched: dict) -> str | None:
    """How waiting workers waited, side by side for pthreads and OpenMP variants: the pthreads
    kernels' applied --wait-policy (spin, sleep; "(auto)" when auto chose it), OpenMP's
    OMP_WAIT_POLICY as set (active = spin, passive = sleep); None = the OpenMP runtime's default
    (libgomp: spin for a while, then sleep) or a record from before the field."""
    if sched.get("wait_applied"):
        return sched["wait_applied"] + (" (auto)" if sched.get("wait_policy") == "auto" else "")
    omp = sched.get("omp_wait_policy")
    return (
        {"active": "spin", "passive": "sleep"}.get(str(omp).lower(), f"OMP_WAIT_POLICY={omp}")
        if omp
        else None
    )


def scenario_columns(sched, load) -> dict:
    """The scheduling scenario (what was asked, what the OS applied) and the competing load's CPU share."""
    sched = sched if isinstance(sched, dict) else {}
    asked = [
        f"{k}={sched[k]}" for k in ("nice", "worker_nice", "worker_policy", "omp_wait_policy") if sched.get(k)
    ]
    if sched.get("wait_policy") not in (None, "auto"):  # the pthreads kernels' default is no scenario
        asked.append(f"wait_policy={sched['wait_policy']}")
    applied: dict[str, int] = {}
    for policy, rtprio, nice in sched.get("applied") or []:
        key = f"{policy}" + (f":{rtprio}" if rtprio else "") + f" nice {nice}"
        applied[key] = applied.get(key, 0) + 1
    load = load if isinstance(load, dict) else {}
    return {
        "sched_asked": " ".join(asked) or "-",
        "sched_applied": ", ".join(f"{k} x{n}" for k, n in applied.items()) or None,
        "wait": wait_column(sched),
        "load_name": (load.get("profile") or {}).get("name"),
        "load_cpu_s": load.get("cpu_s"),
        # During the kernel's compute region where known, else over the load's whole run.
        "load_cpu_share": load.get("compute_cpu_share", load.get("cpu_share")),
    }
