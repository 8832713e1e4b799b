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
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from analysis.disturbance import probe_columns
from analysis.record_decode import UNSET, Counters, Pin, Record, decode_one
from analysis.variants import VARIANT_PARAMS

_RAW_NUMERIC = (
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
)
_RAW_TEXT = ("campaign", "node_type", "hostname", "host", "kernel", "lang", "model", "checksum", "started")
_RAW_TEXT += ("inner_path", "uarch")  # which inner loop ran, on which core design (analysis/efficiency.py)


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


def flatten_records(records: list[Record]) -> tuple[dict[str, list], list[tuple]]:
    """(columns of the records table, [(record index, metric, hwthread ids, values)] per counted metric).

    Column by column over the decoded records; values repeating over a case's repetitions come from
    the caches above. No file column: the loader adds where each record is stored (record_line)."""
    n = len(records)
    # attrgetter over map: the attribute reads run in C (a third of a list comprehension's time).
    col: dict[str, list] = {key: list(map(attrgetter(key), records)) for key in ("case_id", "rep")}
    for key in _RAW_TEXT + _RAW_NUMERIC:
        col[key] = list(map(attrgetter(key), records))
    derived = [params_columns(bytes(raw)) for raw in map(attrgetter("params"), records)]
    col["params_json"] = [d[0] for d in derived]
    param_keys = list(dict.fromkeys(k for d in {id(d): d for d in derived}.values() for k in d[1]))
    for key in param_keys:
        col[key] = [d[1].get(key) for d in derived]
    for i, key in enumerate(VARIANT_PARAMS):
        col[key] = [
            d[2][i] if value is UNSET else value
            for d, value in zip(derived, (getattr(r, key) for r in records), strict=True)
        ]
    col["threads"] = list(map(attrgetter("threads"), records))
    col["ranks"] = list(map(attrgetter("ranks"), records))
    col["warmup"] = list(map(bool, map(attrgetter("warmup"), records)))
    col["case_index"] = list(map(attrgetter("case_index"), records))
    col["n_warmup"] = [len(r.warmup_wall_s or ()) for r in records]
    builds = [r.build if isinstance(r.build, dict) else {} for r in records]
    col["build_compiler"] = [b.get("compiler") for b in builds]
    col["build_flags"] = [b.get("flags") for b in builds]
    rank_wall = [r.rank_wall_s for r in records]
    if any(rank_wall):
        col["rank_wall_min_s"] = [min(w) if w else None for w in rank_wall]
        col["rank_wall_max_s"] = [max(w) if w else None for w in rank_wall]
    col["placement_cpus"] = [distinct_cpus(bytes(raw)) for raw in map(attrgetter("placement"), records)]
    pins = [r.pin or _NO_PIN for r in records]
    col["pin_strategy"] = [p.strategy for p in pins]
    col["pin_cpus"] = [cpu_list(bytes(p.cpus)) for p in pins]
    col["pin_violations"] = [len(p.violations or ()) for p in pins]
    counters = [r.counters or _NO_COUNTERS for r in records]
    col["counters_status"] = [c.status for c in counters]
    col["counters_group"] = [c.group for c in counters]
    col["counters_reason"] = [c.reason for c in counters]
    hw_rows, hw_metrics, hw_raws = [], [], []
    counted = [(i, c.metrics) for i, c in enumerate(counters) if c.status == "ok" and c.metrics]
    for i, metrics in counted:
        for name, metric in metrics.items():
            column = metric_column(name)
            for stat in ("sum", "min", "max", "avg"):
                key = f"ctr_{column}_{stat}"
                if key not in col:
                    col[key] = [None] * n
                col[key][i] = getattr(metric, stat)
            raw = bytes(metric.per_hwthread)
            if raw not in _NO_VALUES:  # exploded into one row per hwthread later (load.explode_counters)
                hw_rows.append(i)
                hw_metrics.append(name)
                hw_raws.append(raw)
    col["clock_max_ghz"] = [clock_max_ghz(r.clock, r.clock_ghz) for r in records]
    no_probe = probe_columns(None)  # most records of most campaigns: one shared row, not one each
    probes = [no_probe if r.probe is None else probe_columns(r.probe) for r in records]
    for key in dict.fromkeys(k for p in probes for k in p):
        col[key] = [p.get(key) for p in probes]
    col["sampling_stop"] = [
        (r.sampling or {}).get("stop") if isinstance(r.sampling, dict) else None for r in records
    ]
    no_scenario = scenario_columns(None, None)
    scenarios = [
        no_scenario if r.sched is None and r.load is None else scenario_columns(r.sched, r.load)
        for r in records
    ]
    for key in dict.fromkeys(k for s in scenarios for k in s):
        col[key] = [s.get(key) for s in scenarios]
    slurm = [r.slurm if isinstance(r.slurm, dict) else {} for r in records]
    col["slurm_job_id"] = [s.get("job_id") for s in slurm]
    col["slurm_array_task_id"] = [s.get("array_task_id") for s in slurm]
    return col, PerHwthread.parse(hw_rows, hw_metrics, hw_raws)


_NO_VALUES = (b"null", b"{}")
_TO_CSV = bytes.maketrans(b",:", b"\n,")  # '"0":1.5,"1":2.0' -> lines '0,1.5' and '1,2.0'
_CSV_READ = pacsv.ReadOptions(column_names=["hwthread", "value"])
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
    metric: list[str]
    lengths: np.ndarray
    hwthread: np.ndarray
    value: np.ndarray
    problems: list[tuple[int, str]] = field(default_factory=list)  # (row, why its values were dropped)

    @classmethod
    def parse(cls, rows: list[int], metrics: list[str], raws: list[bytes]) -> PerHwthread:
        """From the raw JSON objects {"<hwthread>": number, ...}: all of them in one pass in C (the
        punctuation rewritten into CSV lines 'hwthread,value', read by Arrow); objects that do not fit
        that shape (odd keys or values) are decoded one by one."""
        lengths = np.fromiter((raw.count(b":") for raw in raws), dtype=np.int64, count=len(raws))
        if not raws:
            return cls(np.zeros(0, np.int64), [], lengths, np.zeros(0, np.int32), np.zeros(0))
        text = b",".join(raws).translate(_TO_CSV, b'{}" \t\r\n')
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
    single record; the analysis itself decodes files in batches (analysis/load.py)."""
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


def scenario_columns(sched, load) -> dict:
    """The scheduling scenario (what was asked, what the OS applied) and the competing load's CPU share."""
    sched = sched if isinstance(sched, dict) else {}
    asked = [
        f"{k}={sched[k]}" for k in ("nice", "worker_nice", "worker_policy", "omp_wait_policy") if sched.get(k)
    ]
    applied: dict[str, int] = {}
    for policy, rtprio, nice in sched.get("applied") or []:
        key = f"{policy}" + (f":{rtprio}" if rtprio else "") + f" nice {nice}"
        applied[key] = applied.get(key, 0) + 1
    load = load if isinstance(load, dict) else {}
    return {
        "sched_asked": " ".join(asked) or "-",
        "sched_applied": ", ".join(f"{k} x{n}" for k, n in applied.items()) or None,
        "load_name": (load.get("profile") or {}).get("name"),
        "load_cpu_s": load.get("cpu_s"),
        # During the kernel's compute region where known, else over the load's whole run.
        "load_cpu_share": load.get("compute_cpu_share", load.get("cpu_share")),
    }
