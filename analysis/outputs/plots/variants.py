"""Median time of variants against workers: schedules, sync variants, C vs Fortran, MPI ranks vs threads."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis.outputs.plots.figure import (
    MAX_SERIES,
    Plot,
    log_time_axis,
    plot_medians,
    save,
    x_axis,
)


def _variant_time_plot(summary, dim, fixed, out_dir, name, title, section, log2=False) -> list[Plot]:
    """Median time vs workers, one line per value of `dim`, for every group that has >= 2 values."""
    s = summary[summary["valid"] & (summary["model"] != "serial")]
    keys = ["node_type", "binary", "problem", "pin", "counter_group", "inner", "ranks"] + fixed
    plots = []
    for group_key, part in s.groupby(keys, dropna=False):
        if part[dim].nunique() < 2 or part["workers"].nunique() < 2:
            continue
        fig, ax = plt.subplots(figsize=(8, 4.8))
        for value, line in part.groupby(dim):
            plot_medians(ax, line, marker="o", ms=4, label=f"{dim}={value}")
        if log2 or part["workers"].max() > 16:
            ax.set_xscale("log", base=2)
        ticks = sorted(part["workers"].unique())
        ax.set_xticks(ticks, [f"{w:g}" for w in ticks])
        log_time_axis(ax)
        ax.set_xlabel("threads" if (part["ranks"] == 1).all() else "workers (threads x ranks)")
        node, binary = group_key[0], group_key[1]
        extra = ", ".join(f"{k}={v}" for k, v in zip(fixed, group_key[len(keys) - len(fixed) :], strict=True))
        ax.set_title(f"{binary} on {node}" + (f" ({extra})" if extra else ""), fontsize=10)
        ax.legend(fontsize=8)
        plots.append(
            save(
                fig, out_dir, f"{name}-{node}-{binary}-{len(plots)}", f"{title}: {binary} on {node}", section
            )
        )
        if len(plots) >= 6:
            break
    return plots or [Plot(name, title, section, skipped=f"no variant sweep with two or more {dim} values")]


def schedule_plots(summary, out_dir):
    return _variant_time_plot(summary, "schedule", ["sync"], out_dir, "schedules", "Schedules", "schedules")


def sync_plots(summary, out_dir):
    return _variant_time_plot(
        summary, "sync", ["schedule"], out_dir, "sync", "Sync variants", "sync", log2=True
    )


def _sync_label(sync) -> str:
    return "" if pd.isna(sync) or sync == "none" else f" {sync}"


def language_plot(summary: pd.DataFrame, out_dir: Path) -> list[Plot]:
    data = summary[summary["valid"] & (summary["model"] != "serial")]
    keys = ["node_type", "kernel", "model", "schedule", "sync", "problem"]
    groups = [(k, g) for k, g in data.groupby(keys, dropna=False) if g["lang"].nunique() >= 2]
    if not groups:
        return [
            Plot(
                "languages", "C vs Fortran", "languages", skipped="no variant measured in both C and Fortran"
            )
        ]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for key, g in groups[:MAX_SERIES]:
        for lang, line in g.groupby("lang"):
            name = {"c": "C", "f": "Fortran"}.get(str(lang), str(lang))
            plot_medians(
                ax,
                line,
                marker="o" if lang == "c" else "s",
                ms=4,
                label=f"{key[1]} {key[2]} {key[3]}{_sync_label(key[4])} [{name}] on {key[0]}",
            )
    log_time_axis(ax)
    x_axis(ax, data["workers"].to_numpy(), "threads")
    ax.legend(fontsize=7)
    ax.set_title("C vs Fortran, same kernel and variant")
    return [save(fig, out_dir, "languages", "C vs Fortran", "languages")]


def mpi_plot(summary: pd.DataFrame, out_dir: Path) -> list[Plot]:
    mpi = summary[summary["valid"] & (summary["model"] == "mpi")]
    if mpi.empty or mpi["ranks"].nunique() < 2:
        return [Plot("mpi", "MPI ranks vs threads", "mpi", skipped="no MPI cases with several rank counts")]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    # One series per kernel problem and rank count: different kernels never share a line.
    for (node, binary, _problem, ranks), line in mpi.groupby(["node_type", "binary", "problem", "ranks"]):
        style = "-o" if line["threads"].nunique() > 1 else "o"
        label = f"{binary}, {ranks} rank{'s' if ranks > 1 else ''} on {node}"
        plot_medians(ax, line, fmt=style, ms=5, label=label)
    log_time_axis(ax, "median wall time (slowest rank) [s]")
    x_axis(ax, mpi["workers"].to_numpy(), "workers (ranks x threads per rank)")
    ax.legend(fontsize=8)
    ax.set_title("Same worker count split into ranks and threads")
    return [save(fig, out_dir, "mpi", "MPI ranks vs threads", "mpi")]
