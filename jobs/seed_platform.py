"""What a reader needs to rerun a seed table on the same software: the facts jobs/seeds.py writes beside
each seed campaign (quiet_gate.json, "platform"), on top of the manifest's commit, compilers, compiler
flags and kernel: the CPU model and the instruction-set flags that matter to our kernels, the OpenMP
runtime the compiler links, and the stress-ng and likwid versions."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

# The /proc/cpuinfo flags that change what our kernels run or measure (SIMD paths, a guest).
CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512vl", "hypervisor", "constant_tsc")


def _first_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0].strip() if out.returncode == 0 and text else None


def cpu(cpuinfo: str) -> dict:
    """The first processor's model name and which of CPU_FLAGS it has, from /proc/cpuinfo's text."""
    first: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        first.setdefault(key.strip(), value.strip())
    flags = set(first.get("flags", "").split())
    return {
        "model": first.get("model name"),
        "family_model": f"family {first['cpu family']} model {first['model']}"
        if "cpu family" in first and "model" in first
        else None,
        "flags": [f for f in CPU_FLAGS if f in flags],
    }


def openmp_runtime(compiler: str = "gcc") -> str | None:
    """The libgomp the compiler links, resolved to its file, with the compiler's version."""
    name = _first_line([compiler, "-print-file-name=libgomp.so"])
    version = _first_line([compiler, "-dumpfullversion"])
    if not name or not os.path.isabs(name):
        return None
    return f"{Path(name).resolve().name} of {compiler} {version}"


def platform_facts() -> dict:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    return {
        "cpu": cpu(cpuinfo),
        "kernel": platform.release(),
        "openmp_runtime": openmp_runtime(),
        "stress_ng": _first_line(["stress-ng", "--version"]),
        "likwid": _first_line(["likwid-pin", "-v"]),
    }
