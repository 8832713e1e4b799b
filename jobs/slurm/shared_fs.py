"""Whether a results directory can be seen by the compute nodes: array tasks write their records there,
so it must be on a shared file system (home, project, scratch: NFS, Lustre, GPFS, ...), not on a
node-local one (/tmp, /var/tmp, /dev/shm, tmpfs)."""

import os
from pathlib import Path

IN_MEMORY = {"tmpfs", "ramfs", "devtmpfs"}
NODE_LOCAL_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run")
SHARED_TYPES = (
    "nfs",
    "nfs4",
    "lustre",
    "gpfs",
    "beegfs",
    "cifs",
    "smb3",
    "ceph",
    "cephfs",
    "panfs",
    "wekafs",
)
MOUNTS = Path("/proc/self/mounts")


def mount_of(path: Path, mounts_text: str) -> tuple[str, str]:
    """(mount point, file-system type) of the longest mount point containing `path`."""
    best = ("/", "")
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = str(path) == point or str(path).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, fields[2])
    return best


def node_local_reason(path: Path, mounts_text: str | None = None) -> str | None:
    """Why the compute nodes probably cannot see `path`, or None when nothing says so."""
    if mounts_text is None:
        try:
            mounts_text = MOUNTS.read_text()
        except OSError:
            return None
    path = Path(os.path.realpath(path))
    point, fstype = mount_of(path, mounts_text)
    if fstype in IN_MEMORY:
        return f"{path} is on {fstype} (mounted at {point}): memory of this node only"
    if fstype.startswith(SHARED_TYPES) or fstype.startswith("fuse."):
        return None
    for local in NODE_LOCAL_DIRS:
        if path == Path(local) or Path(local) in path.parents:
            return f"{path} is under {local}, which is local to each node on clusters"
    return None


def shared_fs_warning(results: Path) -> str | None:
    """The warning `submit` prints for a results directory the compute nodes may not see."""
    reason = node_local_reason(results)
    if reason is None:
        return None
    return (
        f"submit: warning: results directory {reason}; array tasks on other nodes cannot write there: "
        "use --results-dir on a shared file system (home, project or scratch)"
    )
