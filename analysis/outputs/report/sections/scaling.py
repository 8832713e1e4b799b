"""Report section: speedup and efficiency plots with the Amdahl fits."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded, plot_blocks
from analysis.stats.models import MIN_POINTS


def section(result, plots) -> list[Block]:
    b = [
        Block(
            "p",
            "One panel per variant family, shared axes. Points and bands: the best estimate of each "
            "speedup and its 95 % CI (paired within trials where the case ran in trials, else the ratio "
            "of median times; the title counts each). Dashed: ideal (speedup = "
            "workers); dotted vertical line: the node's cores, shaded beyond. Crosses mark implausible "
            "speedups (above min(workers, cores)).",
        )
    ]
    b += plot_blocks(plots, "scaling")
    models = result.models
    fits = (
        [Block("table", models.drop(columns=["problem"]))]
        if len(models)
        else [Block("p", f"No series has >= {MIN_POINTS} worker counts within the cores: no fit.")]
    )
    count = (
        f"{len(models)} series"
        if len(models)
        else f"none: no series has {MIN_POINTS} worker counts within the cores"
    )
    b.append(folded(f"Amdahl fits ({count}; 1/f bounds the speedup)", fits))
    return b
