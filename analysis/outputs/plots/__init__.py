"""Every plot of the report, one module per plot family (figure.py: what they share). To add a plot,
write its function in its family's module (or a new one) and call it in all_plots."""

from __future__ import annotations

from analysis.outputs.plots.counters import counter_plot
from analysis.outputs.plots.figure import Plot
from analysis.outputs.plots.mandelbrot import mandelbrot_plot
from analysis.outputs.plots.node_types import node_type_plots
from analysis.outputs.plots.pop_metrics import pop_plots
from analysis.outputs.plots.scaling import speedup_plots
from analysis.outputs.plots.variants import language_plot, mpi_plot, schedule_plots, sync_plots


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
    plots += node_type_plots(result, out_dir)
    plots += pop_plots(result.pop_metrics, out_dir)
    return plots
