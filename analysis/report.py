"""report.md and a self-contained report.html (inline CSS, plots as base64 data URIs, opens offline).

Order follows Hoefler & Belli (SC15): provenance, the base case with its absolute time, how it was
measured, the validity checks, then results per question. Both files are rendered from one list of
blocks, so they always say the same thing.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass

import pandas as pd

from analysis.atomic import write_text_atomic
from analysis.plots import Plot
from analysis.seedreport import reference_blocks

MAX_ROWS = 40  # longer tables are cut in the report (the CSV has everything)


@dataclass
class Block:
    kind: str  # h1 h2 h3 p table img skip
    value: object


def fmt_table(df: pd.DataFrame) -> pd.DataFrame:
    out = df.head(MAX_ROWS).copy()
    for column in out.columns:
        if pd.api.types.is_float_dtype(out[column]):
            out[column] = out[column].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    return out.astype(object).where(out.notna(), "")


def ci_text(value: float, low: float, high: float, unit: str = "") -> str:
    if pd.isna(value):
        return "n/a"
    if pd.isna(low):
        return f"{value:.4g}{unit} (no CI: one repetition)"
    return f"{value:.4g}{unit} [95 % CI {low:.4g}–{high:.4g}]"


def build_blocks(result, plots: list[Plot]) -> list[Block]:
    c = result.campaign
    s = result.summary
    sp = result.speedup
    b: list[Block] = [Block("h1", f"scalebench report: {c.name}")]

    b.append(Block("h2", "Provenance"))
    experiment = c.config.get("experiment") if isinstance(c.config.get("experiment"), dict) else c.config
    description = experiment.get("description") or c.config.get("description")
    if description:
        b.append(Block("p", f"Experiment: {description}"))
    manifest = {k: (v if isinstance(v, str | int | float) else json.dumps(v)) for k, v in c.manifest.items()}
    b.append(Block("table", pd.DataFrame({"field": list(manifest), "value": list(manifest.values())})))
    if not c.manifest:
        b.append(Block("p", "manifest.json is missing or unreadable: provenance unknown."))

    b.append(Block("h2", "Baseline"))
    label = sp["baseline"].iloc[0] if len(sp) else result.options.baseline
    b.append(
        Block(
            "p",
            f"Speedup = baseline median time / case median time; efficiency = speedup / workers "
            f"(threads x ranks). Baseline: **{label}** (`--baseline {result.options.baseline}`). "
            "Every row of speedup.csv names its baseline case and that case's absolute median time. "
            "The base cases:",
        )
    )
    used = sp.dropna(subset=["baseline_case_id"]).drop_duplicates("baseline_case_id")["baseline_case_id"]
    base = s[s["case_id"].isin(used)]
    if base.empty:
        b.append(
            Block("p", "No case has a valid baseline (no valid serial/one-worker case of the same problem).")
        )
    else:
        base = base.assign(
            median=[
                ci_text(m, lo, hi, " s")
                for m, lo, hi in zip(base["median_s"], base["ci_low_s"], base["ci_high_s"], strict=True)
            ]
        )
        b.append(
            Block(
                "table",
                base[["case_id", "node_type", "binary", "threads", "ranks", "problem", "n", "median"]],
            )
        )

    b.append(Block("h2", "How it was measured"))
    r = result.stats.records
    reps = s["n"]
    timer = r["timer_res_s"].dropna().unique() if "timer_res_s" in r else []
    pins = ", ".join(sorted(map(str, s["pin"].dropna().unique()))) or "unknown"
    groups = ", ".join(sorted(map(str, s["counter_group"].dropna().unique()))) or "none"
    n_warmup = int(s["n_warmup_dropped"].sum()) if len(s) else 0
    b.append(
        Block(
            "p",
            (
                f"Timer: wall time of the compute region only (`clock_gettime(CLOCK_MONOTONIC)`, "
                f"resolution {', '.join(f'{t:g} s' for t in timer) or 'unknown'}). Repetitions per case: "
                f"{reps.min() if len(reps) else 0}–{reps.max() if len(reps) else 0} measured (interleaved "
                f"across cases by the runner); warm-up repetitions dropped: {n_warmup} in total. Pinning: "
                f"{pins} (likwid-pin). Counter groups: {groups}. Statistics: median per case; 95 % CI of the "
                f"median by BCa bootstrap (scipy.stats.bootstrap, {result.options.n_resamples} resamples); "
                "no normality assumed; outliers flagged by Tukey's fences (1.5 IQR), not removed; "
                "speedup CIs from the bootstrap replicates of both medians (ratios are never averaged); "
                "variants compared by Mann–Whitney U with Cliff's delta and Holm-corrected p-values; "
                "Amdahl's law fitted over worker counts <= cores."
            ),
        )
    )
    cores = pd.DataFrame([{"node_type": k, "cores": v[0], "source": v[1]} for k, v in result.cores.items()])
    b.append(Block("table", cores))

    b += validity_blocks(result)
    b += result_blocks(result, plots)
    b += reference_blocks(result)
    return b


def validity_blocks(result) -> list[Block]:
    s, done = result.summary, result.completeness
    b = [Block("h2", "Validity checks")]
    bad_sum = s[~s["checksum_status"].isin(["ok", "no reference"])]
    unref = s[s["checksum_status"] == "no reference"]
    noisy = s[s["noisy"]]
    incomplete = done[done["state"] != "done"]
    problems = result.loaded.problems
    ctr = result.counters
    unavailable = ctr[ctr["counters_status"] == "unavailable"] if len(ctr) else ctr
    counts = pd.DataFrame(
        [
            ("checksum mismatch / inconsistent (invalid, excluded from speedups)", len(bad_sum)),
            ("cases without a serial reference checksum (unchecked)", len(unref)),
            ("cases with placement violations", len(result.violations)),
            (
                "failed cases (a failed attempt explains a missing repetition)",
                int((done["state"] == "failed").sum()),
            ),
            ("partial cases (some repetitions done)", int((done["state"] == "partial").sum())),
            ("missing cases (no record, no failed attempt)", int((done["state"] == "missing").sum())),
            ("unreadable record files (skipped)", len(problems)),
            (f"noisy cases (CI wider than {result.options.noise_threshold:.0%} of the median)", len(noisy)),
            (
                "records with counters unavailable",
                int(unavailable["records"].sum()) if len(unavailable) else 0,
            ),
        ],
        columns=["check", "count"],
    )
    b.append(Block("table", counts))
    if len(bad_sum):
        b.append(Block("h3", "Checksum mismatches"))
        b.append(
            Block(
                "table",
                bad_sum[
                    [
                        "case_id",
                        "node_type",
                        "binary",
                        "schedule",
                        "sync",
                        "threads",
                        "ranks",
                        "checksum",
                        "reference_checksum",
                        "checksum_status",
                    ]
                ],
            )
        )
    if len(result.violations):
        b.append(Block("h3", "Placement violations"))
        b.append(
            Block("table", result.violations.merge(s[["case_id", "binary", "threads", "pin"]], how="left"))
        )
    if len(incomplete):
        b.append(Block("h3", "Failed, partial and missing cases"))
        b.append(Block("table", incomplete))
    if len(problems):
        b.append(Block("h3", "Unreadable record files (skipped)"))
        b.append(Block("table", problems))
    if len(noisy):
        b.append(Block("h3", "Noisy cases"))
        b.append(
            Block(
                "table",
                noisy[
                    [
                        "case_id",
                        "node_type",
                        "binary",
                        "threads",
                        "n",
                        "median_s",
                        "ci_low_s",
                        "ci_high_s",
                        "ci_rel_width",
                        "cv",
                        "n_outliers",
                    ]
                ],
            )
        )
    if len(ctr):
        b.append(Block("h3", "Counters"))
        b.append(Block("table", ctr))
    return b


def best_speedups(sp: pd.DataFrame) -> pd.DataFrame:
    """Best speedup per node type and kernel, with its CI and the baseline's absolute time."""
    ok = sp[sp["speedup"].notna() & (sp["model"] != "serial")]
    if ok.empty:
        return pd.DataFrame()
    best = ok.loc[ok.groupby(["node_type", "kernel"])["speedup"].idxmax()]
    return best[
        [
            "node_type",
            "kernel",
            "binary",
            "schedule",
            "sync",
            "threads",
            "ranks",
            "speedup",
            "speedup_ci_low",
            "speedup_ci_high",
            "efficiency",
            "baseline_case_id",
            "baseline_binary",
            "baseline_median_s",
            "median_s",
        ]
    ]


