"""Safe access to a campaign's files: a campaign directory is a trust boundary (docs/trust.md).

Like ssh's StrictModes, a results or campaign directory that another user can write to is refused
(`check_trusted`, exit 3): its files could be anyone's. Group-writable directories are accepted when the
group is declared trusted ($SCALEBENCH_TRUST_GROUP=1, or `--trust-group`), the case of team directories
on shared file systems. Inside a campaign no symbolic link is ever followed: every file is opened
relative to the campaign directory, one component at a time, with O_NOFOLLOW (`open_in`); every
directory on the way must be this user's and not writable by others, and the file itself a regular
file, checked before anything blocks on it (opened with O_NONBLOCK, then fstat: a FIFO never hangs a
reader). Every command that reads or appends to a campaign's files goes through this module.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sbcore.errors import EnvironmentProblem

TRUST_GROUP_ENV = "SCALEBENCH_TRUST_GROUP"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeFile(EnvironmentProblem):
    """A campaign file or directory that is a link, not a regular file, or writable by another user."""


def group_trusted(env=os.environ) -> bool:
    """Whether group-writable results and campaign directories are accepted (a team's shared group)."""
    return env.get(TRUST_GROUP_ENV, "") not in ("", "0")


def mode_problem(st: os.stat_result, env=os.environ) -> str | None:
    """Why a directory (or file) with this stat cannot be trusted, or None: writable by every user, or
    by its group unless the group is trusted; owned by another user unless the group is trusted and the
    directory is one of this user's groups' (a team directory on a shared file system)."""
    mode = stat.S_IMODE(st.st_mode)
    trusted = group_trusted(env)
    if st.st_mode & stat.S_IWOTH and not stat.S_ISLNK(st.st_mode):
        return f"writable by every user (mode {mode:04o})"
    if st.st_mode & stat.S_IWGRP and not trusted:
        return (
            f"writable by its group (mode {mode:04o}); if the group is a trusted team, set "
            f"{TRUST_GROUP_ENV}=1 or give --trust-group (docs/trust.md)"
        )
    if st.st_uid != os.geteuid() and not (trusted and _my_group(st.st_gid)):
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    return None


def _my_group(gid: int) -> bool:
    return gid == os.getegid() or gid in os.getgroups()


def check_trusted(path: Path, what: str = "directory", sticky_ok: bool = False) -> None:
    """Refuse (exit 3) a directory that is a link, not a directory, or that another user may write to;
    `sticky_ok`: a world-writable directory with the sticky bit (/tmp) is fine, as there no user can
    rename or remove another's entries (for the directory holding a campaign)."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError as err:
        raise EnvironmentProblem(f"{path}: cannot use the {what}: {err.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(f"{path}: the {what} is a symbolic link; give the directory it points to")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFile(f"{path}: the {what} is not a directory")
    if sticky_ok and st.st_mode & stat.S_ISVTX:
        return
    problem = mode_problem(st)
    if problem:
        raise UnsafeFile(f"{path}: refusing the {what}: {problem}")


def _parts(relpath: str | os.PathLike) -> list[str]:
    parts = [p for p in str(relpath).split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafeFile(f"{relpath}: not a path inside the campaign")
    return parts


def _open_dir(campaign: Path, parents: list[str], create: bool) -> int:
    """A descriptor of campaign/parents..., each component this user's, not a link, not writable by
    others; missing ones are created (mode 0755) when `create`."""
    try:
        fd = os.open(campaign, _DIR_FLAGS)
    except OSError as err:
        raise _problem(campaign, err) from None
    where = Path(campaign)
    try:
        _check_dir_fd(fd, where)
        for name in parents:
            where = where / name
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as err:
                    raise _problem(where, err) from None
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as err:
                raise _problem(where, err) from None
            os.close(fd)
            fd = child
            _check_dir_fd(fd, where)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_dir_fd(fd: int, where: Path) -> None:
    problem = mode_problem(os.fstat(fd))
    if problem:
        raise UnsafeFile(f"{where}: refusing the campaign directory: {problem}")


def _problem(path: Path, err: OSError) -> OSError | UnsafeFile:
    """A link where a directory or file was expected is refused; other errors are passed on."""
    import errno

    if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return UnsafeFile(f"{path}: a symbolic link or not a directory inside the campaign: refused")
    err.filename = str(path)
    return err


def make_dir(campaign: Path, relpath: str | os.PathLike) -> Path:
    """campaign/relpath as a directory of this user's (created when missing), not a link, not writable
    by others; its path."""
    os.close(_open_dir(Path(campaign), _parts(relpath), create=True))
    return Path(campaign, relpath)


def open_in(campaign: Path, relpath: str | os.PathLike, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor of the regular file campaign/relpath, opened without following any link and
    without blocking on a FIFO or device; with O_CREAT its parent directories are created too.
    Raises FileNotFoundError when it (or a directory on the way) is missing without O_CREAT, UnsafeFile
    (exit 3) for a link, a non-regular file or a directory another user can write to."""
    parts = _parts(relpath)
    dir_fd = _open_dir(Path(campaign), parts[:-1], bool(flags & os.O_CREAT))
    path = Path(campaign, *parts)
    try:
        try:
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        except OSError as err:
            raise _problem(path, err) from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{path}: not a regular file (a FIFO, device or directory): refused")
        problem = mode_problem(st)
        if problem:
            raise UnsafeFile(f"{path}: refusing the file: {problem}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_at(name: str, dir_fd: int) -> int:
    """A descriptor of the regular file `name` in the open directory `dir_fd` (no link followed, no
    FIFO waited on); an OSError naming why otherwise (for readers that report a file and go on)."""
    import errno

    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file: not read")
    os.set_blocking(fd, True)
    return fd


def read_bytes(campaign: Path, relpath: str | os.PathLike, missing: bytes | None = None) -> bytes:
    """The whole file campaign/relpath (see open_in); `missing` when it does not exist (when given)."""
    try:
        fd = open_in(campaign, relpath)
    except FileNotFoundError:
        if missing is None:
            raise
        return missing
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    parts, offset = [], 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        offset += len(chunk)


def read_path(path: Path, missing: bytes | None = None) -> bytes:
    """read_bytes of a campaign file given by its whole path (split: the campaign is the directory
    above raw/, else the file's own directory)."""
    campaign, relpath = split(path)
    return read_bytes(campaign, relpath, missing)


def refuse_unless_regular(path: Path) -> None:
    """Refuse (UnsafeFile) a path that exists and is not a regular file (a link, FIFO, directory): what
    a command is about to append to is checked before anything is measured for it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"{path}: not a regular file (a link, FIFO or directory): refused, nothing run")


def is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (not a link, FIFO or directory): lstat only, no open."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def split(path: Path) -> tuple[Path, str]:
    """(campaign directory, path inside it) for a path under a campaign's raw/ directory or one of its
    top-level files: the campaign is the parent of `raw` (else the file's directory)."""
    path = Path(path)
    parts = path.parts
    if "raw" in parts:
        i = len(parts) - 1 - parts[::-1].index("raw")
        return Path(*parts[:i]), "/".join(parts[i:])
    return path.parent, path.name
