"""The POP efficiency factors against workers: one small multiple per binary and node type, one panel
per schedule/sync variant, lines for load balance, synchronisation efficiency and computation scaling,
which multiply (with the 1-worker parallel efficiency) to the measured efficiency, drawn in black; for
MPI, synchronisation's two parts (serialisation x transfer) dashed."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis.outputs.plots.figure import MAX_SERIES, Plot, save, x_axis

SECTION = "pop-metrics"
LINES = {
    "load_balance": "load balance (time)",
    "sync_efficiency": "synchronisation / scheduling",
    "computation_scaling": "computation scaling",
    "efficiency": "efficiency (measured)",
}
SPLIT = {"serialisation_efficiency": "serialisation (MPI)", "transfer_efficiency": "transfer (MPI)"}


def pop_plots(pop: pd.DataFrame, out_dir: Path) -> list[Plot]:
    if pop.empty:  # no kernel reported per-worker measurements: no plot, and no section
        return []
    plots = []
    for (node, binary), family in pop.groupby(["node_type", "binary"], dropna=False):
        variants = list(family.groupby(["schedule", "sync"], dropna=False))[:MAX_SERIES]
        fig, axes = plt.subplots(
            1, len(variants), figsize=(3.6 * len(variants) + 1, 3.8), sharey=True, squeeze=False
        )
        for ax, ((schedule, sync), line) in zip(axes[0], variants, strict=True):
            line = line.sort_values("workers")
            for i, (column, label) in enumerate(LINES.items()):
                black = column == "efficiency"
                ax.plot(
                    line["workers"],
                    line[column],
                    marker="os^D"[i],
                    ms=4,
                    label=label,
                    color="black" if black else None,
                    lw=2 if black else 1,
                )
                ax.fill_between(
                    line["workers"],
                    line[f"{column}_lo"],
                    line[f"{column}_hi"],
                    alpha=0.15,
                    color="black" if black else None,
                )
            for column, label in SPLIT.items():  # MPI: the two parts of synchronisation, dashed
                if column in line and line[column].notna().any():
                    ax.plot(line["workers"], line[column], ls="--", lw=1, marker=".", label=label)
            x_axis(ax, line["workers"].to_numpy())
            ax.set_title(f"{schedule} {sync}" if sync not in ("none", None) else str(schedule), fontsize=10)
            ax.axhline(1.0, color="0.6", lw=0.8)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("factor (1 = no loss)")
        axes[0][-1].legend(fontsize=8, loc="lower left")
        title = f"POP efficiency factors: {binary} on {node}"
        plots.append(save(fig, out_dir, f"pop-{node}-{binary}", title, SECTION))
    return plots
