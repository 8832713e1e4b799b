"""Node types compared: the same measurement on several node types, and each node type's best
configuration.

Two cases are the same measurement on different node types when everything else agrees: binary, every
kernel parameter, pinning strategy, counter group, threads and ranks (variants.NODE_TYPE_MATCH). Their
pairs join the variant comparisons (dimension `node_type`, variant_tests.node_type_pairs), so their
Mann–Whitney p-values are Holm-corrected together with the schedule and sync comparisons of the campaign;
`node_type_table` adds the ratio of medians with a bootstrap CI from the cases' replicates.

Rates are work per second of the compute region (Mandelbrot: iterations, π: samples), derived from the
records' `work` and the median time; per core = per node / the node type's physical cores.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.per_case import ratio_ci
from analysis.stats.speedup import key_strings
from sbcore.case_shape import oversubscribed

WORK_UNIT = {"mandelbrot": "iterations", "mcpi": "samples"}
PAIR_COLUMNS = [
    "binary",
    "kernel",
    "schedule",
    "sync",
    "inner",
    "pin",
    "threads",
    "ranks",
    "problem",
    "node_type_a",
    "node_type_b",
    "case_a",
    "case_b",
    "n_a",
    "n_b",
    "median_a_s",
    "median_b_s",
    "ratio_b_over_a",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "p_holm",
    "significant",
    "faster",
]
BEST_COLUMNS = [
    "node_type",
    "kernel",
    "problem",
    "cores",
    "case_id",
    "binary",
    "schedule",
    "sync",
    "inner",
    "threads",
    "ranks",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "noisy",
    "rate_per_node",
    "rate_per_core",
    "rate_unit",
    "efficiency_full_node",
    "efficiency_full_node_ci_low",
    "efficiency_full_node_ci_high",
]


def node_type_table(
    comparisons: pd.DataFrame, summary: pd.DataFrame, dist: np.ndarray, rng: np.random.Generator
) -> pd.DataFrame:
    """node_types.csv: the node-type rows of the comparisons with the ratio's bootstrap CI."""
    pairs = comparisons[comparisons["dimension"] == "node_type"]
    if pairs.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    info = summary.set_index("case_id")
    row_of = info["row"]
    low, high = ratio_ci(
        dist[row_of[pairs["case_b"]].to_numpy()], dist[row_of[pairs["case_a"]].to_numpy()], rng
    )
    a = info.loc[pairs["case_a"]]
    out = pd.DataFrame(
        {
            "binary": pairs["binary"].to_numpy(),
            "kernel": a["kernel"].to_numpy(),
            "schedule": a["schedule"].to_numpy(),
            "sync": a["sync"].to_numpy(),
            "inner": a["inner"].to_numpy(),
            "pin": a["pin"].to_numpy(),
            "threads": pairs["threads"].to_numpy(),
            "ranks": pairs["ranks"].to_numpy(),
            "problem": a["problem"].to_numpy(),
            "node_type_a": pairs["variant_a"].to_numpy(),
            "node_type_b": pairs["variant_b"].to_numpy(),
            "case_a": pairs["case_a"].to_numpy(),
            "case_b": pairs["case_b"].to_numpy(),
            "n_a": pairs["n_a"].to_numpy(),
            "n_b": pairs["n_b"].to_numpy(),
            "median_a_s": pairs["median_a_s"].to_numpy(),
            "median_b_s": pairs["median_b_s"].to_numpy(),
            "ratio_b_over_a": pairs["ratio_b_over_a"].to_numpy(),
            "ratio_ci_low": low,
            "ratio_ci_high": high,
            "p_value": pairs["p_value"].to_numpy(),
            "p_holm": pairs["p_holm"].to_numpy(),
            "significant": pairs["significant"].to_numpy(),
            "faster": pairs["faster"].to_numpy(),
        }
    )
    return out.sort_values(["binary", "problem", "threads", "ranks", "node_type_a"], ignore_index=True)


