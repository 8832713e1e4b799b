"""Pinning strategies -> CPU lists for likwid-pin, and the check of a record's placement against them.

Worker i is planned on cpus[i mod len(cpus)]: threads beyond the hardware-thread count wrap round-robin.
That is also what likwid-pin does with the list: the main thread (worker 0 in every kernel model) goes
on list[0] and the j-th created thread of the process on list[j mod n]. Both threaded models create
their threads-1 helpers once per process, in worker order (libgomp's team, the pthreads kernels' pool),
so the j-th created thread is worker j in every repetition and no skip mask (-s) is needed.
"""

from jobs.topology import Topology
from sbcore.harness_env import PIN_CPUS

STRATEGIES = ("none", "compact", "cores", "scatter", "smt-siblings")


def strategy_order(strategy: str, topo: Topology) -> list[int]:
    """Every available hardware thread, in the order the strategy hands them out."""
    hw = topo.hwthreads
    # Position of each core within its socket, so scatter can alternate sockets core by core.
    core_rank = {}
    for socket in sorted({h.socket for h in hw}):
        cores = sorted({h.core for h in hw if h.socket == socket})
        core_rank.update({(socket, c): r for r, c in enumerate(cores)})
    if strategy == "compact":
        key = lambda h: (h.socket, core_rank[h.socket, h.core], h.thread)  # noqa: E731
    elif strategy == "cores":
        key = lambda h: (h.thread, h.socket, core_rank[h.socket, h.core])  # noqa: E731
    elif strategy == "scatter":
        key = lambda h: (h.thread, core_rank[h.socket, h.core], h.socket)  # noqa: E731
    elif strategy == "smt-siblings":
        # Pairs of siblings core by core (threads 0+1 of every core), then the next pair (SMT4).
        key = lambda h: (h.thread // 2, h.socket, core_rank[h.socket, h.core], h.thread)  # noqa: E731
    else:
        raise ValueError(f"unknown pin strategy {strategy!r}")
    return [h.hwthread for h in sorted(hw, key=key)]


def pin_cpus(strategy: str, threads: int, topo: Topology) -> list[int]:
    """The planned CPU list: the first `threads` CPUs of the strategy's order (all of them if more)."""
    order = strategy_order(strategy, topo)
    return order[: min(threads, len(order))]


def planned_cpu(cpus: list[int], worker: int) -> int:
    return cpus[worker % len(cpus)]


def placement_violations(cpus: list[int], placement: list) -> list[dict]:
    """Workers whose sampled CPUs (start, end) differ from the planned one."""
    violations = []
    for worker, seen in enumerate(placement):
        planned = planned_cpu(cpus, worker)
        if any(c != planned for c in seen):
            violations.append({"worker": worker, "planned": planned, "seen": list(seen)})
    return violations


def confinement_violations(cpus: list[int], placement: list) -> list[dict]:
    """Workers seen outside the CPU set a confined (not pinned) process may use."""
    allowed = set(cpus)
    return [
        {"worker": worker, "planned": list(cpus), "seen": list(seen)}
        for worker, seen in enumerate(placement)
        if any(c not in allowed for c in seen)
    ]


def format_cpulist(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


def harness_env(cpus: list[int], threads: int, env: dict) -> dict:
    """The variables with which the kernel pins its workers itself (pin_tool = harness)."""
    pinned = {HARNESS_ENV: format_cpulist(cpus)}
    if "OMP_NUM_THREADS" not in env:
        pinned["OMP_NUM_THREADS"] = str(threads)
    return pinned


# ---- pinning without the likwid-pin front end -------------------------------------------------------
# likwid-pin computes the CPU list, sets a few environment variables and execs the program; its own
# start-up (topology and timer initialisation) costs about a second on some virtual machines. Setting
# the same environment directly pins exactly as it does, in milliseconds: with more than one CPU the
# LD_PRELOAD'ed liblikwidpin pins the main thread to the list's first CPU and the n-th created thread
# to entry n (LIKWID_PIN holds entries 2..n then entry 1, as likwid-pin writes it); with one CPU
# likwid-pin pins the process itself, which the runner does with sched_setaffinity in the child.

PIN_TOOLS = ("harness", "preload", "likwid-pin")
# Why a likwid tool is missing, for the messages of cases and probes that need one.
LIKWID_MISSING = (
    "not found: likwid is not installed or its module not loaded "
    "(pin_tool = 'harness', the default, needs no likwid)"
)
# harness: the kernel pins each worker itself from SB_PIN_CPUS (kernels/common/sb_pin.h), the same
# list and worker -> entry mapping as below; no library is preloaded and no thread creation intercepted.
HARNESS_ENV = PIN_CPUS
LIKWID_LUA = ("/usr/share/lua/likwid.lua", "/usr/local/share/lua/likwid.lua")
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/local/lib64")


def find_pin_library(lua_files=LIKWID_LUA, lib_dirs=LIB_DIRS) -> str | None:
    """likwid's own liblikwidpin path: the `pinlibpath` likwid-pin's Lua module uses, else the first
    liblikwidpin.so* in the standard library directories; None if likwid is not installed."""
    import re
    from pathlib import Path

    for lua in lua_files:
        try:
            text = Path(lua).read_text(errors="replace")
        except OSError:
            continue
        match = re.search(r'pinlibpath\s*=\s*"([^"]+)"', text)
        if match and Path(match.group(1)).is_file():
            return match.group(1)
    for directory in lib_dirs:
        found = sorted(Path(directory).glob("liblikwidpin.so*"))
        if found:
            return str(found[0])
    return None


def preload_env(cpus: list[int], threads: int, library: str | None, env: dict) -> dict:
    """The variables likwid-pin -q would set for this CPU list (on top of `env`)."""
    pinned = {
        "LIKWID_SILENT": "true",
        "KMP_AFFINITY": "disabled",
        "LIKWID_HWTHREADS": format_cpulist(cpus),
        "LIKWID_PIN": format_cpulist(cpus[1:] + cpus[:1]) if len(cpus) > 1 else str(cpus[0]),
    }
    if "OMP_NUM_THREADS" not in env:
        pinned["OMP_NUM_THREADS"] = str(threads)
    if "CILK_NWORKERS" not in env:
        pinned["CILK_NWORKERS"] = str(threads)
    if len(cpus) > 1:
        if library is None:
            raise ValueError(f"pin_tool preload: liblikwidpin {LIKWID_MISSING}")
        pinned["LD_PRELOAD"] = ":".join(filter(None, [library, env.get("LD_PRELOAD")]))
        libdir = library.rsplit("/", 1)[0]
        ldpath = env.get("LD_LIBRARY_PATH")
        if not ldpath:
            pinned["LD_LIBRARY_PATH"] = libdir
        elif libdir not in ldpath.split(":"):
            pinned["LD_LIBRARY_PATH"] = f"{libdir}:{ldpath}"
    return pinned