def result_blocks(result, plots: list[Plot]) -> list[Block]:
    b = [Block("h2", "Results")]
    sections = [
        ("scaling", "Scaling: speedup and efficiency"),
        ("schedules", "Schedules"),
        ("sync", "Synchronisation variants"),
        ("languages", "C vs Fortran"),
        ("mpi", "MPI ranks vs threads"),
        ("counters", "Hardware counters"),
        ("image", "Mandelbrot image"),
    ]
    for key, title in sections:
        b.append(Block("h3", title))
        if key == "scaling":
            best = best_speedups(result.speedup)
            b.append(
                Block("p", "Best speedup per node type and kernel (95 % CI; baseline with absolute time):")
            )
            b.append(Block("table", best) if len(best) else Block("p", "No speedup could be computed."))
            b.append(Block("p", "Amdahl fits (serial fraction f with bootstrap CI; 1/f bounds the speedup):"))
            models = result.models
            b.append(
                Block("table", models.drop(columns=["problem"]))
                if len(models)
                else Block("p", "No series has >= 3 worker counts within the cores: no fit.")
            )
        if key in ("schedules", "sync"):
            comp = result.comparisons
            part = (
                comp[comp["dimension"] == ("schedule" if key == "schedules" else "sync")]
                if len(comp)
                else comp
            )
            if len(part):
                b.append(
                    Block(
                        "p",
                        f"{len(part)} pairwise comparisons at equal thread counts, "
                        f"{int(part['significant'].sum())} significant after Holm (p < 0.05). "
                        "Significant ones:",
                    )
                )
                sig = part[part["significant"]].drop(columns=["case_a", "case_b"])
                b.append(Block("table", sig) if len(sig) else Block("p", "none"))
        for plot in (p for p in plots if p.section == key):
            b.append(Block("skip", f"Plot skipped: {plot.skipped}") if plot.skipped else Block("img", plot))
    return b


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


