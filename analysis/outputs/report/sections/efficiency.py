"""Report section: per-cycle throughput per core and % of the bound of the inner loop that ran."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block
from analysis.stats.efficiency import clock_by_path

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
    b.append(Block("p", clock_sentence(clock_by_path(table))))
    shown = table.drop(columns=["case_id", "limited_by"]).rename(columns={"pct_of_bound": "% of bound"})
    b.append(Block("table", shown))
    if table["oversubscribed"].any():
        b.append(
            Block("p", "Oversubscribed cases (more workers than cores) share cores: per-core figures drop.")
        )
    return b


def clock_sentence(clocks) -> str:
    """Which clock each inner loop ran at, per core design, and any drop below the scalar loop's."""
    parts = []
    for uarch, group in clocks.groupby("uarch", sort=True):
        paths = []
        for row in group.sort_values("inner_path").itertuples():
            text = f"{row.inner_path} {row.clock_ghz:.2f} GHz"
            # NaN (no scalar cases on that core) compares False
            if row.inner_path != "scalar" and row.below_scalar_pct >= 2.0:
                text += f" ({row.below_scalar_pct:.0f} % below the scalar loop's)"
            paths.append(text)
        parts.append(f"{uarch}: " + ", ".join(paths))
    return (
        "Clock each inner loop ran at (median of its cases; the AVX-512 path's is read beside 512-bit "
        "code, so a core that lowers its clock for it shows the drop here): " + "; ".join(parts) + "."
    )
