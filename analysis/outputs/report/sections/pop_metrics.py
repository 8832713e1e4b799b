"""Where each headline case loses its efficiency, in POP's terms (stats/pop_metrics.py): one sentence
per variant at its largest worker count up to one per core, naming the largest loss, whether an
imbalance is in the work (the schedule deals it unevenly) or only in the time (the host: competing
load, a slower CPU), which schedule of the same binary removes it, and whether a run-time schedule
absorbed a slower worker (uneven work, even times); then the factors' plots and
table (pop_metrics.csv)."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text, folded, plot_blocks, variant_text
from analysis.stats.pop_metrics import LOSS_FACTORS
from sbcore.case_shape import oversubscribed

BALANCED = 0.95  # a balance at or above this is "no imbalance" in the sentences
WORK_EVEN = 0.98  # work balance at or above this: the work was evenly dealt


METHODS = {
    "task-cpu": "its threads' CPU time, read from /proc while it ran",
    "ompt (ompt)": "scalebench's OMPT tool in its OpenMP runtime",
    "ompt (libomp)": "scalebench's OMPT tool, LLVM's libomp standing in for libgomp",
}


def _method(row) -> str:
    """How a user's program's per-worker times were measured (the kernels time their workers themselves)."""
    method = row.get("method", "harness")
    if method in (None, "harness") or method != method:
        return ""
    return f" [per-worker times: {method}, {METHODS.get(method, 'as recorded')}]"


def _cause(row) -> str:
    if row["largest_loss"] != "load_balance":
        return ""
    if row["work_balance"] != row["work_balance"]:  # a program: no work count, the time balance alone
        return ""
    if row["work_balance"] >= WORK_EVEN:
        return (
            f" (work balance {row['work_balance']:.2f}: the work was dealt evenly, so the host, "
            "not the schedule, made the workers' times differ: competing load or a slower CPU)"
        )
    return f" (work balance {row['work_balance']:.2f}: the schedule dealt the work unevenly)"


def _remedy(row, family: pd.DataFrame) -> str:
    if row["largest_loss"] != "load_balance":
        return ""
    better = family[(family["workers"] == row["workers"]) & (family["load_balance_lo"] >= BALANCED)]
    better = better[(better["schedule"] != row["schedule"]) | (better["sync"] != row["sync"])]
    if better.empty:
        return ""
    best = better.sort_values("efficiency", ascending=False).iloc[0]
    return f"; `{best['schedule']}` scheduling removes it (load balance {best['load_balance']:.2f})"


def _host_imbalance(row) -> str:
    """An imbalance in time only, when it is not the largest loss (a slower worker's longer useful
    time also lowers computation scaling, which may come first)."""
    if row["largest_loss"] == "load_balance" or row["load_balance"] >= BALANCED:
        return ""
    if not row["work_balance"] >= WORK_EVEN:  # uneven, or not counted (a program)
        return ""
    return (
        f"; its load balance {row['load_balance']:.2f} with the work dealt evenly (work balance "
        f"{row['work_balance']:.2f}) is the host's doing, not the schedule's: competing load or a "
        "slower CPU"
    )


def _absorbed(row) -> str:
    """An uneven work share with even times: a schedule that deals work at run time gave the slower
    worker (competing load, a slower CPU) less of it."""
    if not row["work_balance"] < WORK_EVEN or row["load_balance"] < BALANCED:  # even, or not counted
        return ""
    return (
        f"; its work balance {row['work_balance']:.2f} with even times (load balance "
        f"{row['load_balance']:.2f}) means the schedule absorbed a slower worker (competing load or a "
        "slower CPU) by giving it less work"
    )


def sentence(row, family: pd.DataFrame) -> str:
    loss = 1 - row[row["largest_loss"]]
    name = LOSS_FACTORS[row["largest_loss"]]
    efficiency = ci_text(row["efficiency"], row["efficiency_lo"], row["efficiency_hi"], digits=2)
    case = f"`{variant_text(row)}` on {row['workers']} workers (efficiency {efficiency})"
    if loss <= 1 - BALANCED:
        return f"{case} loses almost nothing{_absorbed(row)}{_method(row)}."
    why = f"{_cause(row)}{_remedy(row, family)}{_host_imbalance(row)}{_absorbed(row)}"
    return f"{case} loses {loss:.0%} to {name}{why}{_method(row)}."


TABLE_COLUMNS = [
    "binary",
    "schedule",
    "sync",
    "workers",
    "work_balance",
    "load_balance",
    "sync_efficiency",
    "serialisation_efficiency",
    "transfer_efficiency",
    "computation_scaling",
    "frequency_scaling",
    "efficiency",
    "serial_cost",
    "largest_loss",
]


def section(result, plots) -> list[Block]:
    pop = result.pop_metrics
    if pop.empty:
        return []
    scaled = pop[pop["workers"] > 1]
    headline = scaled.loc[
        within_cores(scaled, getattr(result, "cores", {}))
        .groupby(["node_type", "binary", "schedule", "sync"], dropna=False)["workers"]
        .idxmax()
    ]
    families = {key: part for key, part in scaled.groupby(["node_type", "binary"], dropna=False)}
    sentences = [sentence(row, families[(row["node_type"], row["binary"])]) for _, row in headline.iterrows()]
    blocks = [
        Block(
            "p",
            "Each efficiency (against the variant's own 1-worker case) is the product of load balance "
            "(mean ÷ largest useful time per worker), synchronisation and scheduling efficiency "
            "(largest useful time ÷ wall time; for MPI, serialisation × transfer) and computation "
            "scaling (useful time at 1 worker ÷ total useful time), divided by the 1-worker case's own "
            "parallel efficiency (docs/pop-metrics.md).",
        ),
        Block("ul", sentences),
        *([Block("p", counter_sentence(pop))] if "counter_scaling" in pop else []),
        *plot_blocks(plots, "pop-metrics"),
        folded("POP factors per case (pop_metrics.csv)", [Block("table", pop[table_columns(pop)].round(3))]),
    ]
    return blocks


OPTIONAL = {"serialisation_efficiency", "transfer_efficiency"}


def table_columns(pop: pd.DataFrame) -> list[str]:
    """TABLE_COLUMNS without the columns no case has (serialisation and transfer: MPI only), with
    instruction and IPC scaling where some case has them."""
    columns = [c for c in TABLE_COLUMNS if c in pop and (c not in OPTIONAL or pop[c].notna().any())]
    if "counter_scaling" in pop and (pop["counter_scaling"] == "measured").any():
        return [*columns[:-3], "instruction_scaling", "ipc_scaling", *columns[-3:]]
    return columns


def counter_sentence(pop: pd.DataFrame) -> str:
    """Whether computation scaling could be split into instruction and IPC scaling, and if not why."""
    status = pop["counter_scaling"]
    measured = int((status == "measured").sum())
    why = sorted(set(status[status != "measured"].str.removeprefix("unavailable: ")))
    parts = [f"measured for {measured} of {len(pop)} cases"] if measured else []
    if why:
        parts.append("unavailable" + (" elsewhere" if measured else "") + ": " + "; ".join(why))
    return (
        "Computation scaling split into instruction scaling and IPC scaling (likwid CPI per hardware "
        f"thread): {', '.join(parts)}."
    )


def within_cores(table: pd.DataFrame, cores: dict) -> pd.DataFrame:
    """The rows at up to one worker per core of their node type (more workers than cores share cores:
    what such a case loses is oversubscription, not a finding about the variant); every row where the
    node's core count is unknown."""
    limit = table["node_type"].map(lambda nt: (cores.get(nt) or (None, ""))[0]).astype(float)
    return table[~oversubscribed(table["workers"], limit)]
