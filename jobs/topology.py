"""Hardware-thread topology from `likwid-topology -O` (the CSV-ish output).

The `TABLE,Topology` rows are whitespace-padded text, not comma-separated, so they are split on
whitespace. SMT siblings are the hardware threads sharing (socket, core).
"""

import subprocess
from typing import NamedTuple

from sbcore.errors import ScalebenchError

# NamedTuple rather than dataclasses: run-case imports this module, and dataclasses pulls in `inspect`,
# ~8 ms of start-up per Slurm array task.


class HwThread(NamedTuple):
    hwthread: int
    thread: int  # index of this hardware thread within its core (0 = first sibling)
    core: int
    die: int
    socket: int


class Topology(NamedTuple):
    hwthreads: tuple[HwThread, ...]

    @property
    def sockets(self) -> int:
        return len({h.socket for h in self.hwthreads})

    @property
    def cores(self) -> int:
        return len({(h.socket, h.core) for h in self.hwthreads})

    @property
    def threads_per_core(self) -> int:
        return max(h.thread for h in self.hwthreads) + 1

    def siblings(self) -> list[list[int]]:
        groups: dict[tuple[int, int], list[int]] = {}
        for h in self.hwthreads:
            groups.setdefault((h.socket, h.core), []).append(h.hwthread)
        return [sorted(g) for _, g in sorted(groups.items())]

    def to_json(self) -> dict:
        return {
            "sockets": self.sockets,
            "cores": self.cores,
            "threads_per_core": self.threads_per_core,
            "hwthreads": [h._asdict() for h in self.hwthreads],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Topology":
        return cls(tuple(HwThread(**h) for h in data["hwthreads"]))


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
    """This host's topology, read through likwid-topology (what likwid-pin itself will use)."""
    try:
        out = subprocess.run(
            ["likwid-topology", "-O"], capture_output=True, text=True, timeout=60, check=False
        )
    except FileNotFoundError:
        raise ScalebenchError("likwid-topology not found: install the Debian package 'likwid'") from None
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()[-1:] or [""]
        raise ScalebenchError(f"likwid-topology -O failed with exit status {out.returncode}: {tail[0]}")
    return parse_likwid_topology(out.stdout)
