"""Plots (matplotlib, Agg) into analysis/plots/, each as PNG and SVG.

Lines join points only along thread sweeps (a trend); everything else gets markers. Speedup and
efficiency are small multiples (one panel per binary, or per binary and schedule when it has many
variants; shared axes; CIs as bands; ideal line; the cores marked and the oversubscribed region
shaded; implausible speedups crossed out). Colours: Okabe & Ito's colour-blind-safe palette.
A plot without data is skipped and the reason returned, so the report can say so.
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

from analysis.variants import VARIANT_PARAMS  # noqa: E402
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


def _save(fig, out_dir: Path, name: str, title: str, section: str) -> Plot:
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
    fig.tight_layout()
    for path in (png, svg):
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=110, format=path.suffix[1:])
        write_atomic(path, buffer.getvalue(), make_parents=True)
    plt.close(fig)
    return Plot(name, title, section, png, svg)


def _series_label(row: pd.Series, columns: list[str]) -> str:
    return " ".join(str(row[c]) for c in columns if pd.notna(row[c]) and str(row[c]) not in ("", "none"))


def _x_axis(ax, workers: np.ndarray, label: str = "workers (threads x ranks)") -> None:
    if workers.max() > 16:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(label)


def _shade_oversubscribed(ax, cores: int | None, xmax: float) -> None:
    if cores and xmax > cores:
        ax.axvspan(cores, xmax * 1.05, color="0.9", zorder=0, label=f"oversubscribed (> {cores} cores)")


def _panels(part: pd.DataFrame) -> list[tuple[str, list[tuple[str, pd.DataFrame]]]]:
    """Small multiples: one panel per binary (per binary and schedule when a binary has more than
    MAX_LINES variants), one line per remaining variant."""
    panels = []
    for binary, rows in part.groupby("binary", sort=True):
        split = rows.groupby(SERIES_KEYS, dropna=False).ngroups > MAX_LINES
        for panel_key, panel in rows.groupby(["schedule"] if split else ["binary"], dropna=False, sort=True):
            title = f"{binary} {panel_key[0]}" if split else str(binary)
            # A variant parameter names the lines when it differs between them (the schedule of a
            # split panel is in its title), e.g. the scalar and the SIMD loop of one schedule.
            named = [k for k in VARIANT_PARAMS if k in panel and not (split and k == "schedule")]
            named = [k for k in named if k != "inner" or panel[k].nunique(dropna=False) > 1]
            series = []
            for _, line in panel.groupby(SERIES_KEYS, dropna=False, sort=True):
                first = line.iloc[0]
                label = _series_label(first, named)
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
        panels = _panels(part)
        core_count = cores.get(node, (None, ""))[0]
        baseline = part.iloc[0]["baseline"]
        for column, ylabel, what in (
            ("speedup", "speedup (baseline time / time)", "Speedup"),
            ("efficiency", "efficiency (speedup / workers)", "Parallel efficiency"),
        ):
            fig = _scaling_figure(part, panels, column, core_count, ylabel)
            fig.suptitle(f"{what}: {kernel} on {node} (baseline {baseline}, 95 % CI bands)", fontsize=12)
            name = f"{column}-{node}-{kernel}"
            plots.append(_save(fig, out_dir, name, f"{what}: {kernel} on {node}", "scaling"))
    return plots


def _plot_medians(ax, line: pd.DataFrame, **style) -> None:
    """Median time vs workers with the bootstrap CI of each median as error bars."""
    line = line.sort_values("workers")
    err = [line["median_s"] - line["ci_low_s"], line["ci_high_s"] - line["median_s"]]
    ax.errorbar(line["workers"], line["median_s"], yerr=err, capsize=3, **style)


def _log_time_axis(ax, ylabel: str = "median wall time of the compute region [s]") -> None:
    ax.set_yscale("log")
    # Plain numbers (0.3, not 3 x 10^-1) on the log axis.
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.3g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%.3g"))
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")


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
            _plot_medians(ax, line, marker="o", ms=4, label=f"{dim}={value}")
        if log2 or part["workers"].max() > 16:
            ax.set_xscale("log", base=2)
        ticks = sorted(part["workers"].unique())
        ax.set_xticks(ticks, [f"{w:g}" for w in ticks])
        _log_time_axis(ax)
        ax.set_xlabel("threads" if (part["ranks"] == 1).all() else "workers (threads x ranks)")
        node, binary = group_key[0], group_key[1]
        extra = ", ".join(f"{k}={v}" for k, v in zip(fixed, group_key[len(keys) - len(fixed) :], strict=True))
        ax.set_title(f"{binary} on {node}" + (f" ({extra})" if extra else ""), fontsize=10)
        ax.legend(fontsize=8)
        plots.append(
            _save(
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
            _plot_medians(
                ax,
                line,
                marker="o" if lang == "c" else "s",
                ms=4,
                label=f"{key[1]} {key[2]} {key[3]}{_sync_label(key[4])} [{name}] on {key[0]}",
            )
    _log_time_axis(ax)
    _x_axis(ax, data["workers"].to_numpy(), "threads")
    ax.legend(fontsize=7)
    ax.set_title("C vs Fortran, same kernel and variant")
    return [_save(fig, out_dir, "languages", "C vs Fortran", "languages")]


def mpi_plot(summary: pd.DataFrame, out_dir: Path) -> list[Plot]:
    mpi = summary[summary["valid"] & (summary["model"] == "mpi")]
    if mpi.empty or mpi["ranks"].nunique() < 2:
        return [Plot("mpi", "MPI ranks vs threads", "mpi", skipped="no MPI cases with several rank counts")]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    # One series per kernel problem and rank count: different kernels never share a line.
    for (node, binary, _problem, ranks), line in mpi.groupby(["node_type", "binary", "problem", "ranks"]):
        style = "-o" if line["threads"].nunique() > 1 else "o"
        label = f"{binary}, {ranks} rank{'s' if ranks > 1 else ''} on {node}"
        _plot_medians(ax, line, fmt=style, ms=5, label=label)
    _log_time_axis(ax, "median wall time (slowest rank) [s]")
    _x_axis(ax, mpi["workers"].to_numpy(), "workers (ranks x threads per rank)")
    ax.legend(fontsize=8)
    ax.set_title("Same worker count split into ranks and threads")
    return [_save(fig, out_dir, "mpi", "MPI ranks vs threads", "mpi")]


def counter_plot(records: pd.DataFrame, out_dir: Path) -> list[Plot]:
    metrics = [c for c in records.columns if c.startswith("ctr_") and c.endswith("_avg")]
    metrics = [c for c in metrics if c == "ctr_cpi_avg"] or metrics[:2]  # the rest: counter tables
    if not metrics or records.get("counters_status") is None or (records["counters_status"] != "ok").all():
        return [
            Plot("counters", "Hardware counters", "counters", skipped="no record with counters (status ok)")
        ]
    ok = records[records["counters_status"] == "ok"]
    # One series per binary and counter group: the same metric of two groups are two measurements.
    ok = ok.assign(
        binary_label=ok["binary_label"].astype(str) + " (" + ok["counters_group"].astype(str) + ")"
    )
    workers = ok["threads"] * ok["ranks"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        table = (
            ok.assign(workers=workers).groupby(["binary_label", "workers"], observed=True)[metric].median()
        )
        for label, line in table.groupby(level=0):
            ax.plot(line.index.get_level_values(1), line.to_numpy(), "-o", ms=4, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("workers (threads x ranks)")
        ax.set_title(metric[4:-4].replace("_", " "))
        ax.set_ylabel("mean over hardware threads, median over reps", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return [_save(fig, out_dir, "counters", "Counter metrics vs threads", "counters")]


def read_pgm(path: Path) -> np.ndarray:
    """P5 PGM (8- or 16-bit, big-endian) -> 2-D array."""
    data = path.read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P5":
        raise ValueError(f"{path}: not a binary PGM (magic {fields[0]!r})")
    width, height, maxval = (int(f) for f in fields[1:])
    dtype = ">u2" if maxval > 255 else "u1"
    pixels = np.frombuffer(data, dtype=dtype, count=width * height, offset=pos + 1)
    return pixels.reshape(height, width)


def mandelbrot_plot(campaign_dir: Path, out_dir: Path) -> list[Plot]:
    dumps = sorted(
        p for p in campaign_dir.rglob("*.pgm") if "analysis" not in p.relative_to(campaign_dir).parts
    )
    if not dumps:
        return [
            Plot("mandelbrot", "Mandelbrot image", "image", skipped="no --dump PGM in the campaign directory")
        ]
    try:
        image = read_pgm(dumps[0])
    except (ValueError, OSError) as err:
        return [Plot("mandelbrot", "Mandelbrot image", "image", skipped=f"{dumps[0]}: unreadable ({err})")]
    fig, ax = plt.subplots(figsize=(7, 7 * image.shape[0] / image.shape[1] + 0.5))
    shown = ax.imshow(np.log1p(image.astype(float)), cmap="magma", interpolation="nearest")
    fig.colorbar(shown, ax=ax, label="log(1 + iteration count)")
    ax.set_title(f"{dumps[0].name} ({image.shape[1]} x {image.shape[0]} pixels)", fontsize=10)
    ax.set_xlabel("pixel column")
    ax.set_ylabel("pixel row")
    return [_save(fig, out_dir, "mandelbrot", f"Mandelbrot image from {dumps[0].name}", "image")]


def all_plots(result) -> list[Plot]:
    out_dir = result.out_dir / "plots"
    records = result.stats.records
    if len(records):
        records = records.assign(
            binary_label=records["kernel"].astype(str)
            + "-"
            + records["lang"].astype(str)
            + "-"
            + records["model"].astype(str)
            + " "
            + records["schedule"].astype(str)
            + " on "
            + records["node_type"].astype(str)
        )
    plots = speedup_plots(result.speedup, result.cores, out_dir)
    plots += schedule_plots(result.summary, out_dir)
    plots += sync_plots(result.summary, out_dir)
    plots += language_plot(result.summary, out_dir)
    plots += mpi_plot(result.summary, out_dir)
    plots += counter_plot(records, out_dir)
    plots += mandelbrot_plot(result.campaign.path, out_dir)
    from analysis.node_types_plot import node_type_plots  # imports this module: no top-level import

    plots += node_type_plots(result, out_dir)
    return plots
