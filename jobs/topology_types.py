"""A node's hardware threads as the pin strategies see them (jobs/pinning.py), whoever read them:
likwid-topology (jobs/topology.py) or Linux sysfs (jobs/sysfs_topology.py)."""

from typing import NamedTuple

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
    source: str = "likwid-topology -O"  # what read it: likwid-topology -O or sysfs

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
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Topology":
        return cls(
            tuple(HwThread(**h) for h in data["hwthreads"]), data.get("source", cls._field_defaults["source"])
        )
