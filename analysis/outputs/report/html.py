"""report.html: self-contained (inline CSS, plots as base64 data URIs, opens offline), rendered from the
same Markdown as report.md by markdown-it-py, so emphasis, code and links show as such and never as
raw `**` or backticks. Raw HTML in a block's text is escaped, never passed through.

Only what Markdown has no word for is added around it: the sections' anchors and the navigation, the
folded details, the figures' embedded images and the CSS classes."""

from __future__ import annotations

import base64
import html

from markdown_it import MarkdownIt

from analysis.outputs.report.blocks import Block
from analysis.outputs.report.markdown import block_markdown

MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")

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


def inline(text: str) -> str:
    """One line of Markdown as HTML without a paragraph around it (headings, summaries, captions)."""
    return MARKDOWN.renderInline(str(text))


def block_html(block: Block) -> str:
    if block.kind == "h2":
        key, title = block.value
        return f'<h2 id="{html.escape(key)}">{inline(title)}</h2>'
    if block.kind == "details":
        summary, inner = block.value
        return (
            f"<details><summary>{inline(summary)}</summary>\n"
            + "\n".join(map(block_html, inner))
            + "</details>"
        )
    if block.kind == "img":
        data = base64.b64encode(block.value.png.read_bytes()).decode()
        title = html.escape(block.value.title)
        image = f'<img alt="{title}" src="data:image/png;base64,{data}">'
        return f"<figure>{image}<figcaption>{title}</figcaption></figure>"
    rendered = MARKDOWN.render(block_markdown(block, out_dir=None))
    if block.kind == "ul":
        return rendered.replace("<ul>", '<ul class="findings">', 1)
    if block.kind == "skip":
        return rendered.replace("<p>", '<p class="skip">', 1)
    if block.kind == "kv":
        return rendered.replace("<table>", '<table class="kv">', 1).replace("<thead>", "<thead hidden>", 1)
    return rendered


def render_html(blocks: list[Block]) -> str:
    title = html.escape(str(blocks[0].value))
    nav = " ".join(
        f'<a href="#{html.escape(b.value[0])}">{inline(b.value[1])}</a>' for b in blocks if b.kind == "h2"
    )
    body = [block_html(blocks[0]), f"<nav>{nav}</nav>", *map(block_html, blocks[1:])]
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style>{IMAGE_CHECK}</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
