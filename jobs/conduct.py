"""Conducted trials (experiment key `conduct = true`): a family member on more than one CPU is measured
with its family's serial baseline running on each of its CPUs at once, milliseconds before each of its
repetitions, so that its speedup compares times from the same phase of the host (docs/campaigns.md,
"What a pair must share").

The runner starts one *reference* process of the baseline kernel per CPU of the member (pinned to it,
one worker, `--turns`, one warm-up) and the member's own invocation with `--turns`. First every
reference process takes its warm-up turn, all at once; then before each of the member's turns (its
warm-ups included) every reference process takes a turn at once, the conductor waits for all of them,
then gives the member its turn and waits for it. The reference processes are not repetitions of the
baseline case: their times become the member's reference times (`ref_static_s`, the slowest CPU's;
`ref_dynamic_s`, the CPUs' summed speed n / sum(1/t); `ref_cpu_s`, per CPU in the member's CPU order).
A reference process that ends or fails before the trial is over fails the member's invocation with one
line; nothing of it is stored.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from jobs.kernel_output import parse_records
from sbcore.child import die_with_parent, spawn


class ConductError(Exception):
    """The conducted invocation cannot go on (a process ended early, a turn took past the timeout)."""


class Outcome(NamedTuple):
    status: int | None  # the member's exit status
    out: str  # its stdout
    err: str  # its stderr
    timed_out: bool
    ref_times: list[list[float]]  # per reference process (member's CPU order): its measured wall_s


class Side:
    """One process taking turns through --turns (kernels/common/sb_turns.h): `go()` lets it measure one
    repetition, `wait_done(limit)` waits for it. Its stdout and stderr go to files (a pipe could fill
    while it waits for a turn)."""

    def __init__(self, name: str, argv: list[str], env: dict, cwd: Path | None, affinity: list[int] | None):
        self.name = name
        go_r, self._go = os.pipe()
        self._done, done_w = os.pipe()
        # closed by end(), after the conductor has read them
        self.out = tempfile.TemporaryFile()  # noqa: SIM115
        self.err = tempfile.TemporaryFile()  # noqa: SIM115
        preexec = die_with_parent(then=(lambda: os.sched_setaffinity(0, affinity)) if affinity else None)
        try:
            self.proc = spawn(
                [*argv, "--turns", f"{go_r},{done_w}"],
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=self.out,
                stderr=self.err,
                pass_fds=(go_r, done_w),
                process_group=0,
                preexec_fn=preexec,  # noqa: PLW1509 (started from the runner's main thread only)
            )
        except OSError as err:
            self.proc = None
            raise ConductError(f"{name}: cannot start {argv[0]}: {err}") from None
        finally:
            os.close(go_r)
            os.close(done_w)

    def go(self) -> None:
        try:
            os.write(self._go, b"g")
        except BrokenPipeError:
            raise ConductError(f"{self.name} ended before its turn ({self._ended()})") from None

    def wait_done(self, until: float) -> None:
        """Waits for the byte that says its repetition is done, until the monotonic time `until`."""
        left = until - time.monotonic()
        ready, _, _ = select.select([self._done], [], [], max(0.0, left))
        if not ready:
            raise TimeoutError
        if os.read(self._done, 1) != b"d":
            raise ConductError(f"{self.name} ended before its turn was done ({self._ended()})")

    def _ended(self) -> str:
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        tail = [line for line in self.stderr().splitlines() if line.strip()]
        why = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        return why + (f": {tail[-1][:300]}" if tail else "")

    def finish(self, until: float) -> int | None:
        """Closes its turn pipes (a harness waiting for a turn then ends) and waits for it to exit."""
        self._close_pipes()
        try:
            return self.proc.wait(timeout=max(0.1, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        self._close_pipes()
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def end(self) -> None:
        """Kills it if it still runs and drops its output files."""
        self.kill()
        self.out.close()
        self.err.close()

    def _close_pipes(self) -> None:
        for fd in (self._go, self._done):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._go = self._done = -1

    def stdout(self) -> str:
        self.out.seek(0)
        return self.out.read().decode(errors="replace")

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")


def cpus_seen(record: dict) -> set:
    """The CPUs a record's threads were seen on (`placement`: [start_cpu, end_cpu] per thread)."""
    placement = record.get("placement")
    if not isinstance(placement, list):
        return set()
    return {cpu for thread in placement if isinstance(thread, list) for cpu in thread}


def conduct(
    member: tuple[list[str], dict, list[int] | None],
    references: list[tuple[list[str], dict, int]],
    turns: int,
    timeout_s: float,
    cwd: Path | None,
    log=None,
) -> Outcome:
    """Runs the member's invocation (argv, env, affinity; `turns` repetitions, warm-ups included)
    conducted with one reference process per (argv, env, cpu) of `references` (each measuring `turns`
    repetitions after one warm-up: jobs/runcase.py builds them). `log(event)` sees each turn given
    ("ref <i>", "member") in order (tests). A reference process seen on another CPU than its own
    (its records' `placement`) fails the invocation."""
    until = time.monotonic() + timeout_s
    sides: list[Side] = []
    try:
        refs = []
        for i, (argv, env, cpu) in enumerate(references):
            refs.append(Side(f"reference process {i} on CPU {cpu}", argv, env, cwd, [cpu]))
            sides.append(refs[-1])
        argv, env, affinity = member
        main = Side("the member", argv, env, cwd, affinity)
        sides.append(main)
        for step in range(turns + 1):  # the references' warm-up, then one step per member turn
            for i, ref in enumerate(refs):
                ref.go()
                if log:
                    log(f"ref {i}")
            for ref in refs:
                ref.wait_done(until)
            if step == 0:
                continue
            main.go()
            if log:
                log("member")
            main.wait_done(until)
        status = main.finish(until)
        for ref in refs:
            if ref.finish(until) != 0:
                raise ConductError(f"{ref.name} failed at its end ({ref._ended()})")
        walls = []
        for ref, (_, _, cpu) in zip(refs, references, strict=True):
            _, records = parse_records(ref.stdout())
            times = [r.get("wall_s") for r in records]
            if len(times) != turns or not all(isinstance(t, int | float) and t > 0 for t in times):
                raise ConductError(f"{ref.name} wrote {len(times)} usable records, expected {turns}")
            elsewhere = set().union(*(cpus_seen(r) for r in records)) - {cpu}
            if elsewhere:
                raise ConductError(f"{ref.name} was seen on CPU {sorted(elsewhere)}: not its own")
            walls.append(times)
        return Outcome(status, main.stdout(), main.stderr(), False, walls)
    except TimeoutError:
        out = sides[-1].stdout() if sides else ""
        err = sides[-1].stderr() if sides else ""
        return Outcome(None, out, err, True, [])
    finally:
        for side in sides:
            side.end()


def reference_fields(ref_times: list[list[float]], warmups: int, r: int) -> dict:
    """The reference times of the member's measured repetition r (its turn warmups + r)."""
    times = [per_cpu[warmups + r] for per_cpu in ref_times]
    return {
        "ref_static_s": max(times),
        "ref_dynamic_s": len(times) / sum(1.0 / t for t in times),
        "ref_cpu_s": times,
    }
