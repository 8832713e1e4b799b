"""A user's own program as a scalebench kernel: build/bin/program-run (written by kernels/programs.mk)
speaks the kernels' protocol, so the runner measures a program exactly as it measures a kernel
(pinning, the host lock, trials, sampling, Slurm arrays) and its records land in raw/<case_id>/.

    program-run --spec JSON [--threads N] --reps R --warmup W [--check-args]

The spec is the case's `program` field, written by `plan` (sbcore/program_spec.py, docs/own-programs.md):
the argument vector with its placeholders already replaced, its environment and working directory, how
the worker count reaches it, how its threads are placed, the figure of merit, the result value and the
POP method. For each run this process

1. places the threads where the runner's pin list (SB_PIN_CPUS) says: OMP_PLACES/OMP_PROC_BIND for
   OpenMP, an affinity mask for other programs, nothing for a program placed by its own launcher;
2. times the machine-state probe on those CPUs (build/bin/machine-probe) right before and after;
3. starts the program (never through a shell), and while it runs samples its threads from /proc
   (kernels/programs/task_poller.py): the CPUs each ran on, its CPU time and run-queue wait;
4. with the OMPT method, loads scalebench's OMPT tool and reads its report;
5. prints one scalebench.run/1 record: the figure of merit as the time the analysis uses (wall_s), the
   process's wall time, the placement per thread, the per-worker useful time and its method.

A program that fails, hangs (the runner's case timeout) or whose output has no figure fails the run
with one line on stderr (the last), after the tail of its output; its whole output is kept in the
case directory. Exit status: 0 ok, 1 the program or its figure failed, 2 bad arguments.
"""

from __future__ import annotations

import datetime
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script by build/bin/program-run: the repository is on PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.programs.task_poller import TaskPoller
from sbcore import case_shape, program_spec
from sbcore.child import die_with_parent
from sbcore.errors import ScalebenchError, UsageError
from sbcore.harness_env import PIN_CPUS
from sbcore.install import bin_dir
from sbcore.mpi_launch import mpi_launcher
from sbcore.mpi_launch import root_env as mpi_root_env
from sbcore.record_fields import SCHEMA

NAME = "program-run"
OUTPUT_TAIL_CHARS = 2000
PROBE = "machine-probe"


def usage() -> str:
    return "\n".join(
        [
            f"Usage: {NAME} --spec JSON [--threads N] --reps R --warmup W [--check-args]",
            "scalebench kernel: a user's own program (docs/own-programs.md); prints one JSON record per run",
            "on stdout (schema scalebench.run/1). The spec is written by `scalebench plan` into the case.",
            "",
            "Options:",
            "  --spec JSON        the case's program: argv, env, cwd, workers, place, figure, result, pop",
            "  --threads N        worker threads per process, 1..4096 (default 1)",
            "  --reps K           measured runs, 1..1000000 (default 1)",
            "  --warmup W         warm-up runs before them, 0..1000000 (default 0)",
            "  --check-args       check the spec and that the program can be started here, then exit",
            "  -h, --help         this text",
            "",
            "Exit status: 0 ok, 1 the program failed or printed no figure (one line on stderr, last),",
            "2 bad arguments (one line on stderr).",
        ]
    )


def parse_args(argv: list[str]) -> tuple[dict, int, int, int, bool]:
    """(spec, threads, reps, warmup, check only)."""
    values = {"spec": None, "threads": "1", "reps": "1", "warmup": "0"}
    bounds = {"threads": (1, 4096), "reps": (1, 10**6), "warmup": (0, 10**6)}
    check_only = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--check-args":
            check_only = True
            i += 1
            continue
        key = arg[2:] if arg.startswith("--") else None
        if key not in values:
            raise UsageError(f"unknown option '{arg}' (see --help)")
        if i + 1 >= len(argv):
            raise UsageError(f"--{key}: missing value")
        values[key] = argv[i + 1]
        i += 2
    numbers = {}
    for key, (low, high) in bounds.items():
        text = values[key]
        if not text.isdigit() or not low <= int(text) <= high:
            raise UsageError(f"--{key}: '{text}' is not an integer in {low}..{high}")
        numbers[key] = int(text)
    if values["spec"] is None:
        raise UsageError("--spec: missing (the case's program, written by `scalebench plan`)")
    try:
        spec = json.loads(values["spec"])
    except ValueError as err:
        raise UsageError(f"--spec: not JSON: {err}") from None
    check_spec(spec)
    return spec, numbers["threads"], numbers["reps"], numbers["warmup"], check_only


