"""Hardware counter metrics against workers."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis.outputs.plots.figure import (
    Plot,
    save,
)
from sbcore.case_shape import workers as case_workers


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
    workers = case_workers(ok["threads"], ok["ranks"])
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
    return [save(fig, out_dir, "counters", "Counter metrics vs threads", "counters")]
