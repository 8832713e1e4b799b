"""Method and provenance, last: the baseline with its absolute times, how it was measured, and the
manifest as key/value tables (long groups folded), never as a JSON dump."""

from __future__ import annotations

import pandas as pd

from analysis.checks import PLAUSIBILITY_TOLERANCE
from analysis.outputs.report.blocks import Block, ci_text


def baseline(result) -> list[Block]:
    s, sp = result.summary, result.speedup
    label = sp["baseline"].iloc[0] if len(sp) else result.options.baseline
    b = [
        Block(
            "p",
            f"Baseline: {label} (`--baseline {result.options.baseline}`). Every row of speedup.csv names "
            "its baseline case and that case's absolute median time. The base cases:",
        )
    ]
    used = sp.dropna(subset=["baseline_case_id"]).drop_duplicates("baseline_case_id")["baseline_case_id"]
    base = s[s["case_id"].isin(used)]
    if base.empty:
        b.append(
            Block("p", "No case has a valid baseline (no valid serial/one-worker case of the same problem).")
        )
        return b
    base = base.assign(
        median=[
            ci_text(m, lo, hi, " s", digits=4)
            for m, lo, hi in zip(base["median_s"], base["ci_low_s"], base["ci_high_s"], strict=True)
        ]
    )
    b.append(
        Block("table", base[["case_id", "node_type", "binary", "problem", "n", "median", "noisy", "bimodal"]])
    )
    return b


def measurement(result) -> list[Block]:
    s, r = result.summary, result.stats.records
    reps = s["n"]
    timer = r["timer_res_s"].dropna().unique() if "timer_res_s" in r else []
    kv = {
        "timer": "wall time of the compute region only (clock_gettime(CLOCK_MONOTONIC)), resolution "
        + (", ".join(f"{t:g} s" for t in timer) or "unknown"),
        "repetitions per case": f"{reps.min() if len(reps) else 0}–{reps.max() if len(reps) else 0} "
        "measured, interleaved across cases by the runner",
        "warm-up repetitions dropped": int(s["n_warmup_dropped"].sum()) if len(s) else 0,
        "pinning": ", ".join(sorted(map(str, s["pin"].dropna().unique()))) or "unknown",
        "counter groups": ", ".join(sorted(map(str, s["counter_group"].dropna().unique()))) or "none",
        "centre and CI": "median per case; 95 % CI of the median by BCa bootstrap "
        f"({result.options.n_resamples} resamples); no normality assumed",
        "repetitions within one process": correlation_text(result),
        "outliers": "Tukey's fences (1.5 IQR), flagged, not removed",
        "speedup CI": "from the bootstrap replicates of both medians (ratios are never averaged)",
        "variant comparisons": "Mann–Whitney U, Cliff's delta, Holm-corrected p-values",
        "bimodality": "one vs two normals on log time, classification likelihood, BIC and Ashman's D",
        "plausibility": f"speedup more than {PLAUSIBILITY_TOLERANCE:.0%} above min(workers, cores) flagged "
        "implausible, superlinear when its CI lower bound is above the bound too",
        "model": "Amdahl's law fitted over worker counts <= cores",
    }
    cores = pd.DataFrame([{"node_type": k, "cores": v[0], "source": v[1]} for k, v in result.cores.items()])
    return [
        Block("kv", kv),
        Block("p", "Physical cores per node type (bound of a plausible speedup):"),
        Block("table", cores),
    ]


def correlation_text(result) -> str:
    """What the CIs' independence assumption costs in this campaign (stats/process_correlation.py)."""
    c = getattr(result, "process_correlation", None)
    if c is None:
        return "not measurable (no case measured in two kernel processes of two or more repetitions)"
    return (
        f"intraclass correlation {c.icc:.2f} over {c.processes} processes of {c.cases} cases "
        f"({c.reps_per_process:.1f} repetitions each): the CIs, which take repetitions for independent, "
        f"are about {c.ci_narrowing:.2f}x too narrow"
    )


def method(result, plots) -> list[Block]:
    return [
        Block("h3", "Baseline"),
        *baseline(result),
        Block("h3", "How it was measured"),
        *measurement(result),
    ]
