"""Findings: what a reader can act on, first. Per kernel and node type the speedup and efficiency at
all cores with CIs, the headline (chosen by the CI's lower bound at up to one worker per core, never
implausible), the significant differences between variants, and every validity warning in one line."""

from __future__ import annotations

import pandas as pd

from analysis.checks import PLAUSIBILITY_TOLERANCE, caveats, no_baseline_text
from analysis.outputs.report.blocks import Block, ci_text, id_list, variant_text
from analysis.stats.best_speedup import estimate_counts, estimate_text
from analysis.stats.warmup_effect import SLOWER, slower_cases
from sbcore.case_shape import workers as case_workers


def at_all_cores(result) -> pd.DataFrame:
    """Per variant, the row at workers == cores; where the cores are unknown, the most workers."""
    sp = result.speedup
    sp = sp[sp["speedup"].notna() & (sp["model"] != "serial")].copy()
    if sp.empty:
        return sp
    sp["cores"] = sp["node_type"].map(lambda nt: result.cores.get(nt, (None,))[0])
    sp = sp[sp["cores"].isna() | (sp["workers"] == sp["cores"])]
    key = ["node_type", "kernel", "binary", "schedule", "sync", "inner", "pin", "problem"]
    top = sp.sort_values("workers").groupby(key, dropna=False).tail(1)
    return top.sort_values(["node_type", "kernel", "speedup_ci_low"], ascending=[True, True, False])


def findings_table(rows: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "node type": rows["node_type"],
            "kernel": rows["kernel"],
            "variant": [variant_text(r) for _, r in rows.iterrows()],
            "workers": rows["workers"],
            "cores": rows["cores"].astype("Int64"),
            "speedup [95 % CI]": [
                ci_text(v, lo, hi)
                for v, lo, hi in rows[["speedup", "speedup_ci_low", "speedup_ci_high"]].itertuples(
                    index=False
                )
            ],
            "estimate": [estimate_text(r) for _, r in rows.iterrows()],
            "efficiency [95 % CI]": [
                ci_text(v, lo, hi, digits=2)
                for v, lo, hi in rows[["efficiency", "efficiency_ci_low", "efficiency_ci_high"]].itertuples(
                    index=False
                )
            ],
            "warnings": [caveats(r) for _, r in rows.iterrows()],
        }
    )


def headline_lines(result) -> list[str]:
    lines = []
    for _, h in result.headline.iterrows():
        where = f"{h['kernel']} on {h['node_type']}"
        skipped = int(h["implausible_left_out"]) if pd.notna(h["implausible_left_out"]) else 0
        left_out = f"; {skipped} implausible speedup(s) left out" if skipped else ""
        if pd.isna(h["binary"]):
            lines.append(f"{where}: no plausible speedup{left_out}.")
            continue
        ranks = f" x {int(h['ranks'])} ranks" if h["ranks"] > 1 else ""
        note = f" — {h['caveats']}" if h["caveats"] else ""
        lines.append(
            f"{where}: best {variant_text(h)} at {int(h['threads'])} threads{ranks}: speedup "
            f"{ci_text(h['speedup'], h['speedup_ci_low'], h['speedup_ci_high'])} ({estimate_text(h)}), "
            "efficiency "
            f"{ci_text(h['efficiency'], h['efficiency_ci_low'], h['efficiency_ci_high'], digits=2)} "
            f"vs {h['baseline_binary']} ({h['baseline_median_s']:.4g} s){note}{left_out}."
        )
    return lines


def difference_lines(result, rows: pd.DataFrame) -> list[str]:
    """Significant variant differences at the all-cores worker count of each node type."""
    comp = result.comparisons
    if comp is None or comp.empty or rows.empty:
        return []
    at = rows.groupby("node_type")["workers"].max()
    comp = comp[case_workers(comp["threads"], comp["ranks"]) == comp["node_type"].map(at)]
    lines = []
    for _, c in comp[comp["significant"]].iterrows():
        slower = c["variant_b"] if c["faster"] == c["variant_a"] else c["variant_a"]
        ratio = max(c["ratio_b_over_a"], 1 / c["ratio_b_over_a"])
        lines.append(
            f"{c['binary']} on {c['node_type']} at {case_workers(c['threads'], c['ranks'])} workers: "
            f"{c['dimension']} "
            f"{c['faster']} is {ratio:.2f}x faster than {slower} (Holm p = {c['p_holm']:.2g}, "
            f"Cliff's delta {c['cliffs_delta']:+.2f})"
        )
    if not lines and len(comp):
        lines.append(f"No significant difference among {len(comp)} variant comparisons at all cores.")
    return lines


CORRELATED_NARROWING = 1.2  # CIs this many times too narrow are worth a validity warning


