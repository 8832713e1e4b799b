"""Atomic file writes: a reader sees the old file, the new file or nothing, never half a file.

Records are measurements: `write_new` refuses to replace an existing file (hard-link semantics, the
O_EXCL of renames), so a record once written is never rewritten, even by two runners racing.
"""

import itertools
import json
import os
from pathlib import Path

from sbcore.errors import EnvironmentProblem

_serial = itertools.count()


def _temp_path(path: Path) -> Path:
    """A name beside `path`, unique per process and call."""
    return path.parent / f".{path.name}.{os.getpid()}.{next(_serial)}.tmp"


def _write_temp(path: Path, data: bytes) -> Path:
    # Created with O_EXCL (what tempfile.mkstemp does; tempfile itself is not imported because every
    # Slurm array task pays for the import).
    tmp = _temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as err:
        raise EnvironmentProblem(f"{path}: cannot write: {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"{path}: cannot write: {err.strerror}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def fsync_dir(directory: Path) -> None:
    """Makes the directory's entries (a file created or renamed in it) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes | str, make_parents: bool = False) -> None:
    """Write (or replace) `path` atomically: temp file in the same directory, fsync, rename.

    make_parents: create missing parent directories first (analysis outputs, created on first use)."""
    path = Path(path)
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    _replace(_write_temp(path, raw), path)


def _replace(tmp: Path, path: Path) -> None:
    """The written and fsynced `tmp` renamed over `path` (removed when that fails), durably."""
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_atomic_by(path: Path, write, make_parents: bool = False) -> None:
    """Like write_atomic, for content too big to hold in memory twice: `write(temp_path)` writes a
    temporary file beside `path` (e.g. a table writer streaming to it; removed when that fails), which
    is then fsynced and renamed over `path`."""
    path = Path(path)
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_path(path)
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _replace(tmp, path)


def write_new(path: Path, data: bytes | str) -> bool:
    """Create `path` atomically with the given content unless it exists; True if this call created it.

    os.link fails with EEXIST instead of replacing, which gives rename-noreplace semantics portably.
    """
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    tmp = _write_temp(path, raw)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def dump_json(obj) -> str:
    return json.dumps(obj, indent=1, sort_keys=False) + "\n"
