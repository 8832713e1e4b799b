"""report.md and report.html (markdown.py, html.py) from one list of blocks.

The report leads with what was found and ends with how (Hoefler & Belli's items are all there: base
case with absolute time, method, validity, provenance). Its sections and their order are registered
in sections/__init__.py; this module only puts them together. Both files come from one list of
blocks, so they always say the same thing.
"""

from __future__ import annotations

from analysis.outputs.plots.figure import Plot
from analysis.outputs.report.blocks import Block
from analysis.outputs.report.html import render_html
from analysis.outputs.report.markdown import render_md
from analysis.outputs.report.sections import SECTIONS
from sbcore.atomic import write_atomic


def build_blocks(result, plots: list[Plot]) -> list[Block]:
    """h1, then per registered section an h2 and its blocks; empty sections left out."""
    b: list[Block] = [Block("h1", f"scalebench report: {result.campaign.name}")]
    for section in SECTIONS:
        blocks = section.build(result, plots)
        if blocks:
            b.append(Block("h2", (section.key, section.title)))
            b += blocks
    return b


def write_report(result, plots: list[Plot], formats: tuple[str, ...]) -> dict[str, object]:
    blocks = build_blocks(result, plots)
    written = {}
    if "md" in formats:
        path = result.out_dir / "report.md"
        write_atomic(path, render_md(blocks, result.out_dir), make_parents=True)
        written["md"] = path
    if "html" in formats:
        path = result.out_dir / "report.html"
        write_atomic(path, render_html(blocks), make_parents=True)
        written["html"] = path
    return written