def check_spec(spec) -> None:
    """The spec's shape (plan wrote it; a hand-edited case is checked again here)."""
    if not isinstance(spec, dict):
        raise UsageError("--spec: not a JSON object")
    argv = spec.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and "\0" not in a for a in argv):
        raise UsageError("--spec: argv must be a non-empty list of strings")
    if spec.get("runtime") not in program_spec.RUNTIMES:
        raise UsageError(
            f"--spec: runtime {spec.get('runtime')!r} is not one of {', '.join(program_spec.RUNTIMES)}"
        )
    if spec.get("place") not in program_spec.PLACES:
        raise UsageError(
            f"--spec: place {spec.get('place')!r} is not one of {', '.join(program_spec.PLACES)}"
        )
    if spec.get("pop") not in program_spec.POP_METHODS:
        raise UsageError(
            f"--spec: pop {spec.get('pop')!r} is not one of {', '.join(program_spec.POP_METHODS)}"
        )
    env = spec.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise UsageError("--spec: env must be a table of strings")
    for key in ("figure", "result"):
        table = spec.get(key)
        if table is None or (key == "figure" and table.get("source") == "wall"):
            continue
        try:
            program_spec.check_extractor(table, key)
        except program_spec.SpecError as err:
            raise UsageError(f"--spec: {err}") from None


def executable(spec: dict) -> str:
    """The program's path: argv[0] as given when it holds a slash (relative to the working directory),
    else found on PATH (the spec's PATH when it sets one)."""
    import shutil

    name = spec["argv"][0]
    cwd = spec.get("cwd") or os.getcwd()
    if "/" in name:
        path = Path(cwd, name)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ScalebenchError(f"program {name!r}: not an executable file (working directory {cwd})")
        return str(path)
    found = shutil.which(name, path=spec.get("env", {}).get("PATH", os.environ.get("PATH")))
    if found is None:
        raise ScalebenchError(f"program {name!r}: not found on PATH on {socket.gethostname()}")
    return found


def pinned_cpus() -> list[int] | None:
    listed = os.environ.get(PIN_CPUS)
    if not listed:
        return None
    try:
        return [int(c) for c in listed.split(",")]
    except ValueError:
        raise UsageError(f"{PIN_CPUS}={listed!r}: not a CPU list") from None


def child_env(spec: dict, threads: int, cpus: list[int] | None, ompt_out: Path | None, program: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != PIN_CPUS}
    env |= spec.get("env", {})
    if spec.get("workers_env"):
        env[spec["workers_env"]] = str(threads)
    if cpus and spec["place"] == "openmp":
        # one place per planned CPU, worker g on place g: the harness's own mapping (sbcore/harness_env.py)
        env["OMP_PLACES"] = ",".join(f"{{{c}}}" for c in cpus)
        env["OMP_PROC_BIND"] = "close"
    if ompt_out is not None:
        from kernels.programs import ompt_report

        mode = "native" if spec["pop"] == "ompt" else "libomp"
        env |= ompt_report.ompt_env(mode, ompt_out, Path(program) if mode == "libomp" else None)
    return env


