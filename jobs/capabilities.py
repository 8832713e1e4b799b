"""`scalebench probe`: the node's capabilities — what this node offers for measurement: topology, SMT
siblings, whether hardware counters work (and why not), and whether likwid-pin's pinning actually holds.
(Not the machine-state probe timed around every repetition: jobs/probe_detail.py and the kernels'
harness, kernels/common/sb_probe.c.)"""

import json
import os
import subprocess

from jobs.binaries import binary_path
from jobs.counter_groups import node_groups
from jobs.hostinfo import probe_counters
from jobs.pinning import HARNESS_ENV, find_pin_library, format_cpulist
from jobs.topology import Topology, detect_topology


def pinning_holds(topo: Topology) -> list[str]:
    """Pin a process to each of the first and last hardware thread and read back its allowed CPUs."""
    lines = []
    for cpu in sorted({topo.hwthreads[0].hwthread, topo.hwthreads[-1].hwthread}):
        argv = ["likwid-pin", "-q", "-c", str(cpu), "grep", "Cpus_allowed_list", "/proc/self/status"]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            lines.append(f"  likwid-pin -c {cpu}: cannot run ({err})")
            continue
        seen = out.stdout.split(":", 1)[-1].strip()
        verdict = "holds" if seen == str(cpu) else f"DOES NOT HOLD (allowed: {seen or out.stderr.strip()})"
        lines.append(f"  likwid-pin -c {cpu}: {verdict}")
    return lines


def harness_pinning_holds(topo: Topology) -> str:
    """Run an OpenMP kernel with the harness's pin list (first and last hardware thread, reversed) and
    compare where its two workers ran."""
    cpus = sorted({topo.hwthreads[0].hwthread, topo.hwthreads[-1].hwthread}, reverse=True)
    argv = [str(binary_path("mcpi-c-omp")), "--threads", str(len(cpus)), "--samples", "1000"]
    env = os.environ | {HARNESS_ENV: format_cpulist(cpus), "OMP_NUM_THREADS": str(len(cpus))}
    label = f"  harness, {HARNESS_ENV}={format_cpulist(cpus)}"
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False, env=env)
        placement = json.loads(out.stdout.splitlines()[0])["placement"] if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError, KeyError) as err:
        return f"{label}: cannot run ({err})"
    if placement is None:
        return f"{label}: cannot run ({out.stderr.strip() or f'exit {out.returncode}'})"
    want = [[c, c] for c in cpus]
    return f"{label}: " + ("holds" if placement == want else f"DOES NOT HOLD (workers ran on {placement})")


def report() -> str:
    topo = detect_topology()
    counters = probe_counters()
    lines = [
        f"topology: {topo.sockets} socket(s), {topo.cores} core(s), "
        f"{topo.threads_per_core} thread(s) per core, "
        f"{len(topo.hwthreads)} hardware threads",
        "SMT siblings (per core): " + "  ".join(format_cpulist(group) for group in topo.siblings()),
        f"counters: {'available' if counters['available'] else 'unavailable'} — {counters['reason']}",
        f"counter groups (likwid-perfctr -a): {', '.join(node_groups() or ['cannot say'])}",
        "pinning:",
        harness_pinning_holds(topo),
        f"  likwid's pinning library (pin_tool = preload): {find_pin_library() or 'not found'}",
        *pinning_holds(topo),
    ]
    return "\n".join(lines)
