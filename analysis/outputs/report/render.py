"""report.md and a self-contained report.html (inline CSS, plots as base64 data URIs, opens offline).

The report leads with what was found and ends with how (Hoefler & Belli's items are all there: base
case with absolute time, method, validity, provenance). Its sections and their order are registered
in analysis/sections; this module only renders them. Both files come from one list of blocks, so they
always say the same thing.
"""

from __future__ import annotations

import base64
import html

import pandas as pd

from analysis.outputs.plots.figure import Plot
from analysis.outputs.report.blocks import Block
from analysis.outputs.report.markdown import MAX_ROWS, fmt_table, kv_frame, render_md
from analysis.outputs.report.sections import SECTIONS
from sbcore.atomic import write_atomic


def build_blocks(result, plots: list[Plot]) -> list[Block]:
    """h1, then per registered section (analysis/sections) an h2 and its blocks; empty sections left out."""
    b: list[Block] = [Block("h1", f"scalebench report: {result.campaign.name}")]
    for section in SECTIONS:
        blocks = section.build(result, plots)
        if blocks:
            b.append(Block("h2", (section.key, section.title)))
            b += blocks
    return b


CSS = """
body{font-family:system-ui,sans-serif;font-size:15px;line-height:1.45;max-width:1250px;margin:1.5em auto;
 padding:0 1em;color:#1a1a1a}
nav{font-size:13px;margin:.3em 0 1em}nav a{margin-right:1em;color:#0a4d8c}
table{border-collapse:collapse;font-size:13px;margin:.4em 0 1.2em}
td,th{border:1px solid #d0d0d0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4}tr:nth-child(even) td{background:#fafbfc}
table.kv td:first-child{font-weight:600;white-space:nowrap}
img{max-width:100%;border:1px solid #ddd;margin:.3em 0}
figure{margin:.5em 0 1.5em}figcaption{font-size:13px;color:#555}
ul.findings li{margin:.25em 0}
details{margin:.3em 0 .8em}summary{cursor:pointer;color:#0a4d8c}
.skip{color:#8a5a00;font-style:italic}
h2{border-bottom:2px solid #345;padding-bottom:.2em;margin-top:1.8em}
h3{margin:1.2em 0 .4em}
"""

# Sets data-images-ok on <body> once every image has decoded (the rendering test reads it).
IMAGE_CHECK = """
<script>
function check(){var imgs=Array.from(document.images);
 var ok=imgs.every(function(i){return i.complete&&i.naturalWidth>0});
 document.body.setAttribute('data-images',imgs.length);
 document.body.setAttribute('data-images-ok',ok?'yes':'no');}
window.addEventListener('load',check);
</script>
"""


def html_table(df: pd.DataFrame, css_class: str = "") -> str:
    if df.empty:
        return "<p><i>(empty)</i></p>"
    classes = [css_class] if css_class else None
    text = fmt_table(df).to_html(index=False, border=0, classes=classes)
    if len(df) > MAX_ROWS:
        text += f"<p><i>{len(df) - MAX_ROWS} more rows in the CSV.</i></p>"
    return text


def html_blocks(blocks: list[Block]) -> list[str]:
    parts = []
    for block in blocks:
        if block.kind == "h2":
            key, title = block.value
            parts.append(f'<h2 id="{html.escape(key)}">{html.escape(title)}</h2>')
        elif block.kind in ("h1", "h3"):
            parts.append(f"<{block.kind}>{html.escape(str(block.value))}</{block.kind}>")
        elif block.kind == "p":
            parts.append(f"<p>{html.escape(str(block.value))}</p>")
        elif block.kind == "ul":
            items = "".join(f"<li>{html.escape(str(line))}</li>" for line in block.value)
            parts.append(f'<ul class="findings">{items}</ul>')
        elif block.kind == "skip":
            parts.append(f'<p class="skip">{html.escape(str(block.value))}</p>')
        elif block.kind == "table":
            parts.append(html_table(block.value))
        elif block.kind == "kv":
            parts.append(html_table(kv_frame(block.value), "kv").replace("<thead>", "<thead hidden>"))
        elif block.kind == "details":
            summary, inner = block.value
            parts.append(f"<details><summary>{html.escape(summary)}</summary>")
            parts += html_blocks(inner)
            parts.append("</details>")
        elif block.kind == "img":
            data = base64.b64encode(block.value.png.read_bytes()).decode()
            title = html.escape(block.value.title)
            image = f'<img alt="{title}" src="data:image/png;base64,{data}">'
            parts.append(f"<figure>{image}<figcaption>{title}</figcaption></figure>")
    return parts


def render_html(blocks: list[Block]) -> str:
    title = html.escape(str(blocks[0].value))
    nav = " ".join(
        f'<a href="#{html.escape(b.value[0])}">{html.escape(b.value[1])}</a>'
        for b in blocks
        if b.kind == "h2"
    )
    body = html_blocks(blocks[:1]) + [f"<nav>{nav}</nav>"] + html_blocks(blocks[1:])
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style>{IMAGE_CHECK}</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


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
