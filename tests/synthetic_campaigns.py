"""Synthetic campaign directories with known ground truth, for tests, benchmarks and demos.

The files follow docs/formats.md exactly (campaign.toml, cases.jsonl, manifest.json,
raw/<case_id>/ facts.jsonl and reps.csv written by the runner's store, rep-<k>.json files of the
older layout, failed-attempt files), so the analysis cannot tell them from a real
campaign. What is planted is returned as a `GroundTruth`, so tests compare against the truth and
never against numbers the analysis produced.

Timing model: the true median time of a case is
    T(p) = T1 * (f + (1 - f) / p)                 for p = threads * ranks <= cores (Amdahl),
    T(p) = T(cores) * (1 + oversub * (p/cores - 1)) beyond the cores (oversubscription costs),
times the case's `slowdown` (planted slow variants); each repetition multiplies it by lognormal
noise with median 1 (so the true median is exactly T), optionally with rare spikes (outliers).

    python -m tests.synthetic_campaigns OUT_DIR            # writes the standard demo campaign
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from jobs import likwid_csv, probe_detail
from sbcore import layout, record_store
from sbcore.atomic import write_atomic
from tests.mandelbrot_reference import pgm16, reference_counts

MANDELBROT_PARAMS = {"preset": "asymmetric", "width": 64, "height": 64, "max_iter": 200}
MCPI_PARAMS = {"samples": 1_000_000, "seed": 1}
STARTED = "2026-11-22T00:00:00Z"


@dataclass
class CaseSpec:
    """One planned case and how its synthetic repetitions behave."""

    node_type: str
    kernel: str
    lang: str
    model: str
    threads: int
    ranks: int = 1
    schedule: str = "static"
    sync: str = "none"
    inner: str = "scalar"
    pin: str = "compact"
    counter_group: str | None = None
    reps: int = 10
    params: dict = field(default_factory=dict)
    t1: float = 1.0  # true single-worker time of this variant [s]
    serial_fraction: float = 0.1
    slowdown: float = 1.0  # planted slow variant: multiplies the true time
    noise: str = "lognormal"  # lognormal | spiky (lognormal + 5 % spikes of x1.5) | none
    sigma: float = 0.02  # lognormal shape (relative spread)
    wrong_checksum: bool = False
    violations: bool = False
    fate: str = "ok"  # ok | failed (every rep failed) | missing (no file) | partial (half the reps, no more)
    # Records carry what today's runner adds to each (machine-state probe with a time per pinned CPU,
    # clock, scheduling scenario, sampling state, inner path, command line): as large as real ones.
    runner_fields: bool = False

    @property
    def binary(self) -> str:
        return f"{self.kernel}-{self.lang}-{self.model}"

    def case_dict(self, index: int, experiment: str) -> dict:
        params = dict(MANDELBROT_PARAMS if self.kernel == "mandelbrot" else MCPI_PARAMS)
        params.update(self.params)
        if self.model != "serial":
            params.update(schedule=self.schedule, sync=self.sync)
        params["inner"] = self.inner
        argv = ["--threads", str(self.threads)]
        for key, value in params.items():
            argv += [f"--{key.replace('_', '-')}", str(value)]
        case = {
            "node_type": self.node_type,
            "binary": self.binary,
            "kernel": self.kernel,
            "lang": self.lang,
            "model": self.model,
            "threads": self.threads,
            "ranks": self.ranks,
            "pin": self.pin,
            "counter_group": self.counter_group,
            "reps": self.reps,
            "warmup": 1,
            "timeout_s": 120,
            "params": params,
            "env": {"OMP_PROC_BIND": "false"},
            "argv": argv,
        }
        canonical = json.dumps(case, sort_keys=True, separators=(",", ":"))
        case_id = hashlib.sha256(canonical.encode()).hexdigest()[:12]
        return {"case_id": case_id, "index": index, "experiment": experiment, **case}


@dataclass
class NodeTypeSpec:
    name: str
    cores: int
    sockets: int = 1
    threads_per_core: int = 1
    counters: bool = False
    oversub: float = 0.05


@dataclass
class GroundTruth:
    """What was planted, by case_id."""

    campaign_dir: Path
    true_median_s: dict[str, float] = field(default_factory=dict)
    serial_fraction: dict[str, float] = field(default_factory=dict)
    wrong_checksum: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    corrupt_files: dict[str, str] = field(default_factory=dict)  # file[:line] -> kind
    legacy_layout: list[str] = field(default_factory=list)  # cases kept as rep-<k>.json files
    dump: Path | None = None
    cases: list[dict] = field(default_factory=list)
    n_records: int = 0


def true_time(spec: CaseSpec, node: NodeTypeSpec) -> float:
    p = spec.threads * spec.ranks
    f = spec.serial_fraction
    if spec.model == "serial":
        t = spec.t1
    elif p <= node.cores:
        t = spec.t1 * (f + (1 - f) / p)
    else:
        t = spec.t1 * (f + (1 - f) / node.cores) * (1 + node.oversub * (p / node.cores - 1))
    return t * spec.slowdown


def draw_times(spec: CaseSpec, median: float, rng: np.random.Generator) -> np.ndarray:
    if spec.noise == "none":
        return np.full(spec.reps, median)
    times = median * rng.lognormal(0.0, spec.sigma, spec.reps)
    if spec.noise == "spiky":
        times = np.where(rng.random(spec.reps) < 0.05, times * 1.5, times)
    return times


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{h:016x}"


def reference_checksum(case: dict) -> str:
    """Same kernel and problem -> same checksum, whatever the variant (as in the real kernels)."""
    problem = {k: v for k, v in case["params"].items() if k not in ("schedule", "sync", "inner")}
    key = json.dumps([case["kernel"], problem], sort_keys=True).encode()
    return fnv1a64(key)


def placement(spec: CaseSpec, node: NodeTypeSpec) -> tuple[list[int], list[list[int]], list[dict]]:
    hwthreads = node.cores * node.threads_per_core
    workers = spec.threads * spec.ranks
    cpus = list(range(min(workers, hwthreads)))
    seen = [[i % hwthreads, i % hwthreads] for i in range(workers)]
    violations = []
    if spec.violations:
        # Worker 0 migrated to the last CPU between start and end of its work.
        seen[0] = [0, hwthreads - 1]
        violations = [{"worker": 0, "planned": 0, "seen": seen[0]}]
    return cpus, seen, violations


def counters_field(spec: CaseSpec, node: NodeTypeSpec, cpus: list[int], rng: np.random.Generator) -> dict:
    if spec.counter_group is None:
        return {"status": "off"}
    if not node.counters:
        return {
            "status": "unavailable",
            "group": spec.counter_group,
            "reason": "likwid-perfctr: Cannot get access to MSRs. Please check permissions to the MSRs",
        }
    p = spec.threads * spec.ranks
    # CPI grows slowly with threads (shared resources), miss ratio too: enough shape for a plot.
    cpi = 0.5 * (1 + 0.02 * p) * rng.lognormal(0, 0.01, len(cpus))
    miss = 0.01 * (1 + 0.05 * p) * rng.lognormal(0, 0.01, len(cpus))

    def metric(values: np.ndarray, printed) -> dict:
        # As the runner stores them: likwid-perfctr prints metrics with four decimals and event counts
        # as integers, jobs/likwid_csv.py reads those texts and sums them up.
        per = {str(c): printed(v) for c, v in zip(cpus, values.tolist(), strict=True)}
        return {"per_hwthread": per, **likwid_csv.summary(per)}

    four_decimals = partial(round, ndigits=4)
    return {
        "status": "ok",
        "group": spec.counter_group,
        "metrics": {"CPI": metric(cpi, four_decimals), "L2 miss ratio": metric(miss, four_decimals)},
        "events": {"INSTR_RETIRED_ANY": metric(np.full(len(cpus), 1e9), int)},
    }


def make_record(
    spec: CaseSpec,
    node: NodeTypeSpec,
    case: dict,
    campaign: str,
    rep: int,
    wall: float,
    checksum: str,
    rng,
    carry: dict | None = None,
) -> dict:
    cpus, seen, violations = placement(spec, node)
    workers = spec.threads * spec.ranks
    work = 10_000_000 if spec.kernel == "mandelbrot" else case["params"]["samples"]
    record = {
        "schema": "scalebench.run/1",
        "kernel": spec.kernel,
        "lang": spec.lang,
        "model": spec.model,
        "schedule": case["params"].get("schedule", "static"),
        "sync": case["params"].get("sync", "none"),
        "inner": spec.inner,
        "threads": spec.threads,
        "ranks": spec.ranks,
        "params": case["params"],
        "rep": rep,
        "warmup": False,
        "wall_s": wall,
        "setup_s": 1e-4 * workers,
        "cpu_user_s": wall * min(workers, node.cores),
        "cpu_sys_s": 0.001,
        "ctx_voluntary": 3,
        "ctx_involuntary": max(0, workers - node.cores),
        "os_threads": spec.threads + (1 if spec.model == "pthreads" else 0),
        "placement": seen,
        "work": work,
        "checksum": checksum,
        "result": {"pi": 3.1416} if spec.kernel == "mcpi" else {"iterations": work},
        "timer_res_s": 1e-9,
        "build": {"compiler": "gcc 12.2.0" if spec.lang == "c" else "gfortran 12.2.0", "flags": "-O2"},
        "host": f"{node.name}-host",
        "started": STARTED,
        "campaign": campaign,
        "case_id": case["case_id"],
        "case_index": case["index"],
        "node_type": spec.node_type,
        "hostname": f"{node.name}-host",
        "status": "ok",
        "exit_status": 0,
        "stderr_tail": "",
        "runner_wall_s": wall + 0.01,
        "warmup_wall_s": [wall * 1.1],
        "pin": {
            "strategy": spec.pin,
            "cpus": cpus,
            "command": ["likwid-pin", "-q", "-c", ",".join(map(str, cpus))],
            "violations": violations,
        },
        "counters": counters_field(spec, node, cpus, rng),
        "slurm": None,
    }
    if spec.runner_fields:
        record |= runner_fields(spec, case, rep, cpus, rng, {} if carry is None else carry)
    if spec.model in ("omp", "pthreads"):
        record |= worker_fields(spec, wall, work)
    if spec.model == "mpi":
        rank_times = wall * (1 - 0.05 * rng.random(spec.ranks))
        rank_times[0] = wall
        record["rank_wall_s"] = [float(t) for t in rank_times]
    return record


# Planted per-worker measurements: 3 % of the region outside the workers' useful time; static on
# the Mandelbrot image deals the work unevenly (the asymmetric image), other schedules evenly.
PLANTED_USEFUL_SHARE = 0.97
PLANTED_STATIC_BALANCE = 0.8


def worker_fields(spec: CaseSpec, wall: float, work: int) -> dict:
    workers = spec.threads * spec.ranks
    uneven = spec.kernel == "mandelbrot" and spec.schedule == "static" and workers > 1
    balance = PLANTED_STATIC_BALANCE if uneven else 1.0
    useful_max = PLANTED_USEFUL_SHARE * wall
    return {
        "worker_useful_mean_s": balance * useful_max,
        "worker_useful_max_s": useful_max,
        "worker_wait_mean_s": 0.0,
        "worker_cpu_mean_s": balance * useful_max,
        "worker_work_mean": work / workers,
        "worker_work_max": work / workers / balance,
    }


PROBE_NORMAL_S = {"int_mul_s": 0.000376, "fp_lat_s": 0.000372, "fp_tput_s": 0.00046, "int_alu_s": 0.000145}


def runner_fields(spec: CaseSpec, case: dict, rep: int, cpus: list[int], rng, carry: dict) -> dict:
    """The fields today's runner and kernels add to a measured record, with undisturbed values (probe
    times within 2 % of the node's normal, printed with 9 digits as the kernels print them, with each
    chain's fastest and slowest time beside them; within one kernel process a repetition's `before` is
    the previous one's `after`, kept in `carry`)."""

    def side() -> dict:
        times = {
            k: [float(f"{t:.9g}") for t in v * (1 + 0.02 * rng.random(len(cpus)))]
            for k, v in PROBE_NORMAL_S.items()
        }
        return {"cpus": cpus} | times

    before = carry["after"] if rep % 3 and "after" in carry else side()
    after = carry["after"] = side()
    clock = [float(f"{g:.9g}") for g in 3.2 + 0.01 * rng.random(2)]
    workers = spec.threads * spec.ranks
    return {
        "inner_path": spec.inner,
        "uarch": "zen3",
        "clock_ghz": sum(clock) / 2,
        "clock": {
            "before_ghz": clock[0],
            "after_ghz": clock[1],
            "method": "dependent integer add chain, best of 3 x 2000000 adds",
        },
        "sched": {
            "nice": None,
            "worker_nice": None,
            "worker_policy": None,
            "omp_wait_policy": None,
            "gomp_spincount": None,
            "applied": [["other", 0, 0]] * workers,
        },
        "probe": {
            "int_mul_iters": 400000,
            "fp_lat_iters": 400000,
            "fp_tput_iters": 500000,
            "int_alu_iters": 125000,
            "before": before,
            "after": after,
            "runq_wait_s": float(f"{1e-5 * rng.random():.9g}"),
            "min_s": {c[:-2]: min(before[c] + after[c]) for c in PROBE_NORMAL_S},
            "max_s": {c[:-2]: max(before[c] + after[c]) for c in PROBE_NORMAL_S},
        },
        "invocation": rep // 3,
        "in_process_rep": rep % 3,
        "reps_per_process": 3,
        "sampling": {"n": rep + 1, "ci_rel": 0.1, "target_ci": 0.02, "stop": None},
        "command": [f"build/bin/{spec.binary}", *case["argv"], "--reps", "3", "--warmup", "1"],
    }


