"""Speedup and efficiency against workers: small multiples with CI bands, the ideal line, the cores marked."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.outputs.plots.figure import (
    MARKERS,
    MAX_LINES,
    PALETTE,
    SERIES_KEYS,
    Plot,
    save,
    series_label,
)
from analysis.stats.best_speedup import estimate_counts
from analysis.variants import VARIANT_PARAMS


def scaling_panels(part: pd.DataFrame) -> list[tuple[str, list[tuple[str, pd.DataFrame]]]]:
    """Small multiples: one panel per binary (per binary and schedule when a binary has more than
    MAX_LINES variants), one line per remaining variant."""
    panels = []
    for binary, rows in part.groupby("binary", sort=True):
        split = rows.groupby(SERIES_KEYS, dropna=False).ngroups > MAX_LINES
        for panel_key, panel in rows.groupby(["schedule"] if split else ["binary"], dropna=False, sort=True):
            title = f"{binary} {panel_key[0]}" if split else str(binary)
            if "scaling" in panel and (panel["scaling"] == "weak").any():
                title += " (weak scaling: p·T1/Tp)"
            # A variant parameter names the lines when it differs between them (the schedule of a
            # split panel is in its title), e.g. the scalar and the SIMD loop of one schedule.
            named = [k for k in VARIANT_PARAMS if k in panel and not (split and k == "schedule")]
            named = [k for k in named if k != "inner" or panel[k].nunique(dropna=False) > 1]
            series = []
            for _, line in panel.groupby(SERIES_KEYS, dropna=False, sort=True):
                first = line.iloc[0]
                label = series_label(first, named)
                if first["model"] == "mpi":
                    label += f" {first['ranks']} ranks"
                series.append((label or str(binary), line.sort_values("workers")))
            panels.append((title, series))
    return panels


def _scaling_figure(part, panels, column: str, core_count, ylabel: str):
    n = len(panels)
    ncols = min(3, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(max(7.5, 4.8 * ncols), 3.8 * nrows + 0.7),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    workers = np.array(sorted(set(part["workers"]) | {1}), dtype=float)
    wmax = float(workers.max())
    for ax, (title, series) in zip(axes.flat, panels, strict=False):
        if column == "speedup":
            bound = np.minimum(workers, core_count) if core_count else workers
            ax.plot(workers, workers, color="0.35", ls="--", lw=1, label="ideal")
            if core_count and wmax > core_count:
                ax.plot(workers, bound, color="0.35", ls=":", lw=1, label="bound: min(workers, cores)")
        else:
            ax.axhline(1.0, color="0.35", ls="--", lw=1, label="ideal")
        for i, (label, line) in enumerate(series):
            style = dict(color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)])
            x = line["workers"].to_numpy(float)
            ax.plot(x, line[column], lw=1.6, ms=5, label=label, **style)
            ax.fill_between(
                x, line[f"{column}_ci_low"], line[f"{column}_ci_high"], color=style["color"], alpha=0.18, lw=0
            )
            bad = line[line["plausibility"] == "implausible"]
            if len(bad):
                ax.plot(bad["workers"], bad[column], ls="none", marker="x", ms=11, mew=2.2, color="#000000")
        if core_count:
            ax.axvline(core_count, color="0.2", ls=":", lw=1.2)
            ax.text(core_count, 0.02, f" {core_count} cores", transform=ax.get_xaxis_transform(), fontsize=9)
            if wmax > core_count:
                ax.axvspan(core_count, wmax * 1.1, color="0.92", zorder=0)
        ax.set_title(title, fontsize=11)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9, loc="best", framealpha=0.85)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    if wmax > 16:
        axes[0][0].set_xscale("log", base=2)
    axes[0][0].set_xticks(workers)
    axes[0][0].set_xticklabels([f"{w:g}" for w in workers])
    if column == "speedup":
        # The ideal line up to many oversubscribed threads would flatten the curves: the axis ends
        # near the data, but always shows the ideal up to the cores.
        top = float(np.nanmax(part["speedup_ci_high"].fillna(part["speedup"])))
        axes[0][0].set_ylim(0, max(1.5, 1.2 * top, 1.1 * min(core_count or wmax, wmax)))
    else:
        top = float(np.nanmax(part["efficiency_ci_high"].fillna(part["efficiency"])))
        axes[0][0].set_ylim(0, max(1.15, 1.1 * top))
    for ax in axes[-1]:
        ax.set_xlabel("workers (threads x ranks)")
    for row in axes:
        row[0].set_ylabel(ylabel)
    return fig


def speedup_plots(sp: pd.DataFrame, cores: dict, out_dir: Path) -> list[Plot]:
    plots = []
    data = sp[sp["speedup"].notna() & (sp["model"] != "serial")]
    if data.empty:
        return [Plot("speedup", "Speedup and efficiency", "scaling", skipped="no case has a valid baseline")]
    if "plausibility" not in data:
        data = data.assign(plausibility="ok")
    for (node, kernel), part in data.groupby(["node_type", "kernel"]):
        panels = scaling_panels(part)
        core_count = cores.get(node, (None, ""))[0]
        baseline = part.iloc[0]["baseline"]
        for column, ylabel, what in (
            ("speedup", "speedup (baseline time / time)", "Speedup"),
            ("efficiency", "efficiency (speedup / workers)", "Parallel efficiency"),
        ):
            fig = _scaling_figure(part, panels, column, core_count, ylabel)
            title = (
                f"{what}: {kernel} on {node} (baseline {baseline}, {estimate_counts(part)}, 95 % CI bands)"
            )
            # wrapped to the figure's width: one panel is narrower than the title (it was cut at both ends)
            width = max(40, int(fig.get_figwidth() * 9))
            fig.suptitle(textwrap.fill(title, width), fontsize=12)
            name = f"{column}-{node}-{kernel}"
            plots.append(save(fig, out_dir, name, f"{what}: {kernel} on {node}", "scaling"))
    return plots
