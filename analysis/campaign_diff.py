"""Two campaigns (e.g. before/after a change): per matching case_id, ratio of medians B/A with a bootstrap
CI and the Mann–Whitney p-value (Holm-corrected over all matched cases)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from scipy import stats

from analysis.load import load_records
from analysis.stats import ratio_ci, summarize
from analysis.variant_tests import holm
from sbcore.atomic import write_atomic
from sbcore.errors import ScalebenchError

COLUMNS = [
    "case_id",
    "node_type",
    "binary",
    "threads",
    "ranks",
    "n_a",
    "n_b",
    "median_a_s",
    "median_b_s",
    "ratio_b_over_a",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "p_holm",
]


def compare_campaigns(dir_a, dir_b, n_resamples: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    notes = []
    loaded = []
    for path in (dir_a, dir_b):
        data = load_records(path)
        for file, reason in data.problems.itertuples(index=False):
            notes.append(f"{path.name}/{file}: skipped: {reason}")
        loaded.append(summarize(data.records, n_resamples, seed))
    a, b = loaded
    if a.table.empty or b.table.empty:
        raise ScalebenchError(f"compare: {'A' if a.table.empty else 'B'} has no readable records")
    ta = a.table.reset_index(names="row_a")
    tb = b.table.reset_index(names="row_b")
    info = b.records.drop_duplicates("case_id").set_index("case_id")
    matched = ta.merge(tb, on="case_id", suffixes=("_a", "_b"))
    if matched.empty:
        raise ScalebenchError(f"compare: {dir_a.name} and {dir_b.name} have no case_id in common")
    rng = np.random.default_rng(seed + 7)
    row_a, row_b = matched["row_a"].to_numpy(), matched["row_b"].to_numpy()
    low, high = ratio_ci(b.dist[row_b], a.dist[row_a], rng)
    p = np.full(len(matched), np.nan)
    for i, (ra, rb) in enumerate(zip(row_a, row_b, strict=True)):
        xa = a.values[a.starts[ra] : a.starts[ra] + a.counts[ra]]
        xb = b.values[b.starts[rb] : b.starts[rb] + b.counts[rb]]
        p[i] = stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue
    out = pd.DataFrame(
        {
            "case_id": matched["case_id"],
            "node_type": matched["case_id"].map(info["node_type"].astype(str)),
            "binary": matched["case_id"].map(
                info["kernel"].astype(str) + "-" + info["lang"].astype(str) + "-" + info["model"].astype(str)
            ),
            "threads": matched["case_id"].map(info["threads"]),
            "ranks": matched["case_id"].map(info["ranks"]),
            "n_a": matched["n_a"],
            "n_b": matched["n_b"],
            "median_a_s": matched["median_s_a"],
            "median_b_s": matched["median_s_b"],
            "ratio_b_over_a": matched["median_s_b"] / matched["median_s_a"],
            "ratio_ci_low": low,
            "ratio_ci_high": high,
            "p_value": p,
        }
    )
    out["p_holm"] = holm(out["p_value"].fillna(1.0).to_numpy())
    only = len(ta) + len(tb) - 2 * len(matched)
    if only:
        notes.append(f"{only} cases appear in only one of the campaigns (not compared)")
    return out[COLUMNS].sort_values(["node_type", "binary", "threads", "case_id"], ignore_index=True), notes


def write_comparison(table: pd.DataFrame, dir_a, dir_b):
    path = dir_b / "analysis" / f"compare-{dir_a.name}-vs-{dir_b.name}.csv"
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, float_format="%.6g")
    write_atomic(path, buffer.getvalue(), make_parents=True)
    return path
