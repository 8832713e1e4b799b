"""The report section "Published reference": the study's factors beside the measured ones
(analysis/stats/reference.py), and the same table as Markdown for docs/seed-reproductions.md."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text
from analysis.outputs.report.markdown import md_table


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """What a reader compares: label, scenario, study, measured with CI, verdict, load CPU share."""

    rows = []
    for r in table.itertuples(index=False):
        if r.kind == "mapping":
            measured = r.verdict
        elif r.kind == "value":
            measured = "n/a" if np.isnan(r.measured) else f"{r.measured:.4g}"
        else:
            measured = ci_text(r.measured, r.ci_low, r.ci_high, digits=4)
        rows.append(
            {
                "comparison": r.label,
                "scenario": r.scenario,
                "metric": r.metric,
                "study": "" if np.isnan(r.study) else f"{r.study:.3g}",
                "measured": measured,
                "n": r.n,
                "verdict": "" if r.kind == "mapping" else r.verdict,
                "load CPU share": "" if pd.isna(r.load_cpu_share) else f"{r.load_cpu_share:.0%}",
            }
        )
    out = pd.DataFrame(rows)
    if not out.empty and (out["load CPU share"] == "").all():
        out = out.drop(columns=["load CPU share"])
    return out


def agreement_text(table: pd.DataFrame) -> str:
    factors = table[table["kind"] != "mapping"]
    if factors.empty:
        return "Nothing numeric to compare: the table lists what was asked and what the OS applied."
    measured = factors["measured"].notna()
    agree = factors["verdict"].str.startswith(("agrees", "close")).sum()
    unclear = factors["verdict"].str.startswith("inconclusive").sum()
    worst = (
        factors[measured].assign(rel=(factors["measured"] / factors["study"] - 1).abs()).sort_values("rel")
    )
    text = f"{agree} of {len(factors)} comparisons agree with the study (within the CI or within 10 %)"
    text += f", {unclear} inconclusive (CI wider than half the factor)." if unclear else "."
    if len(worst):
        w = worst.iloc[-1]
        text += f" Largest difference: {w['label']} ({w['scenario']}): "
        text += f"study {w['study']:.3g}, measured {w['measured']:.3g}."
    return text


def reference_section(result, plots=()) -> list[Block]:
    """The published reference the experiment names, beside our factors (else no section)."""
    if getattr(result, "reference", None) is None:
        return []
    ref, table = result.reference
    return [
        Block("h3", f"{ref.spec} — {ref.case.get('title', '')}"),
        Block(
            "p",
            f"Study: {ref.seed.get('title', ref.spec)} ({ref.seed.get('machine', 'machine not stated')}). "
            f"Its finding: {ref.case.get('shape', 'not stated')}. Factors = median time of the base case / "
            "median time of the case (95 % percentile-bootstrap CI); only factors and shapes are compared, "
            "never seconds. Load CPU share = CPU time the competing load got / CPU time its hogs asked for.",
        ),
        Block("table", display_table(table)),
        Block("p", agreement_text(table)),
    ]


def markdown(result) -> str:
    """The section as Markdown, for the generated part of docs/seed-reproductions.md."""
    ref, table = result.reference
    c = result.campaign
    host = c.manifest.get("hostname") or c.manifest.get("hostnames") or "unknown host"
    load = c.manifest.get("load_average")
    # A busy machine explains wide CIs: say how busy it was when the campaign was planned.
    busy = f" (load average {load[0]:.1f} when planned)" if isinstance(load, list) and load else ""
    lines = [
        f"Campaign `{c.name}` on {host}{busy}; {agreement_text(table)}",
        "",
        md_table(display_table(table)),
    ]
    return "\n".join(lines)
