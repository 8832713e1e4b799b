"""A record's row of the records table, derived from the record as a dict: the reference every faster
path matches (analysis/records/stored_frame.py derives the same columns from the stored columns, calling
the group functions here once per distinct value where values repeat over a case's repetitions).

Columns: case_id, rep, the declared COLUMN fields as they are (COPIED), then the derived groups in
GROUPS' order (a process's params, build, counters, sampling and Slurm job; a repetition's warm-ups,
ranks' times, placement and pinning, clock, probe, scheduling scenario and result), then record_line
and record_file (ORDER). A group whose columns are named by the data (param_<key>,
ctr_<metric>_<stat>) or that only some records have (the ranks' times, result_json) is there only
when a record has it. Counter values per hardware thread are a long table of their own
(`hwthread_values`). Pure functions of the record; no file is read here.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import msgspec

from analysis.records.machine_state import probe_columns
from sbcore import record_fields as rf
from sbcore.variant_dimensions import VARIANT_PARAMS

# The declared fields copied as they are into a column of their own name, text first, then numbers.
_COPIED = [f for f in rf.FIELDS if f.read == rf.COLUMN]
COPIED = tuple(f.name for f in sorted(_COPIED, key=lambda f: f.type != rf.STRING))  # (a stable sort)
CTR_STATS = ("sum", "min", "max", "avg")


@lru_cache(maxsize=4096)
def metric_column(name: str) -> str:
    """'L2 miss ratio' -> 'l2_miss_ratio', 'Runtime (RDTSC) [s]' -> 'runtime_rdtsc_s'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _params(record: dict) -> dict:
    """params_json and a param_<key> column per key that is no variant dimension (a structured value as
    its canonical JSON text); the variant dimensions, the record's own, else its params'."""
    params = record["params"]
    row = {"params_json": canonical_json(params)}
    for key, value in params.items():
        if key not in VARIANT_PARAMS:
            row[f"param_{key}"] = value if isinstance(value, str | int | float) else canonical_json(value)
    row |= {key: record[key] if key in record else params.get(key) for key in VARIANT_PARAMS}
    row["threads"], row["ranks"] = record["threads"], record["ranks"]
    row["warmup"] = bool(record.get("warmup", False))
    row["case_index"] = record.get("case_index")
    return row


def _keys(field: str, *keys: str):
    """The group of an object field's keys: a column <field>_<key> per key (None where it has none)."""
    return lambda record: {f"{field}_{key}": _object(record.get(field)).get(key) for key in keys}


def _ranks(record: dict) -> dict:
    if not record.get("rank_wall_s"):
        return {}
    times = _numbers(record["rank_wall_s"])
    return {"rank_wall_min_s": min(times, default=None), "rank_wall_max_s": max(times, default=None)}


def _counted(record: dict) -> dict:
    """likwid's statistics of each counted metric: ctr_<metric>_<stat>."""
    metrics = _metrics(_object(record.get("counters")))
    return {f"ctr_{metric_column(n)}_{s}": _object(m).get(s) for n, m in metrics.items() for s in CTR_STATS}


# The derived columns' groups in the table's order, each of the fields a process holds once (PROCESS)
# or of a repetition's (REP, with its process's load).
GROUPS = (
    (_params, rf.PROCESS),
    (lambda r: {"n_warmup": _length(w := r.get("warmup_wall_s")), "warmup_last_s": _last(w)}, rf.REP),
    (_keys("build", "compiler", "flags"), rf.PROCESS),
    (_ranks, rf.REP),
    (lambda r: {"placement_cpus": placement_cpus(r.get("placement"))} | pin_columns(r.get("pin")), rf.REP),
    (_keys("counters", "status", "group", "reason"), rf.PROCESS),
    (_counted, rf.PROCESS),
    (lambda r: {"clock_max_ghz": clock_max_ghz(r.get("clock"), r.get("clock_ghz"))}, rf.REP),
    (lambda r: probe_columns(r.get("probe")), rf.REP),
    (_keys("sampling", "stop"), rf.PROCESS),
    (lambda r: scenario_columns(r.get("sched"), r.get("load")), rf.REP),
    (_keys("slurm", "job_id", "array_task_id"), rf.PROCESS),
    (lambda r: {} if r.get("result") is None else {"result_json": result_json(r["result"])}, rf.REP),
)


def row(record: dict) -> dict:
    """A record's whole row but its file and line: case_id, rep, the COPIED fields, then `derived`."""
    return {name: record.get(name) for name in ("case_id", "rep", *COPIED)} | derived(record)


def derived(record: dict, level: str | None = None) -> dict:
    """The columns of one record that are not copied as they are (no case_id, rep, COPIED fields, record
    file or line), in the table's order, the optional groups only where the record has them; with a
    level, only its groups' (PROCESS: a kernel process's facts in stored records; REP: a repetition's,
    with its process's `load`)."""
    return {k: v for group, at in GROUPS if level in (None, at) for k, v in group(record).items()}


def pin_columns(pin) -> dict:
    pin = _object(pin)
    cpus = pin.get("cpus")
    return {
        "pin_strategy": pin.get("strategy"),
        "pin_cpus": ",".join(map(str, cpus)) if isinstance(cpus, list) and cpus else None,
        "pin_violations": _length(pin.get("violations")),
    }


