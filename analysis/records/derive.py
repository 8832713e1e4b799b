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
from sbcore import record_fields
from sbcore.variant_dimensions import VARIANT_PARAMS

# The declared fields copied as they are into a column of their own name, text first, then numbers.
_COPIED = [f for f in record_fields.FIELDS if f.read == record_fields.COLUMN]
COPIED = tuple(f.name for f in _COPIED if f.type == record_fields.STRING) + tuple(
    f.name for f in _COPIED if f.type != record_fields.STRING
)
CTR_STATS = ("sum", "min", "max", "avg")


@lru_cache(maxsize=4096)
def metric_column(name: str) -> str:
    """'L2 miss ratio' -> 'l2_miss_ratio', 'Runtime (RDTSC) [s]' -> 'runtime_rdtsc_s'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def params_columns(params: dict) -> dict:
    """params_json and a param_<key> column per key that is no variant dimension (a structured value as
    its canonical JSON text)."""
    out = {"params_json": canonical_json(params)}
    for key, value in params.items():
        if key not in VARIANT_PARAMS:
            out[f"param_{key}"] = value if isinstance(value, str | int | float) else canonical_json(value)
    return out


def _params(record: dict) -> dict:
    row = params_columns(record["params"])
    for key in VARIANT_PARAMS:  # the record's own, else its params'
        row[key] = record[key] if key in record else record["params"].get(key)
    row["threads"], row["ranks"] = record["threads"], record["ranks"]
    row["warmup"] = bool(record.get("warmup", False))
    row["case_index"] = record.get("case_index")
    return row


def _warmups(record: dict) -> dict:
    return {"n_warmup": _length(record.get("warmup_wall_s"))}


def _build(record: dict) -> dict:
    build = _object(record.get("build"))
    return {"build_compiler": build.get("compiler"), "build_flags": build.get("flags")}


def _ranks(record: dict) -> dict:
    if not record.get("rank_wall_s"):
        return {}
    times = _numbers(record["rank_wall_s"])
    return {
        "rank_wall_min_s": min(times) if times else None,
        "rank_wall_max_s": max(times) if times else None,
    }


def _placement(record: dict) -> dict:
    return {"placement_cpus": placement_cpus(record.get("placement"))} | pin_columns(record.get("pin"))


def _counters(record: dict) -> dict:
    counters = _object(record.get("counters"))
    row = {f"counters_{key}": counters.get(key) for key in ("status", "group", "reason")}
    for name, metric in _metrics(counters).items():
        for stat in CTR_STATS:
            row[f"ctr_{metric_column(name)}_{stat}"] = _object(metric).get(stat)
    return row


def _clock(record: dict) -> dict:
    return {"clock_max_ghz": clock_max_ghz(record.get("clock"), record.get("clock_ghz"))}


def _probe(record: dict) -> dict:
    return probe_columns(record.get("probe"))


def _sampling(record: dict) -> dict:
    return {"sampling_stop": _object(record.get("sampling")).get("stop")}


def _scenario(record: dict) -> dict:
    return scenario_columns(record.get("sched"), record.get("load"))


def _slurm(record: dict) -> dict:
    slurm = _object(record.get("slurm"))
    return {"slurm_job_id": slurm.get("job_id"), "slurm_array_task_id": slurm.get("array_task_id")}


def _result(record: dict) -> dict:
    return {} if record.get("result") is None else {"result_json": result_json(record["result"])}


# The derived columns' groups in the table's order, each of the fields a process holds once (PROCESS)
# or of a repetition's (REP, with its process's load).
GROUPS = (
    (_params, record_fields.PROCESS),
    (_warmups, record_fields.REP),
    (_build, record_fields.PROCESS),
    (_ranks, record_fields.REP),
    (_placement, record_fields.REP),
    (_counters, record_fields.PROCESS),
    (_clock, record_fields.REP),
    (_probe, record_fields.REP),
    (_sampling, record_fields.PROCESS),
    (_scenario, record_fields.REP),
    (_slurm, record_fields.PROCESS),
    (_result, record_fields.REP),
)


def row(record: dict) -> dict:
    """A record's whole row but its file and line: case_id, rep, the COPIED fields, then `derived`."""
    return (
        {"case_id": record.get("case_id"), "rep": record.get("rep")}
        | {name: record.get(name) for name in COPIED}
        | derived(record)
    )


def derived(record: dict) -> dict:
    """The columns of one record that are not copied as they are (no case_id, rep, COPIED fields, record
    file or line), in the table's order, the optional groups only where the record has them."""
    return {k: v for group, _ in GROUPS for k, v in group(record).items()}


def process_columns(record: dict) -> dict:
    """The derived columns of the fields a kernel process holds once (its facts in stored records)."""
    return {
        k: v for group, level in GROUPS if level == record_fields.PROCESS for k, v in group(record).items()
    }


def rep_columns(record: dict) -> dict:
    """The derived columns of the fields a repetition holds (with its process's `load`)."""
    return {k: v for group, level in GROUPS if level == record_fields.REP for k, v in group(record).items()}


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
    '-' and nan for what it could not measure are NaN."""
    out, problems = [], []
    for name, metric in _metrics(_object(record.get("counters"))).items():
        values = _object(metric).get("per_hwthread")
        if values is None or values == {}:
            continue
        try:
            if not isinstance(values, dict):
                raise ValueError("not an object")
            out.extend((name, int(k), _number(v)) for k, v in values.items())
        except (ValueError, TypeError) as err:
            problems.append(f"per_hwthread values dropped ({err})")
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


def clock_max_ghz(clock, mean_ghz):
    """The higher of the two clock readings around the compute region: an interruption (another
    process, the hypervisor) only lowers a reading, so the higher one is the core's clock; the record's
    clock_ghz (their mean) where the readings are missing."""
    readings = [
        v
        for v in (_object(clock).get("before_ghz"), _object(clock).get("after_ghz"))
        if isinstance(v, int | float) and not isinstance(v, bool) and v > 0
    ]
    return max(readings) if readings else mean_ghz


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
    record_fields.STRING: "x",
    record_fields.INTEGER: 1,
    record_fields.NUMBER: 1.0,
    record_fields.BOOLEAN: False,
    record_fields.OBJECT: {"x": 0},
    record_fields.ARRAY: [0],
}
_EVERY_GROUP = {f.name: _SAMPLE[f.type] for f in record_fields.FIELDS}
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
