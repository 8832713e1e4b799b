"""The report's hardware-counter section: per case the group's metrics with likwid's units (CPI first),
records whose counters were rejected and why, and on SMT node types the sibling hardware threads of each
core side by side."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, plot_blocks

# Uncore metrics (memory controller) are counted once per socket, on its first hardware thread: comparing
# them between siblings would compare a socket's total with zero.
PER_SOCKET = ("Memory ",)
CASE_LABELS = {"binary": "binary", "threads": "threads", "pin_strategy": "pin"}


def counter_blocks(result) -> list[Block]:
    tables = result.counter_tables
    cases, siblings = tables.get("counter_cases.csv"), tables.get("counter_siblings.csv")
    records = result.loaded.records
    status = records["counters_status"] if "counters_status" in records else pd.Series(dtype=object)
    blocks = []
    invalid = records[status == "invalid"] if len(records) else records
    if len(invalid):
        reasons = invalid.groupby(["node_type", "counters_group", "counters_reason"], observed=True).size()
        blocks.append(
            Block("p", f"{len(invalid)} records have counters that do not match the run (not used):")
        )
        blocks.append(Block("table", reasons.rename("records").reset_index()))
    if cases is None or cases.empty:
        return [*blocks, Block("p", "No record with valid counters (status ok): no counter tables.")]
    blocks.append(
        Block(
            "p",
            "likwid-perfctr metrics per case (marker region `compute`): per record summed over the measured "
            "hardware threads for bandwidths, volumes and MFLOP/s, averaged otherwise; median over "
            "repetitions. CPI = cycles per instruction (lower is better).",
        )
    )
    for (node_type, group), part in cases.groupby(["node_type", "counters_group"], observed=True, sort=True):
        names = _column_names(part)
        order = sorted(dict.fromkeys(names), key=lambda c: not c.startswith("CPI"))  # stable: likwid's order
        labels = list(CASE_LABELS)
        wide = part.assign(column=names).pivot_table(
            index=labels, columns="column", values="median", observed=True, dropna=False
        )
        wide = wide[order].join(part.groupby(labels, observed=True)["reps"].min())
        wide = wide[["reps", *order]].reset_index().rename(columns=CASE_LABELS)
        wide[order] = wide[order].map(_number)
        blocks.append(Block("p", f"Node type {node_type}, group {group}:"))
        blocks.append(Block("table", wide))
    if siblings is not None and len(siblings):
        side = siblings[~siblings["metric"].str.startswith(PER_SOCKET)]
        side = side.sort_values("metric", key=lambda m: m != "CPI", kind="stable")
        side = side.assign(sibling_0=side["sibling_0"].map(_number), sibling_1=side["sibling_1"].map(_number))
        blocks.append(
            Block(
                "p",
                "SMT: sibling hardware threads of one core side by side (median over repetitions). "
                "Per-socket memory metrics are left out: likwid counts them on the socket's first thread.",
            )
        )
        names = {
            **CASE_LABELS,
            "counters_group": "group",
            "sibling_0": "first sibling",
            "sibling_1": "second sibling",
        }
        shown = side.drop(columns=["case_id"]).rename(columns=names)
        blocks.append(Block("table", shown))
    return blocks


def _column_names(part: pd.DataFrame) -> pd.Series:
    suffix = part["over_hwthreads"].map({"sum": " (sum)", "mean": ""})
    return part["metric"].astype(str) + suffix


def _number(value) -> str:
    """Thousands as whole numbers (MBytes/s, MHz), small values with 4 significant digits."""
    if pd.isna(value):
        return ""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def section(result, plots) -> list[Block]:
    return [*counter_blocks(result), *plot_blocks(plots, "counters")]
