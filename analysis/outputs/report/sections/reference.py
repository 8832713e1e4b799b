"""The report section "Published reference": the study's factors beside the measured ones
(analysis/stats/reference.py), and the same table as Markdown for docs/seed-reproductions.md."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text
from analysis.outputs.report.markdown import md_table
from analysis.outputs.report.sections.pop_metrics import sentence
from analysis.stats.reference import (
    CANNOT_DECIDE,
    JUDGED,
    LOAD_ABOVE,
    LOAD_NOT_APPLIED,
    NOT_COMPARABLE,
    case_dims,
    selects,
)

TALLY = ("agrees", "differs", "inconclusive", CANNOT_DECIDE, NOT_COMPARABLE, LOAD_NOT_APPLIED, LOAD_ABOVE)
MEASURED = "measured [interval] (coverage)"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """What a reader compares: label, scenario, study, measured with its interval and the interval's
    coverage, margin, verdict (with the repetitions that would decide an inconclusive one, the reason
    of a binding that is not comparable), load CPU share got / expected."""

    rows = []
    for r in table.itertuples(index=False):
        mapping = r.kind == "mapping"
        measured = r.verdict if mapping else ci_text(r.measured, r.ci_low, r.ci_high, digits=4)
        if not mapping and pd.notna(r.coverage) and pd.notna(r.ci_low):
            measured += f" ({r.coverage:.1%})"
        if r.kind == "limit":
            measured = "n/a" if pd.isna(r.measured) else f"{r.measured:.0f}"
        verdict = "" if mapping else r.verdict
        if verdict == "inconclusive" and pd.notna(r.needed_n):
            verdict += f" (n ≈ {int(r.needed_n)} would decide)"
        if verdict == NOT_COMPARABLE and isinstance(r.reason, str):
            verdict += f": {r.reason}"
        rows.append(
            {
                "comparison": r.label,
                "scenario": r.scenario,
                "metric": r.metric,
                "study": "" if np.isnan(r.study) else f"{r.study:.4g}",
                MEASURED: measured,
                "n": f"{r.n}" + (" trials" if r.pairing == "paired" else ""),
                "margin": "" if pd.isna(r.margin) else f"±{r.margin:.0%}",
                "verdict": verdict,
                "load CPU share": load_text(r.load_cpu_share, r.load_share_expected),
            }
        )
    out = pd.DataFrame(rows)
    if not out.empty and (out["load CPU share"] == "").all():
        out = out.drop(columns=["load CPU share"])
    return out


def load_text(share: float, expected: float) -> str:
    if pd.isna(share):
        return ""
    return f"{share:.0%}" + ("" if pd.isna(expected) else f" of {float(expected):.0%} expected")


def agreement_text(table: pd.DataFrame) -> str:
    factors = table[table["kind"].isin(JUDGED)]
    if factors.empty:
        return "Nothing numeric to compare: the table lists what was asked and what the OS applied."
    counts = tally(factors["verdict"])
    parts = [f"{counts.get(v, 0)} {v}" for v in TALLY]
    text = (
        f"Of {len(factors)} comparisons: {', '.join(parts)} (equivalence: the interval of measured / "
        "study, of at least 90 % coverage, wholly inside the margin agrees, wholly outside differs; "
        "nothing else counts as agreement; docs/verdict-rule.md)."
    )
    unmeasured = counts.get("not measured", 0)
    return text + (f" {unmeasured} not measured." if unmeasured else "")


def tally(verdicts: pd.Series) -> pd.Series:
    """Verdict counts, every "inconclusive (...)" counted as inconclusive."""
    return verdicts.astype(str).str.replace(r"^inconclusive.*", "inconclusive", regex=True).value_counts()


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
            f"Its finding: {ref.case.get('shape', 'not stated')}. Factors = base case / case: the median of "
            "per-trial ratios where both were measured in paired trials, else the ratio of medians, over "
            "the undisturbed repetitions, with a distribution-free interval and its coverage (at least "
            "90 %); only factors and shapes are compared, never seconds. Verdicts: docs/verdict-rule.md. "
            "Load CPU share = CPU time the competing load got / CPU time of its hogs, beside the share it "
            "should get in that scenario; off it by more than 20 % of it (5 points near 0), either way, "
            "the row gets no verdict.",
        ),
        Block("table", display_table(table)),
        Block("p", agreement_text(table)),
    ]


def conditions_text(result, disturbed_left_out: bool = True) -> str:
    """When, where and under what load the campaign was measured: the quiet gate's record (jobs/seeds.py)
    where there is one, else the load when it was planned; and the share of repetitions the machine-state
    probe flagged as disturbed."""
    c = result.campaign
    host = c.manifest.get("hostname") or "unknown host"
    quiet = c.quiet or {}
    before = quiet.get("before") or {}
    if before:
        gate = (
            "quiet gate skipped"
            if before.get("skipped")
            else f"quiet gate: load < {before['load_below']:g} and CPUs < {before['busy_below']:.0%} busy, "
            f"passed after {before['waited_s']:g} s"
        )
        took, after = quiet.get("duration_s", 0), quiet.get("load_after_1min", float("nan"))
        text = (
            f"Measured {before['checked']} – {quiet.get('finished', '?')} ({took:.0f} s) "
            f"on {host}{' as root' if quiet.get('root') else ', not as root'}; 1-minute load average "
            f"{before['load_1min']:.2f} before ({gate}), {after:.2f} after"
        )
    else:
        load = c.manifest.get("load_average")
        busy = f", load average {load[0]:.2f} when planned" if isinstance(load, list) and load else ""
        text = f"Measured on {host} (campaign created {c.manifest.get('created', '?')}{busy}; no quiet gate)"
    summary = getattr(result, "summary", None)
    if summary is not None and {"n_disturbed", "n_clean"} <= set(summary.columns):
        flagged, clean = summary["n_disturbed"].sum(), summary["n_clean"].sum()
        if flagged + clean:
            text += f"; {flagged / (flagged + clean):.0%} of repetitions flagged disturbed by the probe" + (
                " (left out of the verdicts, as in the performance gate, except beside a competing load)"
                if disturbed_left_out
                else " (kept: these figures are over every repetition)"
            )
    return text + ". " + provenance_text(c.manifest, quiet.get("platform") or {})


def provenance_text(manifest: dict, platform: dict) -> str:
    """What a reader needs to rerun the table on the same software: commit, compiler and flags, OpenMP
    runtime, stress-ng and likwid, kernel, CPU model and flags (manifest.json and quiet_gate.json's
    "platform", jobs/seed_platform.py), and the command that regenerates it."""
    git = manifest.get("git") or {}
    commit = git.get("commit")
    cpu = platform.get("cpu") or {}
    model = ", ".join(v for v in (cpu.get("model"), cpu.get("family_model")) if v)
    flags = manifest.get("flags") or {}
    facts = [
        f"commit {commit[:12]}{' (with uncommitted changes)' if git.get('dirty') else ''}"
        if commit
        else "commit unknown",
        f"compiler {(manifest.get('compilers') or {}).get('gcc') or 'unknown'}"
        + (f" with {flags['CFLAGS_REF']}" if flags.get("CFLAGS_REF") else ""),
        f"OpenMP runtime {platform.get('openmp_runtime') or 'not recorded'}",
        f"{platform.get('stress_ng') or 'stress-ng not recorded'}",
        f"{(manifest.get('tools') or {}).get('likwid') or 'likwid not found'}",
        f"Linux {(manifest.get('os') or {}).get('kernel') or platform.get('kernel') or 'unknown'}",
        f"CPU {model or 'not recorded'}"
        + (f" (flags: {' '.join(cpu['flags'])})" if cpu.get("flags") else ""),
    ]
    return (
        "Software and hardware: "
        + "; ".join(facts)
        + ". Regenerate: `make seeds` (measures; `python -m jobs.seeds --render-only` re-renders from the "
        "campaigns), whose archive `seed-campaigns-<stamp>.tar.gz` holds this campaign."
    )


def markdown(result) -> str:
    """The section as Markdown, for the generated part of docs/seed-reproductions.md."""
    ref, table = result.reference
    lines = [
        f"Campaign `{result.campaign.name}`. {conditions_text(result)}",
        "",
        md_table(display_table(table)),
        "",
        agreement_text(table),
    ]
    note = ref.case.get("on_linux")
    if note:
        lines += ["", f"Our expectation before measuring (ours, not the study's): {note}"]
    trends = trend_lines(ref, table)
    if trends:
        lines += ["", "The study's trends, each from its figures in the rows named (the `study` column):", ""]
        lines += [f"- {t}" for t in trends]
    if ref.case.get("explains"):
        quote = ref.case["explains"]
        lines += ["", f"The study's reading, in its words (as the seed guide gives them): “{quote}”"]
    decomposition = decomposition_sentences(result, ref, table)
    if decomposition:
        lines += ["", "Our decomposition (ours: POP metrics of our runs, docs/pop-metrics.md):", ""]
        lines += [f"- {s}" for s in decomposition]
    return "\n".join(lines)


def trend_lines(ref, table: pd.DataFrame) -> list[str]:
    """The study's trend sentences (`trends`) whose rows are all in the table, each with the rows it
    rests on; tests/seeds/test_explanations.py checks that its figures are those rows' study values."""
    present = set(table["label"]) if len(table) else set()
    out = []
    for trend in ref.case.get("trends", []):
        rows = trend["rows"]
        if set(rows) <= present:
            out.append(f"{trend['text']} (rows: {'; '.join(rows)})")
    return out


