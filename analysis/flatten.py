"""One raw record (nested JSON) -> one flat row of the tidy records table, plus its per-hwthread counters.

Counter metrics become four columns per metric in the row (`ctr_<metric>_sum|min|max|avg`); the values
per hardware thread go to a separate long table (one row per record x metric x hwthread), because a
wide column per hardware thread would be mostly empty on a 512-CPU node.
"""

import json
import re

# What names a variant in every table, in this order (summary, speedup, models).
CASE_DESCRIPTION = [
    "node_type",
    "binary",
    "kernel",
    "lang",
    "model",
    "schedule",
    "sync",
    "inner",
    "pin",
    "counter_group",
]

VARIANT_KEYS = ("schedule", "sync", "inner")
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
)
_RAW_TEXT = ("campaign", "node_type", "hostname", "host", "kernel", "lang", "model", "checksum", "started")


def metric_column(name: str) -> str:
    """'L2 miss ratio' -> 'l2_miss_ratio', 'Runtime (RDTSC) [s]' -> 'runtime_rdtsc_s'."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def flatten_record(record: dict, relpath: str) -> tuple[dict, list[tuple]]:
    """(row, [(case_id, rep, metric, [hwthread ids], [values]) per counted metric])."""
    # No file column: a record's file is always raw/<case_id>/rep-<rep>.json (see load.record_file).
    row: dict = {"case_id": record["case_id"], "rep": record["rep"]}
    for key in _RAW_TEXT:
        row[key] = record.get(key)
    for key in _RAW_NUMERIC:
        row[key] = record.get(key)
    params = record["params"]
    row["params_json"] = canonical_json(params)
    for key, value in params.items():
        if key not in VARIANT_KEYS:
            row[f"param_{key}"] = value if isinstance(value, str | int | float) else canonical_json(value)
    for key in VARIANT_KEYS:
        row[key] = record.get(key, params.get(key))
    row["threads"] = record["threads"]
    row["ranks"] = record["ranks"]
    row["warmup"] = bool(record.get("warmup", False))
    row["case_index"] = record.get("case_index")
    row["n_warmup"] = len(record.get("warmup_wall_s") or [])
    build = record.get("build") or {}
    row["build_compiler"] = build.get("compiler")
    row["build_flags"] = build.get("flags")
    rank_wall = record.get("rank_wall_s")
    if rank_wall:
        row["rank_wall_min_s"] = min(rank_wall)
        row["rank_wall_max_s"] = max(rank_wall)
    placement = record.get("placement") or []
    row["placement_cpus"] = len({cpu for pair in placement for cpu in pair}) if placement else None
    pin = record.get("pin") or {}
    row["pin_strategy"] = pin.get("strategy")
    row["pin_cpus"] = ",".join(map(str, pin["cpus"])) if pin.get("cpus") else None
    row["pin_violations"] = len(pin.get("violations") or [])
    counters = record.get("counters") or {}
    row["counters_status"] = counters.get("status")
    row["counters_group"] = counters.get("group")
    row["counters_reason"] = counters.get("reason")
    per_hwthread: list[tuple] = []
    if counters.get("status") == "ok":
        for name, metric in (counters.get("metrics") or {}).items():
            column = metric_column(name)
            for stat in ("sum", "min", "max", "avg"):
                row[f"ctr_{column}_{stat}"] = metric.get(stat)
            values = metric.get("per_hwthread") or {}
            if values:  # exploded into one row per hwthread later, vectorised (see load.explode_counters)
                per_hwthread.append(
                    (record["case_id"], record["rep"], name, list(values), list(values.values()))
                )
    row |= scenario_columns(record)
    slurm = record.get("slurm") or {}
    row["slurm_job_id"] = slurm.get("job_id")
    row["slurm_array_task_id"] = slurm.get("array_task_id")
    return row, per_hwthread


def scenario_columns(record: dict) -> dict:
    """The scheduling scenario (what was asked, what the OS applied) and the competing load's CPU share."""
    sched = record.get("sched") or {}
    asked = [
        f"{k}={sched[k]}" for k in ("nice", "worker_nice", "worker_policy", "omp_wait_policy") if sched.get(k)
    ]
    applied: dict[str, int] = {}
    for policy, rtprio, nice in sched.get("applied") or []:
        key = f"{policy}" + (f":{rtprio}" if rtprio else "") + f" nice {nice}"
        applied[key] = applied.get(key, 0) + 1
    load = record.get("load") or {}
    return {
        "sched_asked": " ".join(asked) or "-",
        "sched_applied": ", ".join(f"{k} x{n}" for k, n in applied.items()) or None,
        "load_name": (load.get("profile") or {}).get("name"),
        "load_cpu_s": load.get("cpu_s"),
        # During the kernel's compute region where known, else over the load's whole run.
        "load_cpu_share": load.get("compute_cpu_share", load.get("cpu_share")),
    }
