"""Report section: the Mandelbrot image a kernel dumped."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, plot_blocks


def section(result, plots) -> list[Block]:
    return plot_blocks(plots, "image")
