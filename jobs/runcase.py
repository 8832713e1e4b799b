"""Running one repetition of one case: build the command (likwid-pin / likwid-perfctr / mpirun / srun
around the kernel binary, always an argument vector), run it under a time limit, and store the outcome:
on success, a line of its process appended to raw/<case_id>/facts.jsonl and a row per repetition to
reps.csv (never rewritten; sbcore/record_store.py; its per-CPU probe times to probes.jsonl beside it),
a failed-attempt file rep-<k>.failed-<utc>-<pid>.json otherwise.
"""

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from jobs import conduct, probe_detail, simd_bounds
from jobs.binaries import binary_path, is_mpi
from jobs.campaign import load_cases
from jobs.competing_load import LoadError, LoadRun
from jobs.conduct_plan import conducted_references
from jobs.counter_record import counters_from_csv, group_problem
from jobs.families import trial_of
from jobs.hostinfo import host_info, host_topology, hostname
from jobs.kernel_output import parse_records
from jobs.measure_lock import measuring
from jobs.pinning import (
    HARNESS_ENV,
    LIKWID_MISSING,
    confinement_violations,
    find_pin_library,
    format_cpulist,
    harness_env,
    pin_cpus,
    placement_violations,
    preload_env,
)
from jobs.status import next_invocations, ok_records
from sbcore import campaign_access, layout, record_lines, record_rows, record_store, sampling
from sbcore.atomic import dump_json, write_new
from sbcore.case_shape import case_workers
from sbcore.child import die_with_parent, spawn
from sbcore.commands import on_path
from sbcore.errors import UsageError
from sbcore.mpi_launch import mpi_launcher
from sbcore.mpi_launch import root_env as mpi_root_env

STDERR_TAIL_CHARS = 4000
SLURM_FIELDS = {
    "job_id": "SLURM_JOB_ID",
    "array_job_id": "SLURM_ARRAY_JOB_ID",
    "array_task_id": "SLURM_ARRAY_TASK_ID",
    "partition": "SLURM_JOB_PARTITION",
    "node": "SLURMD_NODENAME",
}


class Context(NamedTuple):
    """What every repetition of a campaign on this host shares."""

    campaign_dir: Path
    campaign: str
    host: dict
    hostname: str
    wait_for_lock: bool = True  # False (--no-wait): refuse when another process measures on this host

    @classmethod
    def for_campaign(cls, campaign_dir: Path, wait_for_lock: bool = True) -> "Context":
        campaign_dir = Path(campaign_dir)
        return cls(campaign_dir, campaign_dir.name, host_info(campaign_dir), hostname(), wait_for_lock)


def slurm_ids(env=os.environ) -> dict | None:
    if "SLURM_JOB_ID" not in env:
        return None
    return {key: env.get(var) for key, var in SLURM_FIELDS.items()}


class Command(NamedTuple):
    argv: list[str]
    env: dict
    pin: dict
    counters: dict
    csv_path: Path | None
    affinity: list[int] | None = None  # CPUs the child process is pinned to before exec


