"""One measurer per host: a host-wide lock held while a kernel (and its competing load) runs.

Two runners, or a runner and a Slurm array task, on one host would otherwise measure on the same CPUs
at the same time and both record slowed-down timings. The lock is an flock on LOCK_PATH (node-local
/tmp, or $SCALEBENCH_MEASURE_LOCK): the second measurer waits, saying so once, or with --no-wait
refuses; each record's `lock_wait_s` says how long its invocation waited.

The file is opened without O_CREAT when it exists (fs.protected_regular forbids O_CREAT on another
user's file in a sticky directory such as /tmp, even for root) and created readable by all, so root
and other users share it: flock needs only a read-only descriptor.

The test cluster's emulated nodes share one host, so their array tasks take turns as well. Alternatives
meant to be measured side by side belong in one campaign: one runner interleaves them, one at a time.
"""

import contextlib
import errno
import fcntl
import os
import stat
import sys
import time
from pathlib import Path

from sbcore.errors import EnvironmentProblem

LOCK_ENV = "SCALEBENCH_MEASURE_LOCK"
LOCK_PATH = Path("/tmp/scalebench-measure.lock")


def lock_path(env=os.environ) -> Path:
    return Path(env.get(LOCK_ENV) or LOCK_PATH)


def _open(path: Path) -> int:
    for _ in range(3):
        try:
            return _regular(path, os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW))
        except FileNotFoundError:
            pass
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise EnvironmentProblem(
                    f"{path}: the measurement lock is a symbolic link: refused"
                ) from None
            raise
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue  # created by another measurer meanwhile: open it as it is
        except OSError as err:
            raise EnvironmentProblem(f"{path}: cannot create the measurement lock: {err.strerror}") from None
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o644)  # whatever the umask: other users must be able to open it
        return fd
    raise EnvironmentProblem(f"{path}: cannot open the measurement lock")


def _regular(path: Path, fd: int) -> int:
    """The lock's descriptor when it is a regular file (opened without blocking: a FIFO never hangs the
    runner); refused otherwise. Another user's lock file is shared on purpose (see above)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EnvironmentProblem(
            f"{path}: the measurement lock is not a regular file (a FIFO, device or directory)"
        )
    return fd


@contextlib.contextmanager
def measuring(wait: bool = True, out=sys.stderr, env=os.environ):
    """Hold the host's measurement lock inside the block; yields the seconds spent waiting for it."""
    path = lock_path(env)
    try:
        fd = _open(path)
    except PermissionError as err:
        raise EnvironmentProblem(f"{path}: cannot open the measurement lock: {err.strerror}") from None
    try:
        started = time.monotonic()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise EnvironmentProblem(f"{path}: cannot lock: {err.strerror}") from None
            if not wait:
                raise EnvironmentProblem(
                    f"another scalebench process is measuring on this host (lock {path}); "
                    "try again later, or leave out --no-wait to wait for it"
                ) from None
            print(f"waiting: another scalebench process is measuring on this host (lock {path})", file=out)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - started
    finally:
        os.close(fd)
