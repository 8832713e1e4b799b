"""This host's hardware-thread topology: from `likwid-topology -O` (what likwid-pin itself uses) when
likwid is there, else from Linux sysfs (jobs/sysfs_topology.py), which gives the same CPU lists.

The `TABLE,Topology` rows of likwid-topology are whitespace-padded text, not comma-separated, so they
are split on whitespace. SMT siblings are the hardware threads sharing (socket, core).
"""

import subprocess

from jobs.sysfs_topology import read_sysfs_topology
from jobs.topology_types import HwThread, Topology
from sbcore.commands import on_path
from sbcore.errors import ScalebenchError

__all__ = ["HwThread", "Topology", "detect_topology", "parse_likwid_topology"]


def parse_likwid_topology(text: str, source: str = "likwid-topology -O") -> Topology:
    """The available hardware threads listed in the `TABLE,Topology,<n>` block."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("TABLE,Topology,")), None)
    if start is None:
        raise ScalebenchError(f"{source}: no 'TABLE,Topology' block in the output")
    try:
        count = int(lines[start].split(",")[2])
    except (IndexError, ValueError):
        raise ScalebenchError(f"{source}: malformed table header {lines[start]!r}") from None
    header = lines[start + 1].split() if start + 1 < len(lines) else []
    wanted = ["HWThread", "Thread", "Core", "Die", "Socket", "Available"]
    if header[:6] != wanted:
        raise ScalebenchError(f"{source}: unexpected topology columns {header!r}, expected {wanted}")
    rows = lines[start + 2 : start + 2 + count]
    if len(rows) != count:
        raise ScalebenchError(f"{source}: topology table truncated ({len(rows)} of {count} rows)")
    threads = []
    for row in rows:
        fields = row.replace(",", " ").split()
        try:
            numbers = [int(f) for f in fields[:5]]
        except ValueError:
            raise ScalebenchError(f"{source}: malformed topology row {row!r}") from None
        if len(fields) >= 6 and fields[5] == "*":
            threads.append(HwThread(*numbers))
    if not threads:
        raise ScalebenchError(f"{source}: no available hardware threads")
    return Topology(tuple(threads))


def detect_topology() -> Topology:
    """This host's topology: through likwid-topology when it is on PATH, else from sysfs."""
    if not on_path("likwid-topology"):
        return read_sysfs_topology()
    try:
        out = subprocess.run(
            ["likwid-topology", "-O"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as err:
        raise ScalebenchError(f"likwid-topology -O: cannot run it ({err.strerror})") from None
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()[-1:] or [""]
        raise ScalebenchError(f"likwid-topology -O failed with exit status {out.returncode}: {tail[0]}")
    return parse_likwid_topology(out.stdout)
