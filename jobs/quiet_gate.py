"""The quiet gate: measure only when the machine is quiet. Before a study is measured, the 1-minute
load average must be below a threshold and the CPUs' busy share over a short window (from /proc/stat:
time not idle, over every CPU) below another; otherwise it polls until both hold or the stated wait is
over, then stops with exit 3 (EnvironmentProblem) and one line saying what it saw. What it saw is kept
(`QuietCheck`) so that the tables can state the load they were measured under.

The busy share counts every process, so a campaign's own leftovers (a competing load that did not stop)
would keep the gate shut too: that is wanted.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from sbcore.errors import EnvironmentProblem

LOAD_BELOW = 1.5  # default 1-minute load average bound: on a 2-CPU machine, less than 3/4 of it busy
BUSY_BELOW = 0.25  # default CPU busy share over BUSY_WINDOW_S, all CPUs together
BUSY_WINDOW_S = 2.0
POLL_S = 15.0
MAX_WAIT_S = 600.0


@dataclass
class QuietCheck:
    """What the gate saw when it let a study through (or that it was skipped)."""

    checked: str  # UTC time
    load_1min: float
    busy_share: float | None
    load_below: float
    busy_below: float
    waited_s: float
    skipped: bool = False  # --no-wait-for-quiet: measured whatever the load

    def as_dict(self) -> dict:
        return asdict(self)


def now_utc() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cpu_busy_share(window_s: float = BUSY_WINDOW_S, read=None, sleep=time.sleep) -> float:
    """The share of CPU time not idle (idle and iowait) over `window_s`, all CPUs of /proc/stat's
    first line together."""
    read = read or (lambda: open("/proc/stat").readline())  # noqa: SIM115 (one line, closed by GC)

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in read().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields[:8]), idle

    total0, idle0 = sample()
    sleep(window_s)
    total1, idle1 = sample()
    total = total1 - total0
    return 0.0 if total <= 0 else 1 - (idle1 - idle0) / total


def wait_for_quiet(
    load_below: float = LOAD_BELOW,
    busy_below: float = BUSY_BELOW,
    max_wait_s: float = MAX_WAIT_S,
    poll_s: float = POLL_S,
    loadavg: Callable[[], tuple] = os.getloadavg,
    busy: Callable[[], float] = cpu_busy_share,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = lambda line: None,
) -> QuietCheck:
    """Returns when the machine is quiet; raises EnvironmentProblem after `max_wait_s` when it is not."""
    start = clock()
    while True:
        load = float(loadavg()[0])
        share = busy() if load < load_below else None
        if share is not None and share < busy_below:
            return QuietCheck(now_utc(), load, share, load_below, busy_below, round(clock() - start, 1))
        waited = clock() - start
        seen = f"1-minute load average {load:.2f}" + ("" if share is None else f", CPUs {share:.0%} busy")
        if waited + poll_s > max_wait_s:
            raise EnvironmentProblem(
                f"machine not quiet after waiting {waited:.0f} s: {seen} (need load < {load_below:g} "
                f"and CPUs < {busy_below:.0%} busy; --load-below, --max-wait, or --no-wait-for-quiet)"
            )
        say(f"waiting for a quiet machine: {seen}")
        sleep(poll_s)


def skipped() -> QuietCheck:
    """The gate skipped (tests, or a user who accepts the load): the load is still recorded."""
    return QuietCheck(now_utc(), float(os.getloadavg()[0]), None, float("nan"), float("nan"), 0.0, True)
