"""Report section: speedup and efficiency plots with the Amdahl fits."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded, plot_blocks


def section(result, plots) -> list[Block]:
    b = [
        Block(
            "p",
            "One panel per variant family, shared axes. Bands: 95 % CIs. Dashed: ideal (speedup = "
            "workers); dotted vertical line: the node's cores, shaded beyond. Crosses mark implausible "
            "speedups (above min(workers, cores)).",
        )
    ]
    b += plot_blocks(plots, "scaling")
    models = result.models
    fits = (
        [Block("table", models.drop(columns=["problem"]))]
        if len(models)
        else [Block("p", "No series has >= 3 worker counts within the cores: no fit.")]
    )
    b.append(folded(f"Amdahl fits ({len(models)} series; 1/f bounds the speedup)", fits))
    return b
