"""Hardware-thread topology from Linux sysfs (/sys/devices/system/cpu/cpu<N>/topology/), for hosts
without likwid: the same hardware threads, SMT thread index, core, die and socket that
`likwid-topology -O` lists, so every pin strategy gives the same CPU lists (jobs/pinning.py).

A hardware thread is available, as in likwid's table, when it is online and in this process's CPU
affinity mask (a Slurm allocation or taskset narrows it). SMT thread index = position of the CPU in its
core's sorted sibling list. Core and socket numbers are the kernel's (core_id, physical_package_id);
pinning orders cores within their socket, so numbering gaps change no list.
"""

import os
import re
from pathlib import Path

from jobs.topology_types import HwThread, Topology
from sbcore.errors import ScalebenchError

SYSFS_CPU = Path("/sys/devices/system/cpu")
CPU_DIR = re.compile(r"^cpu(\d+)$")


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as err:
        raise ScalebenchError(f"{path}: cannot read the CPU topology ({err.strerror})") from None


def _online(cpu_dir: Path) -> bool:
    """cpu0 often has no `online` file (it cannot go offline); offline CPUs may lack topology/."""
    flag = cpu_dir / "online"
    return (not flag.exists() or _read(flag) == "1") and (cpu_dir / "topology").is_dir()


def read_sysfs_topology(root: Path = SYSFS_CPU, allowed: set[int] | None = None) -> Topology:
    """The available hardware threads under `root`; `allowed` defaults to this process's affinity
    mask when `root` is the real sysfs, else to every online CPU."""
    root = Path(root)
    if allowed is None and root == SYSFS_CPU:
        allowed = set(os.sched_getaffinity(0))
    try:
        numbers = sorted(int(m.group(1)) for p in root.iterdir() if (m := CPU_DIR.match(p.name)))
    except OSError as err:
        raise ScalebenchError(f"{root}: cannot list the CPUs ({err.strerror})") from None
    threads = []
    for n in numbers:
        cpu_dir = root / f"cpu{n}"
        if not _online(cpu_dir) or (allowed is not None and n not in allowed):
            continue
        topo = cpu_dir / "topology"
        try:
            siblings = parse_cpulist(_read(topo / "thread_siblings_list"))
            core, socket = int(_read(topo / "core_id")), int(_read(topo / "physical_package_id"))
            die = int(_read(topo / "die_id")) if (topo / "die_id").exists() else 0
        except ValueError as err:
            raise ScalebenchError(f"{topo}: malformed topology file ({err})") from None
        thread = sorted(siblings).index(n) if n in siblings else 0
        threads.append(HwThread(n, thread, core, max(die, 0), max(socket, 0)))
    if not threads:
        raise ScalebenchError(f"{root}: no available hardware threads")
    return Topology(tuple(threads), "sysfs")