def failed_record(case: dict, campaign: str, rep: int) -> dict:
    return {
        "schema": "scalebench.run/1",
        "campaign": campaign,
        "case_id": case["case_id"],
        "case_index": case["index"],
        "rep": rep,
        "node_type": case["node_type"],
        "status": "failed",
        "reason": "timeout after 120 s",
        "exit_status": -9,
        "stderr_tail": "killed",
    }


def mandelbrot_pgm(width: int = 96, height: int = 64, max_iter: int = 100) -> bytes:
    """A P5 16-bit PGM of iteration counts of the default (symmetric) region, as --dump writes it."""
    return pgm16(reference_counts(width, height, max_iter))


REPS_PER_PROCESS = 3  # repetitions of one kernel process (as runner_fields' `invocation` numbers them)


def one_process(records: list[dict]) -> list[dict]:
    """The records of one kernel process made to say what the runner says once per process
    (jobs/runcase.py): its runner_wall_s (the process's repetitions and its warm-up), the counters of the
    process (likwid measures the whole process: the first record's), and the sampling state after the
    process's last repetition. Every other field the store keeps per process is the case's already."""
    runner_wall = sum(r["wall_s"] for r in records) + 0.01
    same = {"runner_wall_s": runner_wall, "counters": records[0]["counters"]}
    if "sampling" in records[0]:
        same["sampling"] = records[-1]["sampling"]
    return [r | same for r in records]


