"""Report section: speedups paired within trials of a comparison family (analysis/stats/paired.py)
beside the unpaired ones (ratio of medians measured at any time)."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text, variant_text
from analysis.outputs.report.sections import paired_cross, wide_comparisons
from analysis.stats.comparison_precision import PRECISE, precision_line
from analysis.stats.paired import MAX_APART_S
from sbcore.case_shape import workers as case_workers


def ci_column(rows: pd.DataFrame, prefix: str, value: str) -> list[str]:
    """'{value} [low-high]' of the paired estimate `prefix` (paired_ or paired_together_) per row."""
    return [
        ci_text(r[f"{prefix}{value}"], r[f"{prefix}ci_low"], r[f"{prefix}ci_high"])
        for _, r in rows.iterrows()
    ]


def paired_table(speedup: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    rows = paired.merge(speedup, on=["case_id", "baseline_case_id"], how="left")
    return pd.DataFrame(
        {
            "variant": [variant_text(r) for _, r in rows.iterrows()],
            "workers": rows["workers"],
            "baseline": rows["baseline_binary"],
            "unpaired": [
                ci_text(r.unpaired_speedup, r.unpaired_speedup_ci_low, r.unpaired_speedup_ci_high)
                for r in rows.itertuples()
            ],
            "paired": ci_column(rows, "paired_together_", "speedup"),
            "trials": rows["trials_together"],
            "paired, clean trials only": ci_column(rows, "paired_", "speedup"),
            "clean trials": rows["trials"],
            **capacity_columns(rows),
            "left out (disturbed / apart / slow transfer / across a phase)": rows[
                "left_out_disturbed"
            ].astype(str)
            + " / "
            + rows["left_out_apart"].astype(str)
            + " / "
            + rows["left_out_slow_transfer"].astype(str)
            + " / "
            + rows["left_out_across_phase"].astype(str),
        }
    ).sort_values(["variant", "workers"])


def capacity_columns(rows: pd.DataFrame) -> dict:
    """The capacity speedup of conducted cases (analysis/stats/capacity.py), when any case has one."""
    if "capacity_speedup" not in rows or rows["capacity_speedup"].isna().all():
        return {}
    return {
        "capacity (baseline on every CPU, ms before)": ci_column(rows, "capacity_", "speedup"),
        "capacity rule": rows["capacity_rule"].fillna(""),
    }


def section(result, plots=()) -> list[Block]:
    paired = getattr(result, "paired_speedup", None)
    if paired is None or paired.empty:
        return []
    precise = int((paired["paired_halfwidth_rel"] <= PRECISE).sum())
    unpaired = result.speedup.set_index("case_id").loc[paired["case_id"]]
    unpaired_hw = (
        (unpaired["unpaired_speedup_ci_high"] - unpaired["unpaired_speedup_ci_low"])
        / 2
        / unpaired["unpaired_speedup"]
    )
    together = int((paired["paired_together_halfwidth_rel"] <= PRECISE).sum())
    disturbed, apart = int(paired["left_out_disturbed"].sum()), int(paired["left_out_apart"].sum())
    transfer = int(paired["left_out_slow_transfer"].sum())
    across = int(paired["left_out_across_phase"].sum())
    text = (
        f'The campaign ran its cases in trials of their comparison family (`interleave = "family"`): '
        "one kernel process of each member back to back in a random order, so a slow phase of the host "
        "slows a case and its baseline alike and cancels in the ratio. Each paired speedup is the median "
        "over trials of the baseline's time over the case's within a trial, with a bootstrap 95 % CI over "
        f"trials (paired_speedup.csv), over every trial whose members started within {MAX_APART_S:g} s of "
        f"each other, disturbed ones too: {together} of {len(paired)} have a CI half-width within "
        f"±{100 * PRECISE:g} % (unpaired, from the same records: {int((unpaired_hw <= PRECISE).sum())}). "
        f"Left out: {apart} trials whose members started further apart (resumed, or run as separate "
        f"Slurm tasks), {transfer} trials with a member measured while the cache-line transfer "
        "between its CPUs was slow (the host had moved the vCPUs apart: contended locks and atomics run "
        "2-3x slower then while a single-threaded baseline does not, so pairing cannot cancel it), and "
        f"{across} trials whose ratio lay far outside the spread of the comparison's others: a slow phase "
        "of the host began or ended between its two processes, so it slowed one of them only. "
        "Shown beside, over the clean trials only: left out as well are "
        f"{disturbed} trials with a member whose every repetition was disturbed (machine-state probe; "
        f"otherwise a process counts its clean repetitions only); {precise} of {len(paired)} within "
        f"±{100 * PRECISE:g} %."
    )
    blocks = [Block("p", text)]
    if "capacity_speedup" in paired and paired["capacity_speedup"].notna().any():
        conducted = paired[paired["capacity_speedup"].notna()]
        within = int((conducted["capacity_halfwidth_rel"] <= PRECISE).sum())
        blocks.append(
            Block(
                "p",
                f"Conducted (`conduct = true`), {len(conducted)} of {len(paired)}: the serial "
                "baseline on each of their CPUs at once, milliseconds before each repetition. Their "
                "capacity speedup is the median over trials of that reference time (the slowest "
                "CPU's for a static schedule, the CPUs' summed speed for a dynamic, guided, queue or "
                "cyclic one) over the case's time, with the same bootstrap 95 % CI "
                f"(paired_speedup.csv, `capacity_*`): {within} of {len(conducted)} within "
                f"±{100 * PRECISE:g} %.",
            )
        )
    if getattr(result, "comparison_precision", None):
        blocks.append(Block("p", f"`{precision_line(result.comparison_precision)}`"))
    blocks += wide_comparisons.blocks(getattr(result, "wide_comparisons", None), result.summary)
    blocks.append(Block("table", paired_table(result.speedup, paired)))
    variants = getattr(result, "paired_variant_ratio", None)
    if variants is not None and not variants.empty:
        blocks += [
            Block(
                "p",
                "Variant ratios paired the same way: two cases of one family differing in schedule or sync "
                "at the same workers (as in comparisons.csv), the median over trials of b's time over a's "
                "(above 1: b is slower), with a bootstrap 95 % CI over trials (paired_variant_ratio.csv).",
            ),
            Block("table", variant_table(variants, result.summary)),
        ]
    return blocks + paired_cross.blocks(getattr(result, "paired_cross_ratio", None), result.summary)


def variant_table(variants: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    v = variants
    # Both sides by schedule and sync: the dimension that does not differ tells rows apart.
    label = summary.set_index("case_id")[["schedule", "sync"]].astype(str).agg(" ".join, axis=1)
    return pd.DataFrame(
        {
            "binary": v["binary"],
            "workers": case_workers(v["threads"], v["ranks"]),
            "a": v["case_a"].map(label).fillna(v["variant_a"]),
            "b": v["case_b"].map(label).fillna(v["variant_b"]),
            "b / a, paired": ci_column(v, "paired_together_", "ratio_b_over_a"),
            "trials": v["trials_together"],
            "b / a, clean trials only": ci_column(v, "paired_", "ratio_b_over_a"),
        }
    ).sort_values(["binary", "workers", "a", "b"])
