"""A measured record's machine-state probe as the runner stores it (docs/formats.md): the record keeps
what the analysis reads (each chain's fastest and slowest time, the run-queue wait, the number of CPUs
probed); the per-CPU times, before and after the repetition, go to one line of the case's
probes.jsonl. On a 64-CPU node those times are two fifths of a record's bytes and most of its numbers,
which an analysis of a million records would otherwise parse to read six of them."""

from __future__ import annotations

SIDES = ("before", "after")


def split(record: dict) -> tuple[dict, dict | None]:
    """(the record as stored, its probes.jsonl line or None). A probe without the kernel's own extremes
    (`min_s`, `max_s`: kernels before them) keeps its per-CPU times, which the analysis then reads."""
    probe = record.get("probe")
    if not isinstance(probe, dict) or not any(side in probe for side in SIDES):
        return record, None
    if not (isinstance(probe.get("min_s"), dict) and isinstance(probe.get("max_s"), dict)):
        return record, None
    kept = {key: value for key, value in probe.items() if key not in SIDES}
    cpus = {cpu for side in SIDES for cpu in _cpus(probe.get(side))}
    kept["n_cpus"] = len(cpus) or None
    detail = {"case_id": record.get("case_id"), "rep": record.get("rep")}
    detail |= {side: probe.get(side) for side in SIDES}
    return record | {"probe": kept}, detail


def _cpus(side) -> list:
    cpus = side.get("cpus") if isinstance(side, dict) else None
    return (
        [c for c in cpus if isinstance(c, int) and not isinstance(c, bool)] if isinstance(cpus, list) else []
    )
