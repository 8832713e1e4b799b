"""The report's sections, in reading order: findings first, method and provenance last.

A section is a function (analysis result, list of figure.Plot) -> list of blocks.Block; it gets
its own heading from the title here and is left out when it returns no block. To add a section, write
the function in its own module and add ONE line to SECTIONS where it belongs in the reading order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analysis.outputs.report.sections import (
    checks,
    counters,
    duets,
    efficiency,
    findings,
    image,
    machine_state,
    method,
    micro,
    node_types,
    paired,
    pop_metrics,
    provenance,
    reference,
    scaling,
    scenario,
    variants,
)


@dataclass(frozen=True)
class Section:
    key: str  # anchor in report.html
    title: str
    build: Callable  # (result, plots) -> list[Block]


SECTIONS = [
    Section("findings", "Findings", findings.section),
    Section("node-types", "Node types", node_types.section),
    Section("scenario", "Scheduling scenario and competing load", scenario.section),
    Section("reference", "Published reference", reference.reference_section),
    Section("scaling", "Scaling", scaling.section),
    Section("paired", "Paired speedups (trials)", paired.section),
    Section("duets", "Duets", duets.section),
    Section("variants", "Variants", variants.section),
    Section("pop-metrics", "Where the efficiency goes (POP metrics)", pop_metrics.section),
    Section("counters", "Hardware counters", counters.section),
    Section("vectorisation", efficiency.TITLE, efficiency.efficiency_blocks),
    Section("micro", "Microbenchmarks: OS overhead, timing precision, SMT", micro.micro_blocks),
    Section("image", "Mandelbrot image", image.section),
    Section("machine-state", "Machine state during the measurements", machine_state.section),
    Section("validity", "Validity details", checks.section),
    Section("method", "Method", method.method),
    Section("provenance", "Provenance", provenance.section),
]