def build_command(
    ctx: Context, case: dict, k: int, env=os.environ, nreps: int = 1, cpu: int | None = None
) -> Command:
    """The command of the invocation that measures repetitions k .. k+nreps-1 of the case; `cpu`: its
    one worker on that CPU (a duet half, jobs/duets.py) instead of the case's own placement."""
    topo = host_topology(ctx.host)
    kernel = [
        str(binary_path(case["binary"])),
        *case["argv"],
        "--reps",
        str(nreps),
        "--warmup",
        str(case["warmup"]),
    ]
    if case.get("dump_image"):
        # Relative to the case directory, the kernels' working directory: no whitespace of the
        # campaign's path reaches likwid-pin, which splits its command line on it.
        kernel += ["--dump", layout.image_name(k)]
    # OMP_NUM_THREADS = threads whatever the caller's shell says: likwid-pin sets it to its list length when
    # unset (shorter than threads when the list wraps) and truncates the list when it is smaller.
    run_env = dict(env) | {"OMP_NUM_THREADS": str(case["threads"])} | case["env"]
    run_env.pop(HARNESS_ENV, None)  # only the plan below pins (a caller's variable would pin "none" cases)
    tool = case.get("pin_tool", "harness")
    pin = {"strategy": case["pin"], "cpus": None, "command": None, "violations": [], "tool": tool}
    counters = {"status": "off", "group": None}
    csv_path = None
    affinity = None
    # No skip mask (-s) for any model: OpenMP and the pthreads kernels both keep one pool of threads-1
    # helpers for the whole process, so likwid-pin's n-th created thread is worker n in every repetition.
    if case["pin"] == "none" and case.get("cpus"):
        # Confined, not pinned: the process may run on these CPUs and its threads float among them, as
        # under a process affinity mask or an OS booted with fewer CPUs.
        pin["confined"] = pin_cpus("cores", case["cpus"], topo)
        kernel = ["taskset", "-c", format_cpulist(pin["confined"]), *kernel]
    if case["pin"] != "none":
        if case["pin"] == "smt-siblings" and topo.threads_per_core < 2:
            raise CaseError(f"pin smt-siblings: host {ctx.hostname} has no SMT siblings")
        cpus = pin_cpus(case["pin"], min(case["threads"], case.get("cpus", case["threads"])), topo)
        cpus = cpus if cpu is None else [cpu]
        pin["cpus"] = cpus
        pin_list = format_cpulist(cpus)
    group = case.get("counter_group")
    if group:
        counters = {"status": "unavailable", "group": group, "reason": ctx.host["counters"]["reason"]}
    if group and ctx.host["counters"]["available"]:
        problem = group_problem(group, ctx.host, ctx.hostname)
        if problem:
            raise CaseError(problem)
        csv_path = layout.case_dir(ctx.campaign_dir, case["case_id"]) / f".perfctr-{k}-{os.getpid()}.csv"
        measured = pin["cpus"] if case["pin"] != "none" else [h.hwthread for h in topo.hwthreads]
        counters = {"status": "pending", "group": group, "cpus": measured}  # until the CSV is read
        # -C pins like likwid-pin and measures those CPUs; -c only measures
        wrapper = ["likwid-perfctr", "-C" if case["pin"] != "none" else "-c", format_cpulist(measured)]
        wrapper += ["-g", group, "-m", "-O", "-o", str(csv_path)]
        pin["command"] = wrapper
        argv = wrapper + kernel
    elif case["pin"] != "none" and tool == "likwid-pin":
        if not on_path("likwid-pin", env.get("PATH")):
            raise CaseError(f"pin_tool likwid-pin: {LIKWID_MISSING}")
        pin["command"] = ["likwid-pin", "-q", "-c", pin_list]
        argv = pin["command"] + kernel
    elif case["pin"] != "none" and tool == "harness":
        run_env |= harness_env(cpus, case["threads"], run_env)
        argv = kernel
    elif case["pin"] != "none":
        try:
            run_env |= preload_env(cpus, case["threads"], _pin_library(ctx), run_env)
        except ValueError as err:
            raise CaseError(f"pin {case['pin']}: {err}") from None
        # With one CPU likwid-pin pins the process itself; with more, liblikwidpin pins the main
        # thread to the list's first CPU: pinning the child there first is the same either way.
        affinity = cpus[:1]
        argv = kernel
    else:
        argv = kernel
        affinity = None if cpu is None else [cpu]  # unpinned duet half: kept on its CPU as a whole
    if (case["ranks"] > 1 or is_mpi(case["model"])) and not case.get("program"):
        # (a program's runner starts its launcher itself, around the program: kernels/programs/)
        argv = mpi_launcher(case["ranks"], case["threads"], len(topo.hwthreads), env) + argv
        run_env.update(mpi_root_env())
    return Command(argv, run_env, pin, counters, csv_path, affinity)


def reference_commands(
    ctx: Context, baseline: dict, member: Command, turns: int, env=os.environ
) -> list[tuple[list[str], dict, int]]:
    """One reference process of the baseline per CPU of the member (jobs/conduct.py): (argv, env, cpu),
    each measuring `turns` repetitions after one warm-up, pinned to its CPU, one worker."""
    cpus = member.pin["cpus"] or member.pin.get("confined")
    if not cpus:
        raise CaseError("conduct: the case has no CPUs of its own to run the baseline on (pin none, no cpus)")
    if case_workers(baseline) != 1 or baseline.get("counter_group"):
        raise CaseError(f"conduct: the baseline {baseline['case_id']} is not one worker without counters")
    references = []
    for cpu in cpus:
        command = build_command(
            ctx, baseline | {"warmup": 1, "pin": "cores", "dump_image": False}, 0, env, nreps=turns, cpu=cpu
        )
        references.append((command.argv, command.env, cpu))
    return references


