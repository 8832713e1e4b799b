"""Competing load as part of a case: a `stress-ng --cpu` process group started before a kernel invocation
and stopped after it, with its CPUs, intensity, nice value and scheduling policy from the experiment, and
its own CPU time measured so the record says how much CPU the load actually got.

Config (experiment top level, one table per named profile; a sweep's `load` axis names them or "none"):

    [load.one-hog]
    workers = 1          # stress-ng --cpu N (CPU hogs)
    intensity = 100      # --cpu-load, percent of each hog's time it tries to be busy
    cpus = [1]           # affinity of the whole load (omitted: the OS places it)
    nice = 0             # nice value of the load
    policy = "other"     # other | batch | idle | fifo:P | rr:P
    method = "int64"     # --cpu-method (a fixed one: the default cycles through all)
    settle_s = 0.2       # head start before the kernel starts

No load process outlives its invocation: the load runs in its own process group, is stopped with SIGTERM
then SIGKILL of the whole group (also when the kernel crashes, times out or the runner is interrupted),
and dies with the runner (PR_SET_PDEATHSIG) and after its own `--timeout` in any case.
"""

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from typing import Annotated

import msgspec
import numpy
from msgspec import Meta

from jobs.config_fields import axis, integer, number
from sbcore.child import die_with_parent, spawn

DEFAULTS = ("workers", "intensity", "nice", "policy", "method", "settle_s")  # each profile has these
NONE = "none"
POLICY = re.compile(r"\A(?:(other|batch|idle)|(fifo|rr):([1-9][0-9]?))\Z")
POLICY_WORDS = "must be other, batch, idle, fifo:P or rr:P (P 1..99)"
OS_POLICY = {
    "other": os.SCHED_OTHER,
    "batch": os.SCHED_BATCH,
    "idle": os.SCHED_IDLE,
    "fifo": os.SCHED_FIFO,
    "rr": os.SCHED_RR,
}
METHOD = re.compile(r"\A[a-z0-9_]+\Z")
METHOD_WORDS = "must be a stress-ng --cpu-method name"
STOP_GRACE_S = 5.0
SAMPLE_S = 0.01  # how often the load's CPU time is sampled, to cut out the kernel's compute window
MIN_WINDOW_SAMPLES = 10
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class LoadError(Exception):
    """The load could not run as configured (start refused, stress-ng missing or died early)."""


# ---- configuration -------------------------------------------------------------------------------------


class LoadProfile(msgspec.Struct, forbid_unknown_fields=True):
    """One [load.<name>] table."""

    workers: integer(1) = 1
    intensity: integer(1, 100, "a percentage: 1..100") = 100
    nice: integer(-20, 19, "must be an integer -20..19") = 0
    policy: Annotated[str, Meta(pattern=POLICY.pattern, extra={"problem": POLICY_WORDS})] = "other"
    method: Annotated[str, Meta(pattern=METHOD.pattern, extra={"problem": METHOD_WORDS})] = "int64"
    settle_s: number({"problem": "must be a number of seconds 0..60"}, ge=0, le=60) = 0.2
    cpus: axis(integer(0)) | None = None  # None: the OS places the load


Profiles = Annotated[dict[str, LoadProfile], Meta(extra={"type": "must be tables [load.<name>]"})]


def check_profiles(check, raw) -> dict:
    """The [load.<name>] tables with defaults filled in; errors name file, key and value (config_decode)."""
    return profiles(check, check.decode(raw, Profiles, "load"))


def profiles(check, tables: dict[str, LoadProfile]) -> dict:
    """Decoded [load.<name>] tables as the profiles a case carries: every setting, CPUs sorted."""
    found = {}
    for name, table in tables.items():
        if name == NONE:
            check.fail(f"load.{name}", table, f"'{NONE}' means no load and cannot be defined")
        profile = {key: getattr(table, key) for key in DEFAULTS}
        if table.cpus is not None:
            profile["cpus"] = sorted(set(table.cpus))
        found[name] = profile | {"name": name}
    return found


