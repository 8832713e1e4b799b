"""The history plot (`scalebench history`): one case key's median time or speedup per campaign, in
date order, with its 95 % CI, and a red cross where `check --against` the previous campaign would
have said regressed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.outputs.plots.figure import MARKERS, MAX_SERIES, PALETTE, Plot, plt, save

LABELS = {
    "median_s": "median time [s]",
    "median_undisturbed_s": "median time, undisturbed repetitions [s]",
    "speedup": "speedup",
}


def history_plot(points: pd.DataFrame, metric: str, path: Path) -> Plot:
    name, title = Path(path).stem, f"History: {LABELS[metric]} per campaign"
    if points.empty:
        return Plot(name, title, "history", skipped="no campaign holds the case")
    campaigns = list(dict.fromkeys(points.sort_values(["date", "campaign"])["campaign"]))
    x_of = {c: i for i, c in enumerate(campaigns)}
    fig, ax = plt.subplots(figsize=(max(7, 1 + 0.8 * len(campaigns)), 6))
    series = list(dict.fromkeys(points["series"]))
    for i, key in enumerate(series[:MAX_SERIES]):
        mine = points[points["series"] == key]
        x = np.array([x_of[c] for c in mine["campaign"]], dtype=float)
        y = mine["value"].to_numpy(float)
        err = np.vstack([y - mine["ci_low"].to_numpy(float), mine["ci_high"].to_numpy(float) - y])
        ax.errorbar(
            x, y, yerr=np.nan_to_num(err), color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
            capsize=3, label=key,
        )  # fmt: skip
        bad = (mine["verdict"] == "regressed").to_numpy()
        if bad.any():
            ax.plot(x[bad], y[bad], "x", color="#D55E00", markersize=14, mew=3, label="regressed vs previous")
    ax.set_xticks(range(len(campaigns)))
    labels = points.drop_duplicates("campaign").set_index("campaign")
    ax.set_xticklabels(
        [f"{c}\n{labels.loc[c, 'date'][:10]} {labels.loc[c, 'commit'][:7]}" for c in campaigns],
        rotation=30, ha="right", fontsize=8,
    )  # fmt: skip
    ax.set_ylabel(LABELS[metric])
    ax.set_title(
        title + ("" if len(series) <= MAX_SERIES else f" (first {MAX_SERIES} of {len(series)} cases)")
    )
    handles, texts = ax.get_legend_handles_labels()
    unique = dict(zip(texts, handles, strict=True))
    # Below the axes: the series' names are long (every parameter of the case key).
    ax.legend(unique.values(), unique.keys(), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3))
    return save(fig, Path(path).parent, name, title, "history")