def warning_lines(result) -> list[str]:
    s, done, sp = result.summary, result.completeness, result.speedup
    lines = []

    def add(cases, text):
        if len(cases):
            lines.append(f"{len(cases)} {text}: {id_list(cases)}")

    add(s.loc[~s["valid"], "case_id"], "case(s) with a wrong checksum (excluded)")
    add(result.violations["case_id"], "case(s) ran on other CPUs than planned")
    for state in ("failed", "partial", "missing"):
        add(done.loc[done["state"] == state, "case_id"], f"{state} case(s)")
    add(result.loaded.problems["file"] if len(result.loaded.problems) else [], "unreadable record file(s)")
    for verdict, text in (
        (
            "implausible",
            f"implausible speedup(s) (over {PLAUSIBILITY_TOLERANCE:.0%} above min(workers, cores), "
            "CI reaches below)",
        ),
        (
            "superlinear",
            f"superlinear speedup(s) (over {PLAUSIBILITY_TOLERANCE:.0%} above min(workers, cores), CI "
            "above it: needs an explanation)",
        ),
    ):
        bad = sp[sp["plausibility"] == verdict]
        add([f"{variant_text(r)} x{r['workers']} = {r['speedup']:.2f}" for _, r in bad.iterrows()], text)
    bimodal = s[s["bimodal"].astype(bool)]
    add(
        [
            f"{r['case_id']} {variant_text(r)} x{r['threads']} ({r['mode_fast_s']:.3g} s / "
            f"{r['mode_slow_s']:.3g} s)"
            for _, r in bimodal.iterrows()
        ],
        "bimodal case(s), two clusters of times",
    )
    noisy = s[s["noisy"].astype(bool)]
    if len(noisy):
        lines.append(
            f"{len(noisy)} of {len(s)} cases noisy (95 % CI of the median wider than "
            f"{result.options.noise_threshold:.0%} of it)"
        )
    c = getattr(result, "process_correlation", None)
    if c is not None and c.ci_narrowing >= CORRELATED_NARROWING:
        lines.append(
            f"repetitions within one kernel process are correlated (intraclass correlation {c.icc:.2f}, "
            f"{c.reps_per_process:.1f} per process): every CI here takes them for independent and is about "
            f"{c.ci_narrowing:.2f}x too narrow; more processes with fewer repetitions each measure "
            "the spread between processes"
        )
    slower = slower_cases(getattr(result, "warmup_effect", None))
    if len(slower):
        low, high = slower["ratio_median"].min(), slower["ratio_median"].max()
        lines.append(
            f"{len(slower)} case(s) ran slower right after their warm-up than the warm-up itself, in the "
            f"same process (median ratio {low:.3f}-{high:.3f}, each with its 95 % interval above "
            f"{1 + SLOWER:g}; warmup_effect.csv, the machine-state section): their times are a "
            "process's later regions, which this host ran slower than its first"
        )
    ctr = result.counters
    if len(ctr) and (ctr["counters_status"] == "unavailable").any():
        reason = ctr.loc[ctr["counters_status"] == "unavailable", "counters_reason"].iloc[0]
        lines.append(f"hardware counters unavailable: {reason}")
    return lines


def conducted_text(result) -> str:
    """One sentence naming the capacity speedups of conducted cases (analysis/stats/capacity.py)."""
    paired = getattr(result, "paired_speedup", None)
    if paired is None or "capacity_speedup" not in paired or paired["capacity_speedup"].isna().all():
        return ""
    n = int(paired["capacity_speedup"].notna().sum())
    return (
        f"{n} case(s) ran conducted (`conduct = true`): beside the paired speedup, their **capacity "
        "speedup** compares each repetition with the serial baseline run on all of its CPUs at once "
        "milliseconds before it (the slowest CPU's time for a static schedule, the CPUs' summed speed "
        "for a dynamic one; paired_speedup.csv `capacity_*`, and the paired section)."
    )


def section(result, plots) -> list[Block]:
    rows = at_all_cores(result)
    b = [
        Block(
            "p",
            "Speedup = baseline time / case time, efficiency = speedup / workers (threads x ranks); "
            "brackets are 95 % bootstrap CIs. Each figure is the best estimate there is: where the case "
            "and its baseline ran in trials of one comparison family, the median over trials of their "
            "paired ratio (**paired**: measured seconds apart, so the host's slow phases cancel; CI over "
            "trials); elsewhere the ratio of their median times (**unpaired**); the column *estimate* "
            f"says which ({estimate_counts(result.speedup)}), and the paired section has both side by "
            "side. The best variant is the one with the "
            "highest CI lower bound among the cases with at most one worker per core (more workers than "
            "cores show whether oversubscription hurts, not which variant scales best on the node); only "
            "a kernel measured solely oversubscribed has its best chosen among those, marked "
            '"oversubscribed: N workers on C cores". A speedup more than '
            f"{PLAUSIBILITY_TOLERANCE:.0%} above min(workers, cores) whose CI reaches below that bound is "
            "implausible and never chosen, one whose CI lies above it (superlinear) only when no "
            f"plausible one exists; within {PLAUSIBILITY_TOLERANCE:.0%} of the bound it is taken as "
            "perfect scaling measured with noise. A case whose times or whose baseline's are noisy or "
            "bimodal is chosen only when every candidate is; the line counts those passed over. A kernel "
            "with cases on more than one worker has its best among those: a clean one-worker case "
            "measures the variant's overhead, not its scaling, and never displaces them.",
        )
    ]
    conducted = conducted_text(result)
    if conducted:
        b.append(Block("p", conducted))
    lines = headline_lines(result)
    no_speedup = Block("p", no_baseline_text(result.options.baseline).capitalize() + ".")
    b.append(Block("ul", lines) if lines else no_speedup)
    b.append(Block("h3", "Speedup and efficiency at all cores"))
    b.append(
        Block("table", findings_table(rows)) if len(rows) else Block("p", "No parallel case with a baseline.")
    )
    diffs = difference_lines(result, rows)
    if diffs:
        b.append(Block("h3", "Significant differences between variants (at all cores)"))
        b.append(Block("ul", diffs))
    b.append(Block("h3", "Validity warnings"))
    warnings = warning_lines(result)
    b.append(Block("ul", warnings) if warnings else Block("p", "No validity warning."))
    return b
