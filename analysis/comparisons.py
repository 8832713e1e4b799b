"""Schedules and sync variants compared at equal thread counts: Mann–Whitney U, Cliff's delta, Holm.

Two cases are compared when they are the same measurement (node type, binary, problem, pinning, counter
group, inner loop, threads, ranks) except for exactly one of schedule or sync. The test makes no
normality assumption; Cliff's delta (= rank-biserial correlation, 2U/(n1 n2) - 1) says how often one
variant is slower than the other; p-values are Holm-corrected over all comparisons of the campaign
(scipy has Benjamini–Hochberg but not Holm).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

SAME = ["node_type", "binary", "problem", "pin", "counter_group", "inner", "threads", "ranks"]
DIMENSIONS = ("schedule", "sync")
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
    usable = s[s["valid"] & (s["n"] >= 2) & (s["model"] != "serial")]
    pairs = []
    for _, group in usable.groupby(SAME, dropna=False):
        if len(group) < 2:
            continue
        records = group.to_dict("records")
        for a, b in itertools.combinations(records, 2):
            differs = [d for d in DIMENSIONS if str(a[d]) != str(b[d])]
            if len(differs) != 1:
                continue
            dim = differs[0]
            if str(a[dim]) > str(b[dim]):
                a, b = b, a
            pairs.append((a, b, dim))
    return pairs


def compare_variants(s: pd.DataFrame, starts, counts, values, alpha: float = 0.05) -> pd.DataFrame:
    pairs = candidate_pairs(s)
    if not pairs:
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for a, b, dim in pairs:
        rows.append(
            {
                **{c: a[c] for c in ("node_type", "binary", "threads", "ranks")},
                "dimension": dim,
                "variant_a": a[dim],
                "variant_b": b[dim],
                "case_a": a["case_id"],
                "case_b": b["case_id"],
                "row_a": a["row"],
                "row_b": b["row"],
                "n_a": a["n"],
                "n_b": b["n"],
                "median_a_s": a["median_s"],
                "median_b_s": b["median_s"],
            }
        )
    table = pd.DataFrame(rows)
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
