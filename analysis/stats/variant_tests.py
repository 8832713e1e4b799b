"""Schedules, sync variants and node types compared at equal thread counts: Mann–Whitney U, Holm.

Two cases are compared when they are the same measurement (node type, binary, problem, pinning, counter
group, inner loop, threads, ranks) except for exactly one of schedule or sync: sbcore/variant_pairs.py's
rule, which the runner's comparison target shares. The test makes no normality assumption; Cliff's
delta (= rank-biserial correlation, 2U/(n1 n2) - 1) says how often one variant is slower than the
other; p-values are Holm-corrected over all comparisons of the campaign (scipy has Benjamini–Hochberg
but not Holm). Node-type pairs (the same measurement on two node types,
see analysis/stats/node_types.py) join the same correction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats.speedup import key_strings
from analysis.variants import NODE_TYPE_MATCH, SAME_MEASUREMENT
from sbcore.variant_dimensions import VARIANT_DIMENSIONS
from sbcore.variant_pairs import BASELINE_MODEL, MISSING

COLUMNS = [
    "node_type",
    "binary",
    "threads",
    "ranks",
    "dimension",
    "variant_a",
    "variant_b",
    "case_a",
    "case_b",
    "n_a",
    "n_b",
    "median_a_s",
    "median_b_s",
    "ratio_b_over_a",
    "u_statistic",
    "p_value",
    "cliffs_delta",
    "p_holm",
    "significant",
    "faster",
]


def holm(p: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    scaled = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def candidate_pairs(s: pd.DataFrame) -> pd.DataFrame:
    """All (a, b) pairs of the same measurement differing in exactly one variant dimension, a's value
    first: sbcore/variant_pairs.py's rule, over the summary's columns.

    One self-merge on the measurement key instead of a Python loop over groups (6400 pairs: 25 s -> <1 s)."""
    columns = [
        "case_id",
        "row",
        "n",
        "median_s",
        "node_type",
        "binary",
        "threads",
        "ranks",
        *VARIANT_DIMENSIONS,
    ]
    usable = s[s["valid"] & (s["n"] >= 2) & (s["model"] != BASELINE_MODEL)]
    u = usable[columns].assign(_key=key_strings(usable, SAME_MEASUREMENT).to_numpy())
    for dim in VARIANT_DIMENSIONS:
        u[dim] = u[dim].astype(object).where(u[dim].notna(), MISSING).astype(str)
    m = u.merge(u.drop(columns=["node_type", "binary", "threads", "ranks"]), on="_key", suffixes=("_a", "_b"))
    differs = np.stack([(m[f"{d}_a"] != m[f"{d}_b"]).to_numpy() for d in VARIANT_DIMENSIONS])
    which = differs.argmax(axis=0)  # the differing dimension where exactly one differs
    rows = np.arange(len(m))
    values_a = np.stack([m[f"{d}_a"].to_numpy(dtype=object) for d in VARIANT_DIMENSIONS])
    values_b = np.stack([m[f"{d}_b"].to_numpy(dtype=object) for d in VARIANT_DIMENSIONS])
    variant_a, variant_b = values_a[which, rows], values_b[which, rows]
    keep = (differs.sum(axis=0) == 1) & (variant_a < variant_b)
    m = m[keep]
    return pd.DataFrame(
        {
            "node_type": m["node_type"].to_numpy(),
            "binary": m["binary"].to_numpy(),
            "threads": m["threads"].to_numpy(),
            "ranks": m["ranks"].to_numpy(),
            "dimension": np.asarray(VARIANT_DIMENSIONS, dtype=object)[which[keep]],
            "variant_a": variant_a[keep],
            "variant_b": variant_b[keep],
            **pair_sides(m),
        }
    )


def pair_sides(m: pd.DataFrame) -> dict:
    """The columns of both sides of merged candidate pairs (suffixes _a, _b)."""
    return {
        "case_a": m["case_id_a"].to_numpy(),
        "case_b": m["case_id_b"].to_numpy(),
        "row_a": m["row_a"].to_numpy(),
        "row_b": m["row_b"].to_numpy(),
        "n_a": m["n_a"].to_numpy(),
        "n_b": m["n_b"].to_numpy(),
        "median_a_s": m["median_s_a"].to_numpy(),
        "median_b_s": m["median_s_b"].to_numpy(),
    }


def node_type_pairs(s: pd.DataFrame) -> pd.DataFrame:
    """Candidate pairs (a, b), node type a < b, of the same measurement on two node types.

    Same columns as the schedule/sync candidates, with dimension `node_type` and the two node types as
    the variants (the `node_type` column is empty: the pair spans two)."""
    columns = ["case_id", "row", "n", "median_s", "node_type", "binary", "threads", "ranks"]
    usable = s[s["valid"] & (s["n"] >= 2)]
    u = usable[columns].assign(_key=key_strings(usable, NODE_TYPE_MATCH).to_numpy())
    u["node_type"] = u["node_type"].astype(str)
    m = u.merge(u.drop(columns=["binary", "threads", "ranks"]), on="_key", suffixes=("_a", "_b"))
    m = m[m["node_type_a"] < m["node_type_b"]]
    return pd.DataFrame(
        {
            "node_type": None,
            "binary": m["binary"].to_numpy(),
            "threads": m["threads"].to_numpy(),
            "ranks": m["ranks"].to_numpy(),
            "dimension": "node_type",
            "variant_a": m["node_type_a"].to_numpy(),
            "variant_b": m["node_type_b"].to_numpy(),
            **pair_sides(m),
        }
    )


def compare_variants(s: pd.DataFrame, starts, counts, values, alpha: float = 0.05) -> pd.DataFrame:
    """Schedule, sync and node-type pairs, Holm-corrected together."""
    parts = [t for t in (candidate_pairs(s), node_type_pairs(s)) if not t.empty]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    order = ["node_type", "binary", "threads", "ranks", "dimension", "variant_a", "variant_b"]
    table = table.sort_values(order, ignore_index=True)
    table["ratio_b_over_a"] = table["median_b_s"] / table["median_a_s"]
    u, p = mann_whitney(table["row_a"].to_numpy(), table["row_b"].to_numpy(), starts, counts, values)
    table["u_statistic"] = u
    table["p_value"] = p
    table["cliffs_delta"] = 2 * u / (table["n_a"] * table["n_b"]) - 1
    table["p_holm"] = holm(p)
    table["significant"] = table["p_holm"] < alpha
    table["faster"] = np.where(
        table["median_a_s"] <= table["median_b_s"], table["variant_a"], table["variant_b"]
    )
    return table[COLUMNS]


def mann_whitney(rows_a, rows_b, starts, counts, values) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Mann–Whitney U of case a vs case b per pair, vectorised over pairs of equal sizes."""
    u = np.full(len(rows_a), np.nan)
    p = np.full(len(rows_a), np.nan)
    sizes = pd.DataFrame({"na": counts[rows_a], "nb": counts[rows_b]})
    for (na, nb), idx in sizes.groupby(["na", "nb"]).indices.items():
        x = values[starts[rows_a[idx], None] + np.arange(na)]
        y = values[starts[rows_b[idx], None] + np.arange(nb)]
        result = stats.mannwhitneyu(x, y, alternative="two-sided", axis=1)
        u[idx] = result.statistic
        p[idx] = result.pvalue
    return u, p
