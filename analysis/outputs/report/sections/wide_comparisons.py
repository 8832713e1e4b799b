"""Report part of the paired section: every paired comparison left wider than the precision target and
why (analysis/stats/wide_comparisons.py): the budget ended it, the host's noise, too few trials, or
cut short below its cases' own trials."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, variant_text
from analysis.stats.comparison_precision import PRECISE
from analysis.stats.wide_comparisons import REASONS


def label(summary: pd.DataFrame):
    """case_id -> its variant's name (binary, schedule, sync, inner loop) and workers."""
    named = summary.set_index("case_id")
    return lambda case_id: (
        f"{variant_text(named.loc[case_id])} x{int(named.loc[case_id]['workers'])}"
        if case_id in named.index
        else str(case_id)
    )


def blocks(wide: pd.DataFrame | None, summary: pd.DataFrame) -> list[Block]:
    if wide is None or wide.empty:
        return []
    counts = wide["reason"].value_counts()
    said = ", ".join(f"{int(counts[r])} {r.replace('_', ' ')}" for r in REASONS if counts.get(r, 0))
    name = label(summary)
    table = pd.DataFrame(
        {
            "comparison": wide["kind"],
            "case": wide["case_b"].map(name),
            "against": wide["case_a"].map(name),
            "CI ±": [f"{100 * h:.1f} %" if h == h else "none" for h in wide["halfwidth_rel"]],
            "trials": wide["trials"],
            "reason": wide["reason"].str.replace("_", " "),
            "why": wide["why"],
        }
    )
    text = (
        f"Paired comparisons at up to one worker per core left wider than ±{100 * PRECISE:g} % "
        f"(wide_comparisons.csv): {len(wide)} ({said}). A budget ended one when its cases had room for "
        "the trials its spread would need (its line names the budgets in force); host noise when they "
        "had not, or had run them all (the "
        "per-trial ratios' spread, half their interquartile range, with the trials left out of it); too "
        "few trials when no interval exists; cut short when its cases ran fewer trials than their own "
        "rule asks (the run budget, `run_budget_s`, ended the run first, or it was interrupted)."
    )
    return [Block("p", text), Block("table", table)]
