"""The machine-state probe's columns of one record (probe_columns): each fixed-work chain's fastest and
slowest time over the case's CPUs, the run-queue wait and the number of CPUs probed. Records of today's
kernels carry each chain's extremes themselves; older ones only the per-CPU times, from which they are
derived here. analysis/records/stored_frame.py reads the same columns of stored records at once.
"""

from __future__ import annotations

from collections.abc import Hashable

# The probe's fixed-work chains (docs/formats.md): two latency chains, an FP-throughput and an
# integer-ALU throughput block, timed per CPU, and the cache-line round trip between the case's first CPU
# and each other one.
LATENCY_CHAINS = ("int_mul", "fp_lat")
TPUT_CHAINS = ("fp_tput",)
ALU_CHAINS = ("int_alu",)
TRANSFER_CHAINS = ("xfer",)
CHAINS = LATENCY_CHAINS + TPUT_CHAINS + ALU_CHAINS + TRANSFER_CHAINS


def probe_columns(probe) -> dict:
    """Flat columns of one record's probe: fastest and slowest time of each chain over its CPUs,
    before and after, the run-queue wait and the number of CPUs probed (all None without a probe). The
    fastest and slowest times are the kernel's own (`min_s`, `max_s`) where it wrote a number, the
    number of CPUs the runner's (`n_cpus`: it stores the per-CPU times in probes.jsonl); else both are
    derived from the per-CPU times in the record (records of older kernels and runners)."""
    row = {f"probe_{c}_{m}_s": None for c in CHAINS for m in ("min", "max")}
    row |= {"probe_runq_wait_s": None, "probe_cpus": None}
    if not isinstance(probe, dict):
        return row
    # a side, or a list in it, of another shape than documented counts as not measured
    samples = [side if isinstance(side, dict) else {} for side in (probe.get("before"), probe.get("after"))]
    for chain in CHAINS:
        times = [t for s in samples for t in _listed(s, f"{chain}_s") if _is_number(t)]
        for name, pick in (("min", min), ("max", max)):
            own = probe.get(f"{name}_s")
            own = own.get(chain) if isinstance(own, dict) else None
            row[f"probe_{chain}_{name}_s"] = own if _is_number(own) else pick(times, default=None)
    cpus = {c for s in samples for c in _listed(s, "cpus") if isinstance(c, Hashable)}
    counted = probe.get("n_cpus")
    counted = counted if isinstance(counted, int) and not isinstance(counted, bool) and counted > 0 else None
    row["probe_cpus"] = counted or len(cpus) or None
    row["probe_runq_wait_s"] = probe.get("runq_wait_s")
    return row


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _listed(side: dict, key: str) -> list:
    value = side.get(key)
    return value if isinstance(value, list) else []