class Probe:
    """build/bin/machine-probe on the case's CPUs: the 'before' sample on start, 'after' on finish."""

    def __init__(self, cpus: list[int]):
        self.proc = subprocess.Popen(
            [str(bin_dir() / PROBE), ",".join(map(str, cpus))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=die_with_parent(),
        )
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            raise ScalebenchError(f"{PROBE}: did not start (build it with `make kernels`)")

    def finish(self, runq_wait_s: float | None) -> dict | None:
        out, _ = self.proc.communicate(f"{runq_wait_s if runq_wait_s is not None else -1}\n", timeout=60)
        try:
            return json.loads(out)["probe"]
        except (ValueError, KeyError, TypeError):
            return None


def keep_output(stdout: str, stderr: str) -> str:
    """The program's whole output, kept in the case directory (the runner's working directory) under a
    new name; returns the name."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    fd, name = tempfile.mkstemp(prefix=f"program-output-{stamp}-", suffix=".txt", dir=".")
    with os.fdopen(fd, "w") as fh:
        fh.write(f"--- stdout\n{stdout}\n--- stderr\n{stderr}\n")
    return os.path.basename(name)


def _fail(why: str, stdout: str, stderr: str) -> ScalebenchError:
    kept = keep_output(stdout, stderr)
    tail = (stdout + stderr)[-OUTPUT_TAIL_CHARS:]
    print(tail, file=sys.stderr)
    return ScalebenchError(f"{why} (its output: {kept})")


def _kill_tree(poller: TaskPoller, proc: subprocess.Popen) -> None:
    """SIGKILL the program and every process of it the sampler saw (an MPI launcher's ranks)."""
    import contextlib
    import signal

    for pid in {proc.pid, *(t.pid for t in poller.tasks.values())}:
        with contextlib.suppress(OSError):  # gone already
            os.kill(pid, signal.SIGKILL)


def run_once(spec: dict, threads: int, rep: int, warmup: bool, deadline: float | None = None) -> dict:
    """One run of the program and its record; `deadline` (time.monotonic()): kill it then and fail the
    run keeping its output (before the runner's own time limit kills this process and the output)."""
    program = executable(spec)
    cpus = pinned_cpus()
    probe_cpus = cpus or sorted(os.sched_getaffinity(0))
    ompt_out = None
    if spec["pop"] in ("ompt", "libomp"):
        fd, name = tempfile.mkstemp(prefix=".ompt-", suffix=".json", dir=".")
        os.close(fd)
        os.unlink(name)
        ompt_out = Path(name).resolve()
    env = child_env(spec, threads, cpus, ompt_out, program)
    # The process starts confined to the planned CPUs (an OpenMP runtime drops the places outside its
    # initial mask); OpenMP binds each thread to its place itself, the main thread at its first region.
    affinity = set(cpus) if cpus and spec["place"] in ("openmp", "mask") else None
    argv = [program, *spec["argv"][1:]]
    if spec["runtime"] == "mpi":
        ranks = spec.get("ranks", 1)
        argv = mpi_launcher(ranks, threads, os.cpu_count() or 1) + argv
        env |= mpi_root_env()
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    probe = Probe(probe_cpus)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    preexec = die_with_parent(then=(lambda: os.sched_setaffinity(0, affinity)) if affinity else None)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=spec.get("cwd") or None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            preexec_fn=preexec,  # noqa: PLW1509 (this process has no other threads yet)
        )
    except OSError as err:
        probe.finish(None)
        raise ScalebenchError(f"program {argv[0]!r}: cannot start: {err}") from None
    with TaskPoller(proc.pid) as poller:
        try:
            stdout, stderr = proc.communicate(timeout=None if deadline is None else max(0.0, deadline - t0))
        except subprocess.TimeoutExpired:
            _kill_tree(poller, proc)
            stdout, stderr = proc.communicate()
            probe.finish(None)
            raise _fail(
                f"program {Path(argv[0]).name}: still running after {time.monotonic() - t0:.1f} s, near the "
                f"case's timeout_s ({spec.get('timeout_s')} s for the whole invocation): killed",
                stdout,
                stderr,
            ) from None
        wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    probe_record = probe.finish(poller.runq_wait_s())
    if proc.returncode != 0:
        status = proc.returncode
        why = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        raise _fail(f"program {Path(argv[0]).name}: {why}", stdout, stderr)
    try:
        figure = program_spec.figure_value(spec["figure"], stdout, stderr, wall)
        result_text, checksum = program_spec.result_checksum(spec.get("result"), stdout, stderr)
    except program_spec.SpecError as err:
        raise _fail(f"program {Path(argv[0]).name}: {err}", stdout, stderr) from None
    record = {
        "schema": SCHEMA,
        "kernel": spec["name"],
        "lang": "program",
        "model": program_spec.RUNTIMES[spec["runtime"]],
        "schedule": "none",
        "sync": "none",
        "inner": "scalar",
        "threads": threads,
        "ranks": spec.get("ranks", 1),
        "params": spec.get("params", {}),
        "rep": rep,
        "warmup": warmup,
        "wall_s": figure["seconds"],
        "process_wall_s": wall,
        "setup_s": 0.0,
        "cpu_user_s": max(0.0, after.ru_utime - before.ru_utime),
        "cpu_sys_s": max(0.0, after.ru_stime - before.ru_stime),
        "ctx_voluntary": max(0, after.ru_nvcsw - before.ru_nvcsw),
        "ctx_involuntary": max(0, after.ru_nivcsw - before.ru_nivcsw),
        "os_threads": len(poller.tasks) or 1,
        "work": 0,
        "checksum": checksum,
        "timer_res_s": time.get_clock_info("monotonic").resolution,
        "build": {"compiler": "user program", "flags": "", "fp_contract": "default"},
        "host": socket.gethostname(),
        "started": started,
        "scaling": spec.get("scaling", "strong"),
    }
    # MPI: the ranks, never the launcher; under srun they are children of Slurm's step daemon, out of
    # this process's sight (no placement or per-worker times then: docs/own-programs.md)
    mpi = spec["runtime"] == "mpi"
    count = case_shape.workers(threads, spec.get("ranks", 1))
    ranks = poller.workers(count, program=Path(program).name) if mpi else []
    workers = ranks if mpi else (poller.workers(threads) or poller.ordered()[:1])
    record["placement"] = [[t.first_cpu, t.last_cpu] for t in workers if t.cpus_seen] or [[-1, -1]]
    record["placement_seen"] = [poller.placed_cpus(t) for t in workers if t.cpus_seen]
    record |= pop_fields(spec, workers, wall, ompt_out)
    if probe_record is not None:
        record["probe"] = probe_record
    record["result"] = {
        "figure": {k: figure[k] for k in ("value", "unit", "better", "source")},
        "result_value": result_text,
        "argv": argv,
        "exit_status": proc.returncode,
        "place": spec["place"] if cpus else "none",
        "tasks": [t.as_dict() for t in poller.ordered()[:256]],
        "polls": poller.polls,
    }
    return record


def pop_fields(spec: dict, workers: list, wall: float, ompt_out: Path | None) -> dict:
    """Per-worker useful time for the POP metrics and the method that gave it: the OMPT tool's report,
    else each worker thread's CPU time from /proc (docs/own-programs.md); the POP wall time is the
    process's (the figure of merit may be a part of it)."""
    fields = {"pop_wall_s": wall}
    if ompt_out is not None:
        from kernels.programs import ompt_report

        try:
            report = ompt_report.read_ompt_report(ompt_out)
        except ompt_report.OmptReportError as err:
            raise ScalebenchError(f"OMPT method: {err}") from None
        finally:
            ompt_out.unlink(missing_ok=True)
        return fields | report | {"pop_method": f"ompt ({spec['pop']})"}
    if spec["pop"] == "none" or not workers:
        return fields | {
            "pop_method": "none" if workers or spec["pop"] == "none" else "none (workers not seen)"
        }
    useful = [min(t.cpu_s, wall) for t in workers]
    return fields | {
        "pop_method": "task-cpu",
        "worker_useful_mean_s": sum(useful) / len(useful),
        "worker_useful_max_s": max(useful),
        "worker_cpu_mean_s": sum(useful) / len(useful),
    }


def check_here(spec: dict) -> None:
    """What --check-args verifies on this node: the program can be found and started, and the OMPT
    method's conditions hold (the tool built; for libomp, the program runs on the stand-in)."""
    program = executable(spec)
    cwd = spec.get("cwd")
    if cwd and not Path(cwd).is_dir():
        raise ScalebenchError(f"cwd {cwd!r}: no such directory")
    if spec["pop"] in ("ompt", "libomp"):
        from kernels.programs import ompt_report

        try:
            ompt_report.ompt_env(
                "native" if spec["pop"] == "ompt" else "libomp", Path("/dev/null"), Path(program)
            )
        except ompt_report.OmptUnavailable as err:
            raise ScalebenchError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "-h" in argv or "--help" in argv:
        print(usage())
        return 0
    try:
        spec, threads, reps, warmup, check_only = parse_args(argv)
    except UsageError as err:
        print(f"{NAME}: {err}", file=sys.stderr)
        return 2
    try:
        if check_only:
            check_here(spec)
            return 0
        # The runner kills this process at the case's timeout_s, output and all: stop the program first.
        limit = spec.get("timeout_s")
        deadline = time.monotonic() + max(0.5, 0.95 * limit - 1.0) if limit else None
        for k in range(warmup + reps):
            record = run_once(
                spec, threads, rep=k - warmup if k >= warmup else k, warmup=k < warmup, deadline=deadline
            )
            print(json.dumps(record), flush=True)
    except ScalebenchError as err:
        print(f"{NAME}: {err}", file=sys.stderr)
        return 2 if check_only else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