def hwthread_values(record: dict) -> tuple[list[tuple[str, int, float]], list[str]]:
    """([(metric, hardware thread, value)] of the counted metrics, why values were dropped): likwid's
    '-' and nan for what it could not measure are NaN; a value under a key that is no hardware thread's
    number is dropped alone, and named."""
    out, problems = [], []
    for name, metric in _metrics(_object(record.get("counters"))).items():
        values = _object(metric).get("per_hwthread")
        if values is None or values == {}:
            continue
        if not isinstance(values, dict):
            problems.append(f"per_hwthread values dropped ({name}: not an object)")
            continue
        for key, value in values.items():
            try:
                out.append((name, int(key), _number(value)))
            except (ValueError, TypeError) as err:
                problems.append(f"per_hwthread values dropped ({name}: {err})")
    return out, problems


def _metrics(counters: dict) -> dict:
    metrics = counters.get("metrics")
    return metrics if counters.get("status") == "ok" and isinstance(metrics, dict) else {}


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def placement_cpus(placement) -> int | None:
    """placement [[start_cpu, end_cpu], ...] -> how many distinct numbers it names."""
    try:
        return len({cpu for pair in placement for cpu in pair}) if placement else None
    except TypeError:  # not a list of pairs: no placement to count
        return None


def result_json(result) -> str:
    """A record's `result` (a kernel's own statistics, docs/formats.md) as compact JSON text, its keys in
    the record's order (a tool's `compares_with` names our kernel's parameters in its order)."""
    return msgspec.json.encode(result).decode()


def _object(value) -> dict:
    return value if isinstance(value, dict) else {}


def _length(value) -> int:
    """How many entries a list field has (a value of another kind: none)."""
    return len(value) if isinstance(value, list) else 0


def _numbers(value) -> list:
    """The numbers of a list field (anything else in it, or a value that is no list, is not a time)."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]


def _last(value) -> float | None:
    """The last number of a list field (the process's last warm-up before its first repetition)."""
    return next(reversed(_numbers(value)), None)


def clock_max_ghz(clock, mean_ghz):
    """The higher of the two clock readings around the compute region: an interruption (another
    process, the hypervisor) only lowers a reading, so the higher one is the core's clock; the record's
    clock_ghz (their mean) where the readings are missing."""
    clock = _object(clock)
    readings = [v for v in _numbers([clock.get("before_ghz"), clock.get("after_ghz")]) if v > 0]
    return max(readings, default=mean_ghz)


def wait_column(sched: dict) -> str | None:
    """How waiting workers waited, side by side for pthreads and OpenMP variants: the pthreads
    kernels' applied --wait-policy (spin, sleep; "(auto)" when auto chose it), OpenMP's
    OMP_WAIT_POLICY as set (active = spin, passive = sleep); None = the OpenMP runtime's default
    (libgomp: spin for a while, then sleep) or a record from before the field."""
    if sched.get("wait_applied"):
        return sched["wait_applied"] + (" (auto)" if sched.get("wait_policy") == "auto" else "")
    omp = sched.get("omp_wait_policy")
    if not omp:
        return None
    return {"active": "spin", "passive": "sleep"}.get(str(omp).lower(), f"OMP_WAIT_POLICY={omp}")


def scenario_columns(sched, load) -> dict:
    """The scheduling scenario (what was asked, what the OS applied) and the competing load's CPU share."""
    sched = _object(sched)
    asked = [
        f"{k}={sched[k]}" for k in ("nice", "worker_nice", "worker_policy", "omp_wait_policy") if sched.get(k)
    ]
    if sched.get("wait_policy") not in (None, "auto"):  # the pthreads kernels' default is no scenario
        asked.append(f"wait_policy={sched['wait_policy']}")
    applied: dict[str, int] = {}
    for entry in sched.get("applied") or []:
        try:
            policy, rtprio, nice = entry
        except (TypeError, ValueError):
            continue
        key = f"{policy}" + (f":{rtprio}" if rtprio else "") + f" nice {nice}"
        applied[key] = applied.get(key, 0) + 1
    load = _object(load)
    return {
        "sched_asked": " ".join(asked) or "-",
        "sched_applied": ", ".join(f"{k} x{n}" for k, n in applied.items()) or None,
        "wait": wait_column(sched),
        "load_name": _object(load.get("profile")).get("name"),
        "load_cpu_s": load.get("cpu_s"),
        # During the kernel's compute region where known, else over the load's whole run.
        "load_cpu_share": load.get("compute_cpu_share", load.get("cpu_share")),
    }


# A record that has every optional group, one param and one counted metric: its columns give the order.
_SAMPLE = {
    rf.STRING: "x",
    rf.INTEGER: 1,
    rf.NUMBER: 1.0,
    rf.BOOLEAN: False,
    rf.OBJECT: {"x": 0},
    rf.ARRAY: [0],
}
_EVERY_GROUP = {f.name: _SAMPLE[f.type] for f in rf.FIELDS}
_EVERY_GROUP["counters"] = {"status": "ok", "metrics": {"x": {}}}
_NAMED_BY_DATA = {"param_x": "param_*"} | {f"ctr_x_{stat}": "ctr_*" for stat in CTR_STATS}
ORDER = tuple(
    dict.fromkeys(
        ["case_id", "rep", *COPIED]
        + [_NAMED_BY_DATA.get(k, k) for k in derived(_EVERY_GROUP)]
        + ["record_line", "record_file"]
    )
)


def ordered(names) -> list[str]:
    """These column names (first seen first) in the table's order."""
    names = list(dict.fromkeys(names))
    fixed = set(ORDER)
    out = []
    for name in ORDER:
        if name.endswith("*"):
            out += [n for n in names if n.startswith(name[:-1]) and n not in fixed]
        elif name in names:
            out.append(name)
    return out + [n for n in names if n not in out]
