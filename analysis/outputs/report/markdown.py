"""report.md: the report's blocks as Markdown text (and the Markdown table any section or document
uses); report.html is rendered from the same Markdown."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block

MAX_ROWS = 40  # longer tables are cut in the report (the CSV has everything)


def fmt_table(df: pd.DataFrame) -> pd.DataFrame:
    out = df.head(MAX_ROWS).copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = out[column].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    return out.astype(object).where(out.notna(), "")


def md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(empty)_\n"
    t = fmt_table(df)
    cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(map(cell, t.columns)) + " |", "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in t.itertuples(index=False)]
    if len(df) > MAX_ROWS:
        lines.append(f"\n_{len(df) - MAX_ROWS} more rows in the CSV._")
    return "\n".join(lines) + "\n"


def kv_frame(pairs: dict) -> pd.DataFrame:
    return pd.DataFrame({"key": list(pairs), "value": [str(v) for v in pairs.values()]})


def block_markdown(block: Block, out_dir) -> str:
    """One block as Markdown (report.md; report.html renders the same text)."""
    if block.kind == "h2":
        return f"## {block.value[1]}\n"
    if block.kind in ("h1", "h3"):
        return "#" * int(block.kind[1]) + " " + str(block.value) + "\n"
    if block.kind == "p":
        return str(block.value) + "\n"
    if block.kind == "ul":
        return "\n".join(f"- {line}" for line in block.value) + "\n"
    if block.kind == "skip":
        return f"_{block.value}_\n"
    if block.kind == "table":
        return md_table(block.value)
    if block.kind == "kv":
        return md_table(kv_frame(block.value))
    if block.kind == "details":
        summary, inner = block.value
        return f"**{summary}**\n\n" + render_md(inner, out_dir)
    if block.kind == "img":
        return f"![{block.value.title}]({block.value.png.relative_to(out_dir)})\n"
    raise ValueError(f"report block of unknown kind {block.kind!r}")


def render_md(blocks: list[Block], out_dir) -> str:
    return "\n".join(block_markdown(block, out_dir) for block in blocks)
