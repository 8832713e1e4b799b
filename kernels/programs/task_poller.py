"""What a running program's threads did, read from /proc while it runs: for every task (thread) of the
process and of the processes it starts (an MPI launcher's ranks), the CPUs it was seen on, the CPUs it
was allowed on, its CPU time and its time waiting for a CPU (schedstat). This is how a program nobody
instrumented gets its placement verified per thread and its per-thread useful time (the POP fallback
without OMPT, docs/own-programs.md).

A thread is sampled every `interval_s` (5 ms by default): a thread that moved between two samples and
back is not seen; a thread that lived less than one interval may be missed.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

INTERVAL_S = 0.005
NS = 1e-9


@dataclass
class Task:
    pid: int
    tid: int
    comm: str = ""
    cpus_seen: list[int] = field(default_factory=list)  # distinct, in the order first seen
    first_cpu: int = -1
    last_cpu: int = -1
    bound_to: int = -1  # the CPU it was bound to (affinity one CPU) in most samples (-1: never bound)
    seen_while_bound: dict[int, list[int]] = field(default_factory=dict)  # bound CPU -> CPUs seen
    bound_samples: dict[int, int] = field(default_factory=dict)  # bound CPU -> samples
    allowed: str = ""  # Cpus_allowed_list when first seen
    allowed_last: str = ""
    cpu_s: float = 0.0  # schedstat: time on a CPU
    runq_s: float = 0.0  # schedstat: time runnable, waiting for a CPU
    samples: int = 0

    def as_dict(self) -> dict:
        return {
            "pid": self.pid,
            "tid": self.tid,
            "comm": self.comm,
            "cpus_seen": self.cpus_seen,
            "bound_to": self.bound_to,
            "cpus_seen_bound": self.seen_while_bound.get(self.bound_to, []),
            "allowed": self.allowed,
            "allowed_last": self.allowed_last,
            "cpu_s": round(self.cpu_s, 6),
            "runq_s": round(self.runq_s, 6),
            "samples": self.samples,
        }


def _read(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _allowed(base: str) -> str:
    text = _read(f"{base}/status") or ""
    for line in text.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


class TaskPoller:
    """Samples the tasks of `pid` and its descendants in a thread of its own until stop()."""

    def __init__(self, pid: int, interval_s: float = INTERVAL_S):
        self.root = pid
        self.interval_s = interval_s
        self.tasks: dict[int, Task] = {}
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="task-poller", daemon=True)

    def __enter__(self) -> TaskPoller:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops sampling (a last sample first, while the process may still be there)."""
        if not self._stop.is_set():
            self._stop.set()
            self._thread.join()

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval_s):
                return

    def _processes(self) -> list[int]:
        found, todo = [], [self.root]
        while todo and len(found) < 4096:
            pid = todo.pop()
            found.append(pid)
            for tid in self._tids(pid):
                children = _read(f"/proc/{pid}/task/{tid}/children") or ""
                todo += [int(c) for c in children.split()]
        return found

    @staticmethod
    def _tids(pid: int) -> list[int]:
        try:
            return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
        except (OSError, ValueError):
            return []

    def sample(self) -> None:
        self.polls += 1
        for pid in self._processes():
            for tid in self._tids(pid):
                base = f"/proc/{pid}/task/{tid}"
                # the affinity before the CPU: a thread seen bound had been moved before its CPU was read
                try:
                    allowed = os.sched_getaffinity(tid)
                except OSError:
                    allowed = None
                stat = _read(f"{base}/stat")
                if not stat or ")" not in stat:
                    continue
                head, _, rest = stat.rpartition(")")
                fields = rest.split()
                if len(fields) < 37 or fields[0] in ("Z", "X"):
                    continue
                task = self.tasks.get(tid)
                if task is None:
                    task = self.tasks[tid] = Task(pid, tid, head.partition("(")[2][:32])
                    task.allowed = _allowed(base)
                cpu = int(fields[36])  # field 39 of stat: the CPU it last ran on
                if cpu not in task.cpus_seen:
                    task.cpus_seen.append(cpu)
                if task.first_cpu < 0:
                    task.first_cpu = cpu
                task.last_cpu = cpu
                sched = (_read(f"{base}/schedstat") or "").split()
                if len(sched) >= 2:
                    task.cpu_s, task.runq_s = int(sched[0]) * NS, int(sched[1]) * NS
                task.samples += 1
                if allowed is not None and len(allowed) == 1:
                    bound = next(iter(allowed))
                    seen = task.seen_while_bound.setdefault(bound, [])
                    if cpu not in seen:
                        seen.append(cpu)
                    task.bound_samples[bound] = task.bound_samples.get(bound, 0) + 1
                    task.bound_to = max(task.bound_samples, key=task.bound_samples.get)
                if self.polls % 20 == 1 or self._stop.is_set():
                    task.allowed_last = _allowed(base)

    def placed_cpus(self, task: Task) -> list[int]:
        """The CPUs a thread ran on once placed: while bound to the CPU it was bound to longest (a
        runtime binds its threads after the process started; a program may move a thread for a moment
        and back, as the kernels' own probe does), else, never bound, every CPU it was seen on. A thread
        bound to the wrong CPU is seen there: the check against the plan catches it."""
        return task.seen_while_bound[task.bound_to] if task.bound_to >= 0 else task.cpus_seen

    # ---- what the record takes from it --------------------------------------------------------------

    def ordered(self) -> list[Task]:
        """Tasks in creation order (process, then thread id)."""
        return sorted(self.tasks.values(), key=lambda t: (t.pid != self.root, t.pid, t.tid))

    def workers(self, count: int, program: str | None = None) -> list[Task]:
        """The `count` tasks that used the most CPU, in creation order: the workers (a main thread that
        only waits in a join is left out when the program has more threads than workers). `program`:
        only the tasks of processes running that executable (an MPI launcher's ranks, not the launcher)."""
        comm = program[:15] if program else None  # the kernel keeps 15 characters of a task's name
        tasks = [t for t in self.tasks.values() if comm is None or t.comm == comm]
        busiest = sorted(tasks, key=lambda t: -t.cpu_s)[:count]
        chosen = {t.tid for t in busiest}
        return [t for t in self.ordered() if t.tid in chosen]

    def runq_wait_s(self) -> float:
        return sum(t.runq_s for t in self.tasks.values())
