"""Child processes that never outlive the runner.

Kernels, tools and competing load run in their own process group (a timeout kills the group). Two things
make sure none of them survives the runner itself:
- stop_on_signals(): SIGTERM and SIGHUP raise KeyboardInterrupt in the runner, as SIGINT does, so the
  code that waits for a child kills its process group on the way out (runcase.run_process, load.LoadRun);
- spawn(): subprocess.Popen that loses no such stop. A signal that comes while the interpreter runs its
  at-fork hooks right after the fork (logging registers some) raises there, where Python only prints
  "Exception ignored": the runner went on waiting for a kernel that never ends (seen once in about 50
  stops of tests/jobs/test_no_orphans.py). spawn sees that a stop came and raises it after the fork;
- die_with_parent(): in the forked child, before exec, PR_SET_PDEATHSIG = SIGKILL, so even a SIGKILLed
  runner takes its direct children along. The signal follows the *thread* that forked: children are
  started from the runner's main thread only. The kernels set it again for their own children
  (kernels/common/main.c), so mpirun's ranks follow mpirun.
"""

import contextlib
import ctypes
import os
import signal
import subprocess

PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_stops: list[str] = []  # the stop signals received, in order (their names)


def _interrupt(signum, _frame):
    _stops.append(signal.Signals(signum).name)
    raise KeyboardInterrupt(_stops[-1])


def spawn(argv, **popen) -> subprocess.Popen:
    """subprocess.Popen(argv, **popen); if a stop signal came while the child was being started (its
    KeyboardInterrupt swallowed by an at-fork hook), the child (its group with process_group=0) is
    killed and reaped and the stop raised here."""
    before = len(_stops)
    proc = subprocess.Popen(argv, **popen)
    if len(_stops) == before:
        return proc
    with contextlib.suppress(ProcessLookupError):
        if popen.get("process_group") == 0:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    proc.wait()
    raise KeyboardInterrupt(_stops[-1])


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the runner like Ctrl-C: children are killed, finished records kept."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _interrupt)


def die_with_parent(signum: int = signal.SIGKILL, then=None):
    """A preexec_fn: the child gets `signum` when the runner's main thread ends, then runs `then()`.
    If the runner died between fork and prctl, the child exits at once."""
    parent = os.getpid()

    def prepare():
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        if then is not None:
            then()

    return prepare