def _pin_library(ctx: Context) -> str | None:
    """liblikwidpin's path, looked up where likwid installs it: never a path read back from the campaign
    (hosts/<hostname>.json keeps the probed one as provenance only; it would be preloaded: docs/trust.md)."""
    return find_pin_library()


class CaseError(Exception):
    """This repetition cannot run as planned on this host; recorded as a failed attempt."""


def _tail(text: str) -> str:
    return text[-STDERR_TAIL_CHARS:]


def run_process(
    argv: list[str], env: dict, timeout_s: float, cwd: Path | None = None, affinity: list[int] | None = None
) -> tuple[int | None, str, str, bool | str]:
    """(exit status, stdout, stderr, timed out: True, or why when the kernel ended but its output stayed
    open past the timeout). The child gets its own process group so a timeout or Ctrl-C
    kills everything it started (likwid-pin's child, mpirun's ranks); with `affinity` it is pinned to
    those CPUs before it execs."""
    preexec = die_with_parent(then=(lambda: os.sched_setaffinity(0, affinity)) if affinity else None)
    try:
        proc = spawn(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            # Own process group (killed as one), same session: a new session is a new scheduler autogroup,
            # which would keep nice values of kernel and competing load from competing at all.
            process_group=0,
            preexec_fn=preexec,  # noqa: PLW1509 (started from the runner's main thread only)
        )
    except OSError as err:
        return None, "", f"cannot start {argv[0]}: {err}", False
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        exited = proc.poll()  # the kernel itself ended: a process it started holds its output open
        _kill_group(proc)
        out, err = proc.communicate()
        if exited is not None:
            return exited, out, err, "left a process holding its output open"
        return proc.returncode, out, err, True
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _exit_reason(status: int | None) -> str:
    if status is None:
        return "could not start"
    if status < 0:
        try:
            return f"killed by signal {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def _kernel_message(status: int | None, stderr: str) -> str:
    """A kernel that fails says why in one line on stderr (exit 1: a runtime failure such as a scheduling
    setting the OS refused; exit 2: an option it refuses): the reason carries that line."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return f": {lines[-1][:300]}" if status is not None and status > 0 and lines else ""


def run_invocation(
    ctx: Context,
    case: dict,
    p: int,
    env=os.environ,
    beyond_target: bool = False,
    place: dict | None = None,
    cpu: int | None = None,
    lock_held: bool = False,
    reference: dict | None = None,
) -> dict:
    """Run invocation p of the case (one kernel process measuring the repetitions of block p) unless
    all of them are done (or, unless `beyond_target`: a trial the comparison target asks for, the case
    has met its own target); returns {"outcome": done|ok|failed|duplicate, ...}. `place`: its trial
    and its place in it ({"trial", "trial_slot"}, jobs/families.py), written into its records (a
    family member run alone, as by `run-case`, records its trial only; a duet half also its partner and
    `cpu`, with the host's lock already held by the duet: `lock_held`). `reference`: the family's
    serial baseline, run on each of the case's CPUs before each of its repetitions (a conducted
    trial, jobs/conduct.py; its records gain the reference times). Every measured
    repetition becomes one row of the case's reps.csv (sbcore/record_store.py); a failed invocation leaves one
    failed-attempt file named after its first missing repetition."""
    rule = sampling.case_rule(case)
    ks = sampling.block(rule, p)
    directory = layout.case_dir(ctx.campaign_dir, case["case_id"])
    known = ok_records(ctx.campaign_dir, case)
    todo = [k for k in ks if k not in known]
    # Done already (another invocation of the same pass met the target or used up the budget).
    if not todo or (rule.target_ci is not None and not beyond_target and sampling.progress(rule, known).done):
        return {"outcome": "done", "reps": ks, "path": layout.reps_path(ctx.campaign_dir, case["case_id"])}
    directory.mkdir(parents=True, exist_ok=True)
    campaign_access.check_trusted(directory, "case directory")  # the kernel's working directory
    for name in layout.STORED_FILES:  # where its records go: checked before it runs
        campaign_access.refuse_unless_regular(directory / name)
    harness = {
        "campaign": ctx.campaign,
        "case_id": case["case_id"],
        "case_index": case["index"],
        "rep": todo[0],
        "invocation": p,
        "node_type": case["node_type"],
        "hostname": ctx.hostname,
        "slurm": slurm_ids(env),
    }
    if place:
        harness |= place
    elif case.get("family"):
        harness["trial"] = trial_of(case, p)
    if beyond_target:
        harness["comparison_trial"] = True  # its case's own precision target does not count it
    try:
        command = build_command(ctx, case, ks[0], env, nreps=len(ks), cpu=cpu)
    except CaseError as err:
        return _failed(
            directory, todo[0], harness | {"reason": str(err), "exit_status": None, "stderr_tail": ""}
        )
    harness |= {"pin": command.pin, "counters": command.counters, "command": command.argv}
    turns = case["warmup"] + len(ks)
    try:
        references = reference_commands(ctx, reference, command, turns, env) if reference else None
    except CaseError as err:
        return _failed(
            directory, todo[0], harness | {"reason": str(err), "exit_status": None, "stderr_tail": ""}
        )
    ref_times: list[list[float]] = []
    try:
        # One measurer per host (jobs/measure_lock.py); the competing load is stopped in any case.
        with (
            contextlib.nullcontext(0.0) if lock_held else measuring(ctx.wait_for_lock, env=env) as waited,
            LoadRun(case.get("load"), case["timeout_s"]) as load,
        ):
            if not lock_held:  # a duet's partner may be running: measured by a later invocation
                simd_bounds.cached_or_measured(ctx.campaign_dir)  # once per host and campaign
            started = time.monotonic()
            if references is None:
                status, out, err, timed_out = run_process(
                    command.argv, command.env, case["timeout_s"], directory, command.affinity
                )
            else:
                member = (command.argv, command.env, command.affinity)
                status, out, err, timed_out, ref_times = conduct.conduct(
                    member, references, turns, case["timeout_s"], directory
                )
            runner_wall = time.monotonic() - started
    except LoadError as error:
        return _failed(
            directory, todo[0], harness | {"reason": f"load: {error}", "exit_status": None, "stderr_tail": ""}
        )
    except conduct.ConductError as error:
        reason = f"conducted trial: {error}"
        return _failed(
            directory, todo[0], harness | {"reason": reason, "exit_status": None, "stderr_tail": ""}
        )
    harness |= {
        "exit_status": status,
        "stderr_tail": _tail(err),
        "runner_wall_s": round(runner_wall, 6),
        "lock_wait_s": round(waited, 3),
    }
    if load.record is not None:
        harness["load"] = load.record
    warm, measured = parse_records(out)
    if load.record is not None and len(measured) == 1:
        load.compute_window(started + runner_wall, measured[0].get("wall_s"))
    reason = None
    if isinstance(timed_out, str):
        reason = f"{_exit_reason(status)}, but {timed_out} (killed after {case['timeout_s']} s)"
    elif timed_out:
        reason = f"timeout after {case['timeout_s']} s"
    elif status != 0:
        reason = _exit_reason(status) + _kernel_message(status, err)
    elif load.problem:
        reason = f"load: {load.problem}"
    elif len(measured) != len(ks):
        reason = (
            "no valid record on stdout"
            if not measured
            else f"{len(measured)} measured records, expected {len(ks)}"
        )
    if reason:
        if command.csv_path is not None:
            command.csv_path.unlink(missing_ok=True)
            harness["counters"] = {"status": "unavailable", "group": case["counter_group"], "reason": reason}
        return _failed(directory, todo[0], harness | {"reason": reason})
    if command.csv_path is not None:
        # One CSV per process: the counts cover all its measured repetitions (and warm-ups).
        harness["counters"] = counters_from_csv(command.csv_path, command.counters)
    new = {}
    for r, (k, record) in enumerate(zip(ks, measured, strict=True)):
        violations = _violations(command.pin, record)
        new[k] = (
            record
            | harness
            | {
                "rep": k,
                "in_process_rep": r,
                "reps_per_process": len(ks),
                "pin": command.pin | {"violations": violations},
                "status": "ok",
                "warmup_wall_s": [w.get("wall_s") for w in warm] if r == 0 else [],
            }
            | (conduct.reference_fields(ref_times, case["warmup"], r) if ref_times else {})
        )
    # A record the rule of sbcore/record_lines.py would not count would be measured again and again.
    unusable = next((why for k in todo if (why := record_lines.field_problem(new[k]))), None)
    if unusable:
        reason = f"the kernel's record is unusable: {unusable}"
        return _failed(directory, todo[0], harness | {"reason": reason})
    # The sampling rule with these repetitions added: the record says why sampling went on or stopped.
    after = sampling.progress(rule, known | new)
    verdict = {"n": after.n, "ci_rel": after.ci_rel, "target_ci": rule.target_ci, "stop": after.stop}
    stored = [probe_detail.split(new[k] | {"sampling": verdict}) for k in todo]
    try:
        written = record_store.store(
            directory,
            [record for record, _ in stored],
            details={record["rep"]: detail for record, detail in stored},
        )
    except record_rows.RowProblem as err:  # stored once per process: it must be the same on every record
        return _failed(directory, todo[0], harness | {"reason": f"the kernel's records are unusable: {err}"})
    records_path = layout.reps_path(ctx.campaign_dir, case["case_id"])
    return {
        "outcome": "ok" if written else "duplicate",
        "reps": todo,
        "path": records_path,
        "record": written[0] if written else None,
        "records": len(written),
    }


def _violations(pin: dict, record: dict) -> list[dict]:
    """Workers seen off their planned CPU (pinned) or outside the allowed set (confined). A user
    program's record also lists every CPU each thread was seen on once placed (placement_seen) and
    says whether its threads were placed one per CPU or only confined to the set (result.place)."""
    seen = record.get("placement_seen") if isinstance(record.get("placement_seen"), list) else None
    placement = seen if seen is not None else record.get("placement")
    if not isinstance(placement, list):
        return []
    result = record.get("result") if isinstance(record.get("result"), dict) else {}
    if pin["cpus"] and result.get("place") == "mask":
        return confinement_violations(pin["cpus"], placement)
    if pin["cpus"]:
        return placement_violations(pin["cpus"], placement)
    if pin.get("confined"):
        return confinement_violations(pin["confined"], placement)
    return []


def run_rep(ctx: Context, case: dict, k: int, env=os.environ, reference: dict | None = None) -> dict:
    """Run the invocation that measures repetition k (conducted with `reference`: run_invocation)."""
    p = k // sampling.case_rule(case).reps_per_process
    return run_invocation(ctx, case, p, env, reference=reference)


def _failed(directory: Path, k: int, fields: dict) -> dict:
    fields = {"status": "failed", **fields}
    path = directory / layout.failed_name(k)
    write_new(path, dump_json(fields))
    return {"outcome": "failed", "reps": [k], "path": path, "reason": fields["reason"]}


def run_case(
    campaign_dir: Path, index: int, rep: int | None = None, env=os.environ, wait_for_lock: bool = True
) -> list[dict]:
    """Sample case `index` until its rule is satisfied (a fixed count or a precision target), or run
    only the invocation that measures repetition `rep`. Stops at the first failed invocation."""
    cases = load_cases(campaign_dir)
    if not 0 <= index < len(cases):
        raise UsageError(f"INDEX {index}: campaign {campaign_dir} has cases 0..{len(cases) - 1}")
    case = cases[index]
    if rep is not None and not 0 <= rep < case["reps"]:
        raise UsageError(f"--rep {rep}: case {index} has reps 0..{case['reps'] - 1}")
    ctx = Context.for_campaign(campaign_dir, wait_for_lock)
    reference = conducted_references(cases).get(case["case_id"])
    if rep is not None:
        return [run_rep(ctx, case, rep, env, reference=reference)]
    results = []
    while True:
        todo = next_invocations(campaign_dir, case)
        if not todo:
            return results
        for p in todo:
            results.append(run_invocation(ctx, case, p, env, reference=reference))
            if results[-1]["outcome"] == "failed":
                return results
