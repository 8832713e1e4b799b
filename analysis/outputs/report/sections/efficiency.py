"""Report section: per-cycle throughput per core and % of the bound of the inner loop that ran."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block

TITLE = "Vectorisation: work per cycle and % of bound"


def efficiency_blocks(result, plots) -> list[Block]:
    """The registered report section (its heading, TITLE, comes from sections/__init__.py)."""
    table = getattr(result, "efficiency", None)
    b = []
    if table is None or not len(table):
        b.append(Block("p", "No record carries a measured core clock (clock_ghz): no per-cycle figures."))
        return b
    b.append(
        Block(
            "p",
            "Median useful iterations (Mandelbrot) or samples (π) per core cycle, with the clock each "
            "kernel measured around its compute region, against the bound of the inner loop that ran "
            "on this core design (what limits each bound: efficiency.csv and docs/simd-bounds.md). "
            "Empty bound = no bound known for that core.",
        )
    )
    shown = table.drop(columns=["case_id", "limited_by"]).rename(columns={"pct_of_bound": "% of bound"})
    b.append(Block("table", shown))
    if table["oversubscribed"].any():
        b.append(
            Block("p", "Oversubscribed cases (more workers than cores) share cores: per-core figures drop.")
        )
    return b
