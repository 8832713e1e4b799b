"""Child processes that never outlive the runner.

Kernels, tools and competing load run in their own process group (a timeout kills the group). Two things
make sure none of them survives the runner itself:
- stop_on_signals(): SIGTERM and SIGHUP raise KeyboardInterrupt in the runner, as SIGINT does, so the
  code that waits for a child kills its process group on the way out (runcase.run_process, load.LoadRun);
- die_with_parent(): in the forked child, before exec, PR_SET_PDEATHSIG = SIGKILL, so even a SIGKILLed
  runner takes its direct children along. The signal follows the *thread* that forked: children are
  started from the runner's main thread only. The kernels set it again for their own children
  (kernels/common/main.c), so mpirun's ranks follow mpirun.
"""

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


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
