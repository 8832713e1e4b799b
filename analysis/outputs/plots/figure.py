"""Plots (matplotlib, Agg) into analysis/plots/ (in the campaign), each as PNG and SVG.

Lines join points only along thread sweeps (a trend); everything else gets markers. Speedup and
efficiency are small multiples (one panel per binary, or per binary and schedule when it has many
variants; shared axes; CIs as bands; ideal line; the cores marked and the oversubscribed region
shaded; implausible speedups crossed out). Colours: Okabe & Ito's colour-blind-safe palette.
A plot without data is skipped and the reason returned, so the report can say so.

This module holds what every plot shares (its file pair, palette, axes); each plot family is one module
beside it, and analysis/outputs/plots/__init__.py calls them all.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sbcore.atomic import write_atomic  # noqa: E402

MAX_SERIES = 10  # more lines than this are unreadable; the rest stay in speedup.csv
MAX_LINES = 4  # lines per small-multiple panel before the panel is split by schedule
SERIES_KEYS = ["binary", "schedule", "sync", "inner", "pin", "ranks"]
# Okabe & Ito's colour-blind-safe palette (black left for reference lines), with distinct markers so
# the lines also differ in greyscale.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
plt.rcParams.update(
    {
        "font.size": 11,
        "axes.titlesize": 11,
        "axes.labelsize": 11,
        "legend.fontsize": 9,
        "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    }
)


@dataclass
class Plot:
    name: str
    title: str
    section: str
    png: Path | None = None
    svg: Path | None = None
    skipped: str | None = None  # reason, when there was nothing to plot


def save(fig, out_dir: Path, name: str, title: str, section: str) -> Plot:
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
    fig.tight_layout()
    for path in (png, svg):
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=110, format=path.suffix[1:])
        write_atomic(path, buffer.getvalue(), make_parents=True)
    plt.close(fig)
    return Plot(name, title, section, png, svg)


def series_label(row: pd.Series, columns: list[str]) -> str:
    return " ".join(str(row[c]) for c in columns if pd.notna(row[c]) and str(row[c]) not in ("", "none"))


def x_axis(ax, workers: np.ndarray, label: str = "workers (threads x ranks)") -> None:
    if workers.max() > 16:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(label)


def shade_oversubscribed(ax, cores: int | None, xmax: float) -> None:
    if cores and xmax > cores:
        ax.axvspan(cores, xmax * 1.05, color="0.9", zorder=0, label=f"oversubscribed (> {cores} cores)")


def plot_medians(ax, line: pd.DataFrame, **style) -> None:
    """Median time vs workers with the bootstrap CI of each median as error bars."""
    line = line.sort_values("workers")
    err = [line["median_s"] - line["ci_low_s"], line["ci_high_s"] - line["median_s"]]
    ax.errorbar(line["workers"], line["median_s"], yerr=err, capsize=3, **style)


def log_time_axis(ax, ylabel: str = "median wall time of the compute region [s]") -> None:
    ax.set_yscale("log")
    # Plain numbers (0.3, not 3 x 10^-1) on the log axis.
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.3g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%.3g"))
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