def check_axis(check, values: list, where: str, profiles: dict) -> None:
    for i, value in enumerate(values):
        if value != NONE and value not in profiles:
            known = ", ".join([NONE, *profiles])
            check.fail(f"{where}[{i}]", value, f"unknown load profile (known: {known})")


def check_fits_node(check, profile: dict, where: str, node: str, hwthreads: int) -> None:
    """A pinned load must name CPUs the node has (checked when planning, per node type)."""
    for cpu in profile.get("cpus", []):
        if cpu >= hwthreads:
            check.fail(
                f"load.{profile['name']}.cpus",
                profile["cpus"],
                f"node type {node} has CPUs 0..{hwthreads - 1}",
            )


# ---- running -------------------------------------------------------------------------------------------


def command(profile: dict, timeout_s: float) -> list[str]:
    # Its own time limit too: should everything else fail, the load still ends by itself.
    limit = int(timeout_s + profile["settle_s"] + 2 * STOP_GRACE_S) + 1
    return [
        "stress-ng", "--cpu", str(profile["workers"]), "--cpu-load", str(profile["intensity"]),
        "--cpu-method", profile["method"], "--timeout", f"{limit}s", "--quiet",
    ]  # fmt: skip


def _prepare_child(profile: dict, report_fd: int):
    """Runs in the forked child before exec: affinity, nice, policy (inherited by stress-ng's workers).
    A refusal is written to report_fd, which exec would close, and the child exits."""

    def prepare():
        step = "start"
        try:
            if "cpus" in profile:
                step = f"affinity to CPUs {profile['cpus']}"
                os.sched_setaffinity(0, profile["cpus"])
            step = f"nice {profile['nice']}"
            os.setpriority(os.PRIO_PROCESS, 0, profile["nice"])
            name, _, prio = profile["policy"].partition(":")
            step = f"policy {profile['policy']}"
            os.sched_setscheduler(0, OS_POLICY[name], os.sched_param(int(prio or 0)))
        except OSError as err:
            os.write(report_fd, f"{step} refused: {err.strerror}".encode())
            os._exit(126)

    return prepare


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU time of every live process in process group `pgid` (from /proc/<pid>/stat)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                text = fh.read().decode(errors="replace")
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        # after "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def on_cpu_ns(pids: list[int]) -> int:
    """Nanoseconds the tasks have run (first field of /proc/<pid>/schedstat; stress-ng's CPU workers are
    single-threaded processes); vanished tasks count 0."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/schedstat", "rb") as fh:
            total += int(fh.read().split()[0])
    return total


class Sampler(threading.Thread):
    """(time, on-CPU ns of the load) every SAMPLE_S, so the load's CPU time inside the kernel's compute
    region can be read afterwards; the process list is re-read until all hogs have been forked."""

    def __init__(self, pgid: int, expected: int):
        super().__init__(daemon=True)
        self.pgid, self.expected = pgid, expected
        self.samples: list[tuple[float, int]] = []
        self.halt = threading.Event()
        self.pids: list[int] = []

    def run(self) -> None:
        while not self.halt.wait(SAMPLE_S):
            if len(self.pids) < self.expected:
                self.pids = group_pids(self.pgid)
            self.samples.append((time.monotonic(), on_cpu_ns(self.pids)))

    def cpu_between(self, t0: float, t1: float) -> float | None:
        """CPU seconds of the load between monotonic times t0 and t1 (interpolated), None if not covered."""
        if len(self.samples) < 2 or t0 < self.samples[0][0] or t1 <= t0:
            return None
        times = [t for t, _ in self.samples]
        ns = [n for _, n in self.samples]
        at = lambda t: float(numpy.interp(t, times, ns))  # noqa: E731
        return (at(t1) - at(t0)) / 1e9


def group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    text = fh.read().decode(errors="replace")
                if int(text[text.rindex(")") + 2 :].split()[2]) == pgid:
                    pids.append(int(entry.name))
    return pids


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class LoadRun:
    """`with LoadRun(profile, timeout_s) as load:` runs the kernel inside; afterwards `load.record` is
    the record's `load` object and `load.problem` a reason to fail the repetition (or None).
    Entering raises LoadError when the load cannot start; leaving never raises and always stops it."""

    def __init__(self, profile: dict | None, timeout_s: float):
        self.profile = profile
        self.timeout_s = timeout_s
        self.proc = None
        self.record = None
        self.problem = None

    def __enter__(self):
        if self.profile is None:
            return self
        argv = command(self.profile, self.timeout_s)
        read_fd, write_fd = os.pipe()
        try:
            self.proc = spawn(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                # Own process group, same session: a new session would be a new scheduler autogroup,
                # and across autogroups nice values do not compete (see docs/seed-reproductions.md).
                process_group=0,
                preexec_fn=die_with_parent(signal.SIGTERM, _prepare_child(self.profile, write_fd)),  # noqa: PLW1509 (single-threaded runner)
            )
        except OSError as err:
            raise LoadError(f"cannot start {argv[0]}: {err.strerror}") from None
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as report:
            refusal = report.read().decode(errors="replace")  # EOF at exec, or the child's reason
        if refusal:
            self.proc.wait()
            raise LoadError(refusal)
        self.started = time.monotonic()
        # stress-ng's parent only waits; its hogs are the forked workers (plus the parent itself).
        self.sampler = Sampler(self.proc.pid, self.profile["workers"] + 1)
        self.sampler.start()
        time.sleep(self.profile["settle_s"])
        if self.proc.poll() is not None:
            err = self.proc.stderr.read().decode(errors="replace").strip()
            self.proc = None
            raise LoadError(f"stress-ng exited at start: {err.splitlines()[-1] if err else 'no message'}")
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self._stop()
        return False

    def compute_window(self, end: float, wall_s: float) -> None:
        """Adds to the record the CPU time the load got during the kernel's compute region, taken as the
        `wall_s` seconds before `end` (monotonic time the kernel process ended: it exits right after)."""
        # Sampled every SAMPLE_S, a window needs many samples to be read, else the record says nothing.
        if self.record is None or not wall_s or wall_s < MIN_WINDOW_SAMPLES * SAMPLE_S:
            return
        cpu = self.sampler.cpu_between(end - wall_s, end)
        if cpu is None:
            return
        asked = self.profile["workers"] * wall_s * self.profile["intensity"] / 100
        self.record["compute_cpu_s"] = round(cpu, 4)
        self.record["compute_cpu_share"] = round(cpu / asked, 4)

    def _stop(self) -> None:
        proc, pgid = self.proc, self.proc.pid
        self.sampler.halt.set()
        self.sampler.join()
        cpu_s = group_cpu_seconds(pgid)
        wall_s = time.monotonic() - self.started
        died_early = proc.poll() is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_GRACE_S)
        # Whatever is left of the group (a worker stress-ng did not reap) goes too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + STOP_GRACE_S
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.01)
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
        workers = self.profile["workers"]
        self.record = {
            "profile": {k: v for k, v in self.profile.items()},
            "command": command(self.profile, self.timeout_s),
            "pgid": pgid,
            "wall_s": round(wall_s, 6),
            "cpu_s": round(cpu_s, 3),
            # Fraction of the CPU time its hogs asked for (workers x wall x intensity) that they got.
            "cpu_share": round(cpu_s / (workers * wall_s * self.profile["intensity"] / 100), 4)
            if wall_s
            else None,
            "exit_status": proc.returncode,
        }
        if died_early:
            last = err.splitlines()[-1] if err else f"exit status {proc.returncode}"
            self.problem = f"stress-ng ended before the kernel did: {last}"
        elif group_alive(pgid):
            self.problem = f"load process group {pgid} survived SIGKILL"
