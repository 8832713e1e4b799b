"""Report section "Node types": which node type runs each kernel best, by how much, and whether the
difference is real. Shown only when a campaign has more than one node type."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.plots.node_types import SECTION
from analysis.outputs.report.blocks import Block


def _ci(value, low, high, digits: str = ".3g") -> str:
    if pd.isna(value):
        return "n/a"
    if pd.isna(low) or pd.isna(high):
        return f"{value:{digits}}"
    return f"{value:{digits}} [{low:{digits}}–{high:{digits}}]"


def best_table(best: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kernel": best["kernel"],
            "node type": best["node_type"],
            "cores": best["cores"],
            "best configuration": best["binary"].astype(str)
            + " "
            + best["schedule"].fillna("").astype(str)
            + " "
            + best["sync"].fillna("").astype(str)
            + " @ "
            + best["threads"].astype(str)
            + "t x "
            + best["ranks"].astype(str)
            + "r",
            "median time [s] (95 % CI)": [
                _ci(m, lo, hi, ".4g")
                for m, lo, hi in zip(best["median_s"], best["ci_low_s"], best["ci_high_s"], strict=True)
            ],
            "per node": [
                f"{r:.3g} {u}" for r, u in zip(best["rate_per_node"], best["rate_unit"], strict=True)
            ],
            "per core": [
                f"{r:.3g} {u}" for r, u in zip(best["rate_per_core"], best["rate_unit"], strict=True)
            ],
            "efficiency at full node": [
                _ci(e, lo, hi, ".2f")
                for e, lo, hi in zip(
                    best["efficiency_full_node"],
                    best["efficiency_full_node_ci_low"],
                    best["efficiency_full_node_ci_high"],
                    strict=True,
                )
            ],
        }
    )


def verdicts(nt: pd.DataFrame) -> list[str]:
    """One sentence per kernel and node-type pair: how many matched cases differ, and by how much."""
    out = []
    for (kernel, a, b), part in nt.groupby(["kernel", "node_type_a", "node_type_b"], observed=True):
        sig = part[part["significant"]]
        faster_a = int((sig["faster"] == a).sum())
        faster_b = int((sig["faster"] == b).sum())
        ratio = part["ratio_b_over_a"]
        out.append(
            f"{kernel}: {len(part)} cases measured on both {a} and {b}; {a} significantly faster in "
            f"{faster_a}, {b} in {faster_b}, no significant difference in {len(part) - len(sig)} "
            f"(time ratio {b}/{a} from {ratio.min():.3g} to {ratio.max():.3g})."
        )
    return out


def section(result, plots) -> list[Block]:
    """The section's blocks; none (so no section) for a campaign with one node type."""
    block = Block
    if len(result.cores) < 2:
        return []
    b = []
    best = result.node_types_best
    if len(best):
        b.append(
            block(
                "p",
                "Best configuration per node type and kernel (lowest median time among valid cases "
                "with at most one worker per core, oversubscribed ones only where nothing else was "
                "measured); "
                "rates are work per second of the compute region; efficiency at full node is that "
                "variant's efficiency at as many workers as the node type has cores (95 % CIs).",
            )
        )
        b.append(block("table", best_table(best)))
    nt = result.node_types
    if len(nt):
        for line in verdicts(nt):
            b.append(block("p", line))
        shown = nt.assign(
            faster=nt["faster"].where(nt["significant"], "no significant difference"),
            ratio=[
                _ci(r, lo, hi)
                for r, lo, hi in zip(
                    nt["ratio_b_over_a"], nt["ratio_ci_low"], nt["ratio_ci_high"], strict=True
                )
            ],
        )[
            ["kernel", "binary", "schedule", "sync", "threads", "ranks", "node_type_a", "node_type_b"]
            + ["median_a_s", "median_b_s", "ratio", "p_holm", "faster"]
        ]
        b.append(
            block("p", "The same case on two node types (time ratio b/a with 95 % CI; Holm-corrected p):")
        )
        b.append(block("table", shown))
    else:
        b.append(block("p", "No case was measured on more than one node type: nothing to pair."))
    for plot in (p for p in plots if p.section == SECTION):
        b.append(block("img", plot))
    counters = counters_side_by_side(result)
    if len(counters):
        b.append(block("p", "Counters of the paired cases, per node type (median over repetitions):"))
        b.append(block("table", counters))
    return b


def counters_side_by_side(result) -> pd.DataFrame:
    """Median counter metrics (sum over hardware threads) of the paired cases, one column per node type."""
    nt = result.node_types
    records = result.stats.records
    metrics = [c for c in records.columns if c.startswith("ctr_") and c.endswith("_sum")]
    if nt.empty or not metrics:
        return pd.DataFrame()
    cases = pd.concat(
        [
            nt[["binary", "threads", "ranks", "case_a", "node_type_a"]].set_axis(
                ["binary", "threads", "ranks", "case_id", "node_type"], axis=1
            ),
            nt[["binary", "threads", "ranks", "case_b", "node_type_b"]].set_axis(
                ["binary", "threads", "ranks", "case_id", "node_type"], axis=1
            ),
        ]
    ).drop_duplicates("case_id")
    medians = (
        records[records["case_id"].isin(cases["case_id"])].groupby("case_id", observed=True)[metrics].median()
    )
    both = cases.merge(medians, left_on="case_id", right_index=True).dropna(subset=metrics, how="all")
    if both.empty:
        return pd.DataFrame()
    long = both.melt(["binary", "threads", "ranks", "node_type"], metrics, "metric").dropna(subset=["value"])
    return long.pivot_table(
        index=["binary", "threads", "ranks", "metric"], columns="node_type", values="value", aggfunc="median"
    ).reset_index()