def processes_of(records: list[dict]) -> list[list[dict]]:
    """Repetitions grouped into kernel processes of REPS_PER_PROCESS repetitions each (by `rep`)."""
    by_process: dict[int, list[dict]] = {}
    for record in records:
        by_process.setdefault(record["rep"] // REPS_PER_PROCESS, []).append(record)
    return [one_process(group) for _, group in sorted(by_process.items())]


def write_case_records(args: tuple) -> int:
    """Writes one case's records as the runner does: each kernel process's records through the one
    writer (sbcore/record_store.py's store, scalebench.run/2, per-CPU probe times in probes.jsonl);
    with `records_format` "v1" as lines of records.jsonl (campaigns before v2, for tests of reading
    them); rep-<k>.json files, the older layout, for `legacy` cases. Returns how many records were
    written."""
    spec, node, case, campaign, raw_dir, seed, truth_median, legacy, records_format = args
    rng = np.random.default_rng(seed)
    case_dir = Path(raw_dir) / case["case_id"]
    if spec.fate == "missing":
        return 0
    case_dir.mkdir(parents=True, exist_ok=True)
    times = draw_times(spec, truth_median, rng)
    checksum = reference_checksum(case)
    if spec.wrong_checksum:
        checksum = fnv1a64(b"planted mismatch " + case["case_id"].encode())
    records, carry = [], {}
    for rep in range(spec.reps):
        if spec.fate == "partial" and rep >= spec.reps // 2:
            continue  # an interrupted run: the second half was never attempted
        if spec.fate == "failed":
            name = f"rep-{rep}.failed-20261122T000000Z-{4242 + rep}.json"
            (case_dir / name).write_text(json.dumps(failed_record(case, campaign, rep)))
            continue
        records.append(make_record(spec, node, case, campaign, rep, float(times[rep]), checksum, rng, carry))
    if legacy:  # older runners kept one file per repetition, the per-CPU probe times in the record
        for record in records:
            (case_dir / layout.rep_name(record["rep"])).write_text(json.dumps(record))
        return len(records)
    store_processes(case_dir, [r for process in processes_of(records) for r in process], records_format)
    return len(records)


def store_processes(case_dir: Path, records: list[dict], records_format: str = "v2") -> None:
    """Stores the records (their probes whole) as the runner does, a kernel process at a time: those
    with one `invocation` (or, without it, REPS_PER_PROCESS repetitions in a row) are one process.
    Without an fsync per write: fixture files are regenerated at will, and a million records' fsyncs
    would take the scale benchmark's campaign an hour to write."""
    with _without_fsync():
        _store_processes(case_dir, records, records_format)


@contextlib.contextmanager
def _without_fsync():
    saved = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = saved


def _store_processes(case_dir: Path, records: list[dict], records_format: str) -> None:
    groups: dict = {}
    for record in records:
        key = record.get("invocation", record["rep"] // REPS_PER_PROCESS)
        groups.setdefault(key, []).append(probe_detail.split(record))
    for stored in groups.values():
        if records_format == "v1":
            # Bulk fixture files: plain appends (no fsync), they are regenerated at will.
            with (case_dir / layout.RECORDS_FILE).open("ab") as handle:
                handle.write(b"".join(record_store.encode(record) for record, _ in stored))
            details = [record_store.encode(detail) for _, detail in stored if detail is not None]
            if details:
                with (case_dir / layout.PROBES_FILE).open("ab") as handle:
                    handle.write(b"".join(details))
        else:
            details = {record["rep"]: detail for record, detail in stored if detail is not None}
            record_store.store(case_dir, [record for record, _ in stored], details)


def trials_of(n: int):
    """A change for rewrite_case: every `n` repetitions in a row one kernel process (a trial)."""
    return lambda records: [r | {"invocation": r["rep"] // n} for r in records]


def rewrite_case(case_dir: Path, change) -> None:
    """A test's change to a stored case, before any analysis: its counted records (with their per-CPU
    probe times) read, handed to `change` (a list of records -> the list to store), the stored files
    removed and the changed records stored again in the case's format, a process per `invocation`
    (REPS_PER_PROCESS repetitions in a row without one). A test that regroups repetitions into other
    processes gets each process's per-process fields from its first record, as if it had run them."""
    from sbcore import record_fields, stored_records

    case_dir = Path(case_dir)
    read = stored_records.read(case_dir, case_dir.name)
    order = sorted(read.records, key=lambda k: stored_records.written_order(read.places[k]))
    probes = record_store.read(case_dir / layout.PROBES_FILE)
    details = {}
    for _, raw in record_store.complete_lines(probes):
        line = json.loads(raw)
        details[line["rep"]] = {side: line[side] for side in probe_detail.SIDES}
    records = []
    for rep in order:
        record = read.records[rep]
        if rep in details and isinstance(record.get("probe"), dict):
            probe = {k: v for k, v in record["probe"].items() if k != "n_cpus"}
            record = record | {"probe": probe | details[rep]}
        records.append(record)
    v1 = (case_dir / layout.RECORDS_FILE).exists()
    for path in case_dir.iterdir():
        if path.name in (layout.RECORDS_FILE, layout.PROBES_FILE) or stored_records.is_v2_file(path.name):
            path.unlink()
    changed = change(records)
    groups: dict = {}
    for record in changed:
        groups.setdefault(record.get("invocation", record["rep"] // REPS_PER_PROCESS), []).append(record)
    per_process = [f.name for f in record_fields.PROCESS_FIELDS]
    same = [
        [r | {k: group[0][k] for k in per_process if k in group[0]} for r in group]
        for group in groups.values()
    ]
    store_processes(case_dir, [r for group in same for r in group], "v1" if v1 else "v2")


def write_campaign(
    root: Path,
    name: str,
    specs: list[CaseSpec],
    nodes: list[NodeTypeSpec],
    seed: int = 12345,
    processes: int = 1,
    experiment: str = "synthetic",
    legacy_cases: int = 0,
    records_format: str = "v2",
) -> GroundTruth:
    """Writes the campaign directory root/name and returns its ground truth. The last `legacy_cases`
    cases keep their records as rep-<k>.json files, as campaigns of the older layout do; the others
    as the runner stores them (scalebench.run/2), or as records.jsonl lines (`records_format` "v1":
    campaigns before it, for tests of reading them)."""
    campaign_dir = Path(root) / name
    raw_dir = campaign_dir / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    (campaign_dir / "logs").mkdir(exist_ok=True)
    by_name = {n.name: n for n in nodes}
    truth = GroundTruth(campaign_dir=campaign_dir)
    jobs = []
    lines = []
    complete = [i for i, s in enumerate(specs) if s.fate == "ok" and not s.wrong_checksum]
    legacy_indices = set(complete[len(complete) - legacy_cases :]) if legacy_cases else set()
    for index, spec in enumerate(specs):
        case = spec.case_dict(index, experiment)
        truth.cases.append(case)
        lines.append(json.dumps(case, sort_keys=True))
        node = by_name[spec.node_type]
        median = true_time(spec, node)
        cid = case["case_id"]
        truth.true_median_s[cid] = median
        truth.serial_fraction[cid] = spec.serial_fraction
        for flag, bucket in (
            (spec.wrong_checksum, truth.wrong_checksum),
            (spec.violations, truth.violations),
            (spec.fate == "failed", truth.failed),
            (spec.fate == "missing", truth.missing),
            (spec.fate == "partial", truth.partial),
        ):
            if flag:
                bucket.append(cid)
        legacy = index in legacy_indices
        if legacy:
            truth.legacy_layout.append(cid)
        seed_of_case = seed * 1_000_003 + index
        jobs.append((spec, node, case, name, str(raw_dir), seed_of_case, median, legacy, records_format))
    write_atomic(campaign_dir / "cases.jsonl", "\n".join(lines) + "\n", make_parents=True)
    write_atomic(
        campaign_dir / "campaign.toml", campaign_toml(name, experiment, seed, nodes), make_parents=True
    )
    write_atomic(
        campaign_dir / "manifest.json", json.dumps(manifest(name, nodes), indent=1), make_parents=True
    )
    if processes > 1:
        import multiprocessing

        # forkserver: a fork of a process with threads (pyarrow's, a test runner's) can deadlock
        with multiprocessing.get_context("forkserver").Pool(processes) as pool:
            truth.n_records = sum(pool.imap_unordered(write_case_records, jobs, chunksize=16))
    else:
        truth.n_records = sum(map(write_case_records, jobs))
    return truth


def campaign_toml(name: str, experiment: str, seed: int, nodes: list[NodeTypeSpec]) -> str:
    lines = [
        "[campaign]",
        f'name = "{name}"',
        f'created = "{STARTED}"',
        f"seed = {seed}",
        "",
        "[experiment]",
        f'name = "{experiment}"',
        'description = "Synthetic campaign with planted ground truth (tests/synthetic_campaigns.py)"',
        "reps = 10",
        "warmup = 1",
        "",
    ]
    for node in nodes:
        lines += [
            f"[node_types.{node.name}]",
            f"sockets = {node.sockets}",
            f"cores_per_socket = {node.cores // node.sockets}",
            f"threads_per_core = {node.threads_per_core}",
            f"counters = {'true' if node.counters else 'false'}",
            "",
        ]
    return "\n".join(lines)


def manifest(name: str, nodes: list[NodeTypeSpec]) -> dict:
    return {
        "campaign": name,
        "synthetic": True,
        "git": {"commit": "0" * 40, "dirty": False},
        "compilers": {"c": "gcc 12.2.0", "fortran": "GNU Fortran 12.2.0", "flags": "-O2 -ffp-contract=off"},
        "versions": {"likwid": "5.2.2", "slurm": "22.05.8", "openmpi": "4.1.4"},
        "topology": {
            n.name: {
                "sockets": n.sockets,
                "cores": n.cores,
                "threads_per_core": n.threads_per_core,
                "hwthreads": n.cores * n.threads_per_core,
            }
            for n in nodes
        },
        "hostnames": [f"{n.name}-host" for n in nodes],
        "load_average": [0.1, 0.1, 0.1],
        "steal_time_ticks": 0,
        "kernel_version": "scalebench-kernels 0.1",
    }


def standard_nodes() -> list[NodeTypeSpec]:
    return [NodeTypeSpec("synth16", cores=16, counters=True), NodeTypeSpec("workstation", cores=2)]


def standard_specs(reps: int = 10, serial_fraction: float = 0.1) -> list[CaseSpec]:
    """Every feature the analysis handles, each once: see GroundTruth for what is planted where."""
    s = []
    threads16 = [1, 2, 4, 8, 12, 16, 32]
    for lang in ("c", "f"):
        s.append(CaseSpec("synth16", "mandelbrot", lang, "serial", 1, reps=reps, t1=1.0))
    # OpenMP schedules: dynamic is the Amdahl reference, static a planted 25 % slower variant, guided an
    # identical twin of dynamic (same distribution: no real difference to find).
    for p in threads16:
        for sched, slow in (("dynamic,4", 1.0), ("static", 1.25), ("guided", 1.0)):
            s.append(
                CaseSpec(
                    "synth16",
                    "mandelbrot",
                    "c",
                    "omp",
                    p,
                    schedule=sched,
                    slowdown=slow,
                    reps=reps,
                    t1=1.02,
                    serial_fraction=serial_fraction,
                    counter_group="L2CACHE",
                    wrong_checksum=(sched == "static" and p == 8),
                    violations=(sched == "guided" and p == 4),
                )
            )
        s.append(
            CaseSpec(
                "synth16",
                "mandelbrot",
                "f",
                "omp",
                p,
                schedule="dynamic,4",
                reps=reps,
                t1=1.1,
                serial_fraction=serial_fraction,
            )
        )
    # pthreads sync variants over 1..512 threads (coarse locking: slower, fine: slightly slower).
    s.append(CaseSpec("synth16", "mcpi", "c", "serial", 1, reps=reps, t1=0.5))
    for p in [2**k for k in range(10)]:
        for sync, slow in (("none", 1.0), ("atomic", 1.05), ("fine", 1.1), ("coarse", 1.0 + 0.1 * p**0.5)):
            s.append(
                CaseSpec(
                    "synth16",
                    "mcpi",
                    "c",
                    "pthreads",
                    p,
                    schedule="block",
                    sync=sync,
                    slowdown=slow,
                    reps=reps,
                    t1=0.5,
                    serial_fraction=0.02,
                    noise="spiky",
                )
            )
    # MPI: ranks x threads.
    for ranks, threads in ((1, 1), (2, 1), (4, 1), (8, 1), (1, 8), (2, 4), (4, 2), (2, 8), (4, 4)):
        s.append(
            CaseSpec(
                "synth16", "mcpi", "c", "mpi", threads, ranks=ranks, reps=reps, t1=0.52, serial_fraction=0.03
            )
        )
    # Workstation: 2 cores, counters unavailable, one oversubscribed point, and the planted problems.
    s.append(CaseSpec("workstation", "mandelbrot", "c", "serial", 1, reps=reps, t1=2.0, counter_group="CPI"))
    for p in (1, 2, 4):
        s.append(
            CaseSpec(
                "workstation",
                "mandelbrot",
                "c",
                "omp",
                p,
                schedule="dynamic,4",
                reps=reps,
                t1=2.05,
                counter_group="CPI",
                sigma=0.3 if p == 2 else 0.02,
            )
        )
    s.append(
        CaseSpec(
            "workstation", "mandelbrot", "c", "omp", 2, schedule="static", t1=2.05, reps=reps, fate="failed"
        )
    )
    s.append(
        CaseSpec(
            "workstation", "mandelbrot", "c", "omp", 2, schedule="guided", t1=2.05, reps=reps, fate="missing"
        )
    )
    s.append(
        CaseSpec(
            "workstation", "mandelbrot", "c", "omp", 1, schedule="guided", t1=2.05, reps=reps, fate="partial"
        )
    )
    return s


def standard_campaign(
    root: Path,
    name: str = "synthetic-20261122T000000Z",
    reps: int = 10,
    seed: int = 1,
    records_format: str = "v2",
):
    """The demo/test campaign: every plot and check has data. Also writes a Mandelbrot dump PGM."""
    specs, nodes = standard_specs(reps), standard_nodes()
    truth = write_campaign(root, name, specs, nodes, seed=seed, legacy_cases=3, records_format=records_format)
    dump = truth.campaign_dir / "dumps" / "mandelbrot-c-serial.pgm"
    dump.parent.mkdir(exist_ok=True)
    dump.write_bytes(mandelbrot_pgm())
    truth.dump = dump
    return truth


def plant_corrupt_files(truth: GroundTruth) -> None:
    """Adds one corrupt record of each kind as extra repetitions of the first complete case (rows of its
    reps.csv, each of a process of its own, the truncated one last and without its newline) and of a
    complete case of the older layout (rep-<k>.json files). Lines of records.jsonl instead of rows in a
    campaign written with `records_format` "v1"."""
    ok = [c for c in truth.cases if c["case_id"] not in truth.missing + truth.failed + truth.partial]
    rows_case = next(c for c in ok if c["case_id"] not in truth.legacy_layout)
    legacy_case = next(c for c in ok if c["case_id"] in truth.legacy_layout)
    case_dir = truth.campaign_dir / "raw" / rows_case["case_id"]
    if (case_dir / layout.RECORDS_FILE).exists():
        _plant_corrupt_lines(truth, case_dir / layout.RECORDS_FILE)
    else:
        _plant_corrupt_rows(truth, case_dir, rows_case["reps"])
    case_dir = truth.campaign_dir / "raw" / legacy_case["case_id"]
    good = json.loads((case_dir / layout.rep_name(0)).read_text())
    for offset, (kind, text) in enumerate(_corrupt_kinds(good)):
        rel = f"raw/{legacy_case['case_id']}/{layout.rep_name(legacy_case['reps'] + offset)}"
        (truth.campaign_dir / rel).write_text(text)
        truth.corrupt_files[rel] = kind


def _plant_corrupt_lines(truth: GroundTruth, records: Path) -> None:
    """Corrupt lines of records.jsonl (campaigns before scalebench.run/2), the truncated one last."""
    n_lines = records.read_bytes().count(b"\n")
    for offset, (kind, text) in enumerate(_corrupt_kinds(json.loads(records.read_bytes().split(b"\n")[0]))):
        last = kind == "truncated"
        with records.open("a") as handle:
            handle.write(text + ("" if last else "\n"))
        where = f"raw/{records.parent.name}/{layout.RECORDS_FILE}:{n_lines + offset + 1}"
        truth.corrupt_files[where] = kind


def _plant_corrupt_rows(truth: GroundTruth, case_dir: Path, planned_reps: int) -> None:
    """Corrupt rows of reps.csv, each of a process of its own, the truncated one last."""
    from sbcore import stored_records
    from tests.records import plant

    read = stored_records.read(case_dir, case_dir.name)
    good = read.records[min(read.records)]
    reps = case_dir / stored_records.REPS_FILE
    for offset, kind in enumerate(
        ("bad-row", "wrong-schema", "missing-field", "text-in-number", "truncated")
    ):
        record = good | {"rep": planned_reps + offset, "wall_s": PLANTED_WALL_S}
        if kind == "wrong-schema":
            record["schema"] = "somebody.else/9"
        plant(case_dir, [record])
        data = reps.read_bytes()
        start = data.rstrip(b"\n").rfind(b"\n") + 1
        row = data[start:]
        wall = f",{PLANTED_WALL_S!r},".encode()
        row = {
            "bad-row": row[: row.index(b",", row.index(b",") + 1)] + b"\n",  # two cells: a wrong count
            "missing-field": row.replace(wall, b",,"),
            "text-in-number": row.replace(wall, b',"fast",'),
            "truncated": row[: len(row) // 2],
        }.get(kind, row)
        reps.write_bytes(data[:start] + row)
        line = data[:start].count(b"\n") + 1
        where = f"raw/{case_dir.name}/{stored_records.REPS_FILE}:{line}"
        truth.corrupt_files[where] = kind


PLANTED_WALL_S = 123456.789  # the wall time of a planted corrupt row, found in it and changed


def _corrupt_kinds(good: dict) -> list[tuple[str, str]]:
    """(kind, text) of corrupt records made from a good one; truncated last."""
    return [
        ("bad-json", "{not json at all"),
        ("wrong-schema", json.dumps({**good, "schema": "somebody.else/9"})),
        ("missing-field", json.dumps({k: v for k, v in good.items() if k != "wall_s"})),
        ("wrong-type", json.dumps({**good, "threads": "four"})),
        ("truncated", json.dumps(good)[: len(json.dumps(good)) // 2]),
    ]


def bulk_specs(
    n_records: int, reps: int = 50, runner_fields: bool = True
) -> tuple[list[CaseSpec], list[NodeTypeSpec]]:
    """Many cases (problem sizes x variants x thread counts) for the scale benchmark, with records as
    large as today's runner writes them (`runner_fields`)."""
    nodes = [NodeTypeSpec("big64", cores=64, counters=True)]
    threads = [1, 2, 4, 8, 16, 32, 64, 128]
    variants = [("static", 1.1), ("dynamic,4", 1.0), ("guided", 1.0)]
    n_cases = max(1, n_records // reps)
    specs: list[CaseSpec] = []
    size = 0
    while len(specs) < n_cases:
        size += 1
        params = {"width": 64 + size, "height": 64}
        specs.append(
            CaseSpec(
                "big64", "mandelbrot", "c", "serial", 1, reps=reps, params=params, runner_fields=runner_fields
            )
        )
        for sched, slow in variants:
            for p in threads:
                specs.append(
                    CaseSpec(
                        "big64",
                        "mandelbrot",
                        "c",
                        "omp",
                        p,
                        schedule=sched,
                        slowdown=slow,
                        reps=reps,
                        params=params,
                        counter_group="L2CACHE" if sched == "dynamic,4" else None,
                        runner_fields=runner_fields,
                    )
                )
    return specs[:n_cases], nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.synthetic_campaigns",
        description="Write a synthetic campaign directory with known ground truth (for demos and tests).",
    )
    parser.add_argument("out_dir", type=Path, help="directory to create the campaign in (like results/)")
    parser.add_argument("--name", default="synthetic-20261122T000000Z", help="campaign name")
    parser.add_argument("--reps", type=int, default=10, help="repetitions per case (default 10)")
    parser.add_argument("--records", type=int, help="bulk mode: about this many records (scale tests)")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="writer processes (bulk)")
    parser.add_argument(
        "--records-format",
        choices=("v2", "v1"),
        default="v2",
        help="v2 (default): as the runner stores records; v1: records.jsonl, as campaigns before it",
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or (args.records is not None and args.records < 1):
        parser.error("--reps and --records must be positive")
    if args.records:
        specs, nodes = bulk_specs(args.records, reps=min(args.reps, args.records))
        truth = write_campaign(
            args.out_dir,
            args.name,
            specs,
            nodes,
            processes=args.processes,
            records_format=args.records_format,
        )
    else:
        truth = standard_campaign(args.out_dir, args.name, reps=args.reps, records_format=args.records_format)
    print(f"{truth.campaign_dir}: {len(truth.cases)} cases, {truth.n_records} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