def case_rates(summary: pd.DataFrame, records: pd.DataFrame, cores: dict) -> pd.DataFrame:
    """Per case: work per second per node (and per core), with the CI of the time turned into rate bounds."""
    work = records.groupby("case_id", observed=True)["work"].median()
    out = summary[["case_id", "node_type", "kernel", "median_s", "ci_low_s", "ci_high_s"]].copy()
    w = out["case_id"].map(work).astype(float)
    out["rate_per_node"] = w / out["median_s"]
    out["rate_ci_low"] = w / out["ci_high_s"]
    out["rate_ci_high"] = w / out["ci_low_s"]
    n_cores = out["node_type"].astype(str).map({nt: c for nt, (c, _) in cores.items()}).astype(float)
    out["rate_per_core"] = out["rate_per_node"] / n_cores
    out["rate_unit"] = out["kernel"].map(WORK_UNIT).fillna("work") + "/s"
    return out.drop(columns=["node_type", "kernel", "median_s", "ci_low_s", "ci_high_s"])


def best_configurations(
    summary: pd.DataFrame, speedup: pd.DataFrame, records: pd.DataFrame, cores: dict
) -> pd.DataFrame:
    """Per node type, kernel and problem: the valid case with the lowest median time at up to one worker
    per core (the oversubscribed ones only where nothing else was measured: checks.headline's rule), its
    rates, and the efficiency of the same variant at as many workers as the node type has cores."""
    ok = summary[summary["valid"]]
    if ok.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    core_count = {nt: c for nt, (c, _) in cores.items()}
    group = ["node_type", "kernel", "problem"]
    over = oversubscribed(ok["workers"], ok["node_type"].astype(str).map(core_count).astype(float))
    only_over = over.groupby([ok[c] for c in group], observed=True, dropna=False).transform("all")
    ok = ok[~over | only_over]
    best = ok.sort_values(["median_s", "case_id"]).groupby(group, observed=True).head(1)
    best = best.merge(case_rates(summary, records, cores), on="case_id", how="left")
    best["cores"] = best["node_type"].astype(str).map(core_count)
    variant = ["node_type", "binary", "params_json", "pin", "counter_group"]
    sp = speedup.merge(summary[["case_id", "params_json", "counter_group"]], on="case_id", how="left")
    sp = sp[sp["valid"]].assign(_cores=sp["node_type"].astype(str).map(core_count))
    full = sp[sp["workers"] == sp["_cores"]].drop_duplicates(variant)
    full = full.assign(_key=key_strings(full, variant).to_numpy()).set_index("_key")
    keys = key_strings(best, variant)
    for column, source in (
        ("efficiency_full_node", "efficiency"),
        ("efficiency_full_node_ci_low", "efficiency_ci_low"),
        ("efficiency_full_node_ci_high", "efficiency_ci_high"),
    ):
        best[column] = keys.map(full[source]).to_numpy()
    return best[BEST_COLUMNS].sort_values(["kernel", "problem", "node_type"], ignore_index=True)


def best_envelope(
    summary: pd.DataFrame, speedup: pd.DataFrame, records: pd.DataFrame, cores: dict
) -> pd.DataFrame:
    """Per node type, kernel, problem and worker count: the fastest valid variant, with speedup and rate
    (and their CIs). What the node-type plot draws: one line per node type."""
    sp = speedup[speedup["valid"]][
        ["case_id", "speedup", "speedup_ci_low", "speedup_ci_high", "efficiency", "binary"]
    ]
    table = summary[summary["valid"]][["case_id", "node_type", "kernel", "problem", "workers", "median_s"]]
    table = table.merge(sp, on="case_id", how="left").merge(case_rates(summary, records, cores), on="case_id")
    table = table.sort_values(["median_s", "case_id"])
    return (
        table.groupby(["node_type", "kernel", "problem", "workers"], observed=True)
        .head(1)
        .sort_values(["kernel", "problem", "node_type", "workers"], ignore_index=True)
    )
