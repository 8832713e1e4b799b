"""Provenance of a campaign (manifest.json): what code, tools, machine and load it was measured with."""

import datetime
import hashlib
import os
import platform
import socket
import subprocess
from pathlib import Path

from jobs.binaries import binary_path
from sbcore.commands import on_path
from sbcore.install import source_root

ROOT = source_root()  # the clone, or the one a pip install was made from


def _run(argv: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess | None:
    """The finished command, or None if it could not start or did not finish in time."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=cwd, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _first_line(argv: list[str], cwd: Path = ROOT) -> str | None:
    out = _run(argv, cwd)
    text = (out.stdout or out.stderr).strip() if out else ""
    return text.splitlines()[0].strip() if out and out.returncode == 0 and text else None


def git_state() -> dict:
    commit = _first_line(["git", "rev-parse", "HEAD"])
    out = _run(["git", "status", "--porcelain", "--untracked-files=no"])
    status = out.stdout if out else ""
    return {"commit": commit, "dirty": bool(status.strip()) if commit else None}


def make_flags() -> dict:
    """The compiler flag variables the Makefile fragments define (from make's own database)."""
    done = _run(["make", "-pnq", "--no-print-directory", "-f", "Makefile", ".DEFAULT"])
    if done is None:
        return {}
    out = done.stdout
    flags, from_makefile = {}, False
    for line in out.splitlines():
        # make -p prints "# makefile (from 'kernels/c.mk', line 3)" above each variable a makefile set.
        if line.startswith("# makefile (from"):
            from_makefile = True
            continue
        name, sep, value = line.partition(" := ")
        if not sep:
            name, sep, value = line.partition(" = ")
        if from_makefile and sep and ("FLAGS" in name or name.endswith(("LIBS", "CC", "FC"))):
            flags[name] = value.strip()
        from_makefile = False
    return flags


def cpu_times() -> dict:
    """The aggregate `cpu` line of /proc/stat (jiffies since boot), steal included."""
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"]
    try:
        line = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return {}
    times = dict(zip(names, (int(v) for v in line[1:]), strict=False))
    total = sum(times.get(n, 0) for n in names[:8])
    times["steal_fraction_since_boot"] = times.get("steal", 0) / total if total else None
    return times


def binary_digests(names: list[str]) -> dict:
    digests = {}
    for name in sorted(set(names)):
        path = binary_path(name)
        try:
            digests[name] = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digests[name] = None
    return digests


# Optional tools a campaign may use -> what is unavailable without them (the manifest says which were
# missing when the campaign was planned; the report shows it under provenance).
OPTIONAL_TOOLS = {
    "likwid-perfctr": "hardware counters (counter_group): counters are 'unavailable' in the records",
    "likwid-pin": "pin_tool = 'likwid-pin' (the default harness pinning needs no likwid)",
    "likwid-topology": "likwid's topology reader (the topology is read from sysfs instead)",
    "stress-ng": "competing load ([load.<name>]): such cases fail",
    "mpirun": "local runs of the MPI kernels",
    "sbatch": "scalebench submit",
}


def unavailable_tools() -> dict[str, str]:
    """Optional tools not on PATH -> what that makes unavailable."""
    return {tool: f"not found on PATH: {what}" for tool, what in OPTIONAL_TOOLS.items() if not on_path(tool)}


def collect_manifest(campaign: str, binaries: list[str], topology: dict | None) -> dict:
    return {
        "campaign": campaign,
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": git_state(),
        "hostname": socket.gethostname(),
        "os": {"kernel": platform.release(), "machine": platform.machine()},
        "python": platform.python_version(),
        "compilers": {
            "gcc": _first_line(["gcc", "--version"]),
            "gfortran": _first_line(["gfortran", "--version"]),
            "mpicc": _first_line(["mpicc", "--version"]),
        },
        "flags": make_flags(),
        "tools": {
            "likwid": _first_line(["likwid-pin", "-v"]),
            "slurm": _first_line(["sinfo", "--version"]),
            "mpi": _first_line(["mpirun", "--version"]),
        },
        "kernel_binaries": binary_digests(binaries),
        "topology": topology,
        "load_average": list(os.getloadavg()),
        "cpu_times": cpu_times(),
    }