def render_md(blocks: list[Block], out_dir) -> str:
    parts = []
    for block in blocks:
        if block.kind in ("h1", "h2", "h3"):
            parts.append("#" * int(block.kind[1]) + " " + str(block.value) + "\n")
        elif block.kind == "p":
            parts.append(str(block.value) + "\n")
        elif block.kind == "skip":
            parts.append(f"_{block.value}_\n")
        elif block.kind == "table":
            parts.append(md_table(block.value))
        elif block.kind == "img":
            parts.append(f"![{block.value.title}]({block.value.png.relative_to(out_dir)})\n")
    return "\n".join(parts)


CSS = """
body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
th{background:#eee}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
.skip{color:#a60;font-style:italic}
h2{border-bottom:2px solid #456;padding-bottom:.2em;margin-top:2em}
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


def render_html(blocks: list[Block]) -> str:
    parts = []
    for block in blocks:
        if block.kind in ("h1", "h2", "h3"):
            parts.append(f"<{block.kind}>{html.escape(str(block.value))}</{block.kind}>")
        elif block.kind == "p":
            text = html.escape(str(block.value))
            text = text.replace("**", "")
            parts.append(f"<p>{text}</p>")
        elif block.kind == "skip":
            parts.append(f'<p class="skip">{html.escape(str(block.value))}</p>')
        elif block.kind == "table":
            df = block.value
            parts.append(fmt_table(df).to_html(index=False, border=0) if len(df) else "<p><i>(empty)</i></p>")
            if len(df) > MAX_ROWS:
                parts.append(f"<p><i>{len(df) - MAX_ROWS} more rows in the CSV.</i></p>")
        elif block.kind == "img":
            data = base64.b64encode(block.value.png.read_bytes()).decode()
            title = html.escape(block.value.title)
            image = f'<img alt="{title}" src="data:image/png;base64,{data}">'
            parts.append(f"<figure>{image}<figcaption>{title}</figcaption></figure>")
    title = html.escape(str(blocks[0].value))
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style>{IMAGE_CHECK}</head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def write_report(result, plots: list[Plot], formats: tuple[str, ...]) -> dict[str, object]:
    blocks = build_blocks(result, plots)
    written = {}
    if "md" in formats:
        path = result.out_dir / "report.md"
        write_text_atomic(path, render_md(blocks, result.out_dir))
        written["md"] = path
    if "html" in formats:
        path = result.out_dir / "report.html"
        write_text_atomic(path, render_html(blocks))
        written["html"] = path
    return written
