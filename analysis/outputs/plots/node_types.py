"""Node types side by side: per kernel, speedup and absolute rate against workers, one line per node type.

Each point is the fastest valid variant of that kernel and problem at that worker count on that node type
(the envelope a user can reach there), with its bootstrap 95 % CI; a dotted vertical line marks each node
type's physical cores in the node type's colour.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from analysis.outputs.plots.figure import Plot, save  # noqa: E402
from analysis.stats.node_types import best_envelope  # noqa: E402

SECTION = "node_types"
# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def node_type_plots(result, out_dir: Path) -> list[Plot]:
    node_types = sorted(result.cores)
    if len(node_types) < 2:
        return []
    env = best_envelope(result.summary, result.speedup, result.stats.records, result.cores)
    plots = []
    for (kernel, problem), part in env.groupby(["kernel", "problem"], observed=True):
        if part["node_type"].nunique() < 2:
            continue
        fig, (ax_s, ax_r) = plt.subplots(1, 2, figsize=(11, 4.2))
        for i, nt in enumerate(node_types):
            line = part[part["node_type"] == nt].sort_values("workers")
            if line.empty:
                continue
            colour = COLOURS[i % len(COLOURS)]
            x = line["workers"].to_numpy(dtype=float)
            for ax, col, low, high in (
                (ax_s, "speedup", "speedup_ci_low", "speedup_ci_high"),
                (ax_r, "rate_per_node", "rate_ci_low", "rate_ci_high"),
            ):
                y = line[col].to_numpy(dtype=float)
                err = np.vstack([y - line[low].to_numpy(dtype=float), line[high].to_numpy(dtype=float) - y])
                ax.errorbar(x, y, yerr=np.nan_to_num(err), marker="o", capsize=3, color=colour, label=nt)
            cores = result.cores[nt][0]
            if cores:
                for ax in (ax_s, ax_r):
                    ax.axvline(cores, color=colour, linestyle=":", linewidth=1.2)
        xmax = part["workers"].max()
        ax_s.plot([1, xmax], [1, xmax], color="0.6", linewidth=0.8, label="ideal")
        ax_s.set_ylabel("speedup vs best serial (same node type)")
        ax_r.set_ylabel(f"{part['rate_unit'].iloc[0]} per node")
        for ax in (ax_s, ax_r):
            ax.set_xlabel("workers (threads x ranks); dotted: cores of each node type")
            if xmax > 16:
                ax.set_xscale("log", base=2)
            ax.grid(alpha=0.3)
        ax_s.legend(fontsize=9)
        fig.suptitle(f"{kernel}: fastest variant per worker count, by node type")
        plots.append(
            save(
                fig,
                out_dir,
                f"node_types_{kernel}_{len(plots)}",
                f"{kernel} by node type (problem {problem})",
                SECTION,
            )
        )
    return plots
