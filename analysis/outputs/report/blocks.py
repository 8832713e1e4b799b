"""The building blocks of the report: what a report section returns, rendered to both md and html.

kinds: h3 | p | ul (list of str) | table (DataFrame) | kv (dict: a key/value table) | img (Plot) |
skip (a plot that was not drawn, and why) | details (value = (summary text, list of blocks): folded in
html).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass
class Block:
    kind: str
    value: object


def ci_text(value: float, low: float, high: float, unit: str = "", digits: int = 3) -> str:
    if pd.isna(value):
        return "n/a"
    if pd.isna(low):
        return f"{value:#.{digits}g}{unit} (no CI: one repetition)"
    return f"{value:#.{digits}g}{unit} [{low:#.{digits}g}–{high:#.{digits}g}]"


def variant_text(row) -> str:
    """binary plus the schedule/sync (and a non-scalar inner loop) that name the variant, e.g.
    'mcpi-c-pthreads block atomic' or 'mandelbrot-c-omp dynamic,1 simd'."""
    parts = [str(row["binary"])]
    for column in ("schedule", "sync", "inner"):
        value = row.get(column)
        if isinstance(value, str) and value not in ("", "none", "scalar"):
            parts.append(value)
    return " ".join(parts)


def id_list(ids, limit: int = 6) -> str:
    ids = [str(i) for i in ids]
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(ids[:limit]) + more


def folded(summary: str, blocks: list[Block]) -> Block:
    return Block("details", (summary, blocks))


def plot_blocks(plots, key: str) -> list[Block]:
    """The plots of one section (`Plot.section`), each drawn or skipped with its reason."""
    return [
        Block("skip", f"Plot skipped: {p.skipped}") if p.skipped else Block("img", p)
        for p in plots
        if p.section == key
    ]