def decomposition_sentences(result, ref, table: pd.DataFrame) -> list[str]:
    """Where the study explains a result (`explains`): for each compared case its `decompose` selects
    (more than one worker), the POP sentence of where its efficiency goes (stats/pop_metrics.py)."""
    pop = getattr(result, "pop_metrics", None)
    selector = ref.case.get("decompose")
    if pop is None or pop.empty or not selector or not ref.case.get("explains"):
        return []
    dims = {c["case_id"]: case_dims(c) for c in result.campaign.case_lines}
    scenario = table.drop_duplicates("point_case").set_index("point_case")["scenario"]
    wanted = [cid for cid in scenario.index if cid in dims and selects(dims[cid], selector)]
    scaled = pop[pop["workers"] > 1]
    families = {key: part for key, part in scaled.groupby(["node_type", "binary"], dropna=False)}
    out = []
    chosen = scaled[scaled["case_id"].isin(wanted)]
    cpus_of = {cid: dims[cid]["cpus"] for cid in wanted}
    chosen = chosen.assign(cpus=chosen["case_id"].map(cpus_of)).sort_values(["binary", "cpus", "workers"])
    for _, row in chosen.iterrows():
        text = sentence(row, families[(row["node_type"], row["binary"])])
        cpus = dims[row["case_id"]]["cpus"]
        if cpus.isdigit() and row["workers"] > int(cpus):
            text += (
                f" ({row['workers']} workers on {cpus} CPU{'s' if int(cpus) > 1 else ''}: an efficiency of "
                f"at most {int(cpus) / row['workers']:.2f} by design: only the loss beyond it is the "
                "variant's)"
            )
        out.append(f"{scenario[row['case_id']]}: {text}")
    return out
