"""Paired ratios across a trial group (jobs/families.py: the families of one node type, kernel and
problem that differ in language and/or inner loop run in the same trials): two cases that are the same
measurement but for exactly one of language or inner loop (sbcore/cross_pairs.py), case_b's time over
case_a's within each trial both ran in, by the same rule as the variant ratios (stats/paired.py:
median over trials, bootstrap CI over trials, trials apart or with a slow cache-line transfer left out).
"How much does SIMD buy at 2 threads?" with the host's slow phases cancelled: `paired_cross_ratio.csv`,
beside the unpaired ratio of the two cases' median times over all their repetitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.paired import RATIO_COLUMNS, VARIANT_KEY, paired_rows, ratio_table
from sbcore.cross_pairs import cross_pairs, cross_values

# A variant comparison's columns from its workers to its two cases (threads ... case_b), as there.
COLUMNS = [
    "node_type",
    "trial_group",
    "kernel",
    "model",
    *VARIANT_KEY[VARIANT_KEY.index("threads") :],
    "binary_a",
    "binary_b",
    "unpaired_ratio_b_over_a",
    *RATIO_COLUMNS,
]


def pair_row(dimension: str, a: dict, b: dict) -> dict:
    return {
        "node_type": a["node_type"],
        "kernel": a["kernel"],
        "model": a["model"],
        "threads": a["threads"],
        "ranks": a["ranks"],
        "dimension": dimension,
        "variant_a": cross_values(a)[dimension],
        "variant_b": cross_values(b)[dimension],
        "case_a": a["case_id"],
        "case_b": b["case_id"],
        "binary_a": a["binary"],
        "binary_b": b["binary"],
    }


def paired_cross_ratios(cases: list[dict], records: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """cases: the lines of cases.jsonl. One row per cross pair measured in common trials."""
    pairs = [pair_row(*pair) for pair in cross_pairs(cases)]
    groups = {c["case_id"]: c["trial_group"] for c in cases if c.get("trial_group")}
    rows = paired_rows(pd.DataFrame(pairs), "case_b", "case_a", records, groups, rng) if pairs else []
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    medians = records.groupby(records["case_id"].astype(str))["wall_s"].median()
    for row in rows:
        row["trial_group"] = row.pop("family")  # paired_rows names the name both cases share "family"
        row["unpaired_ratio_b_over_a"] = medians[row["case_b"]] / medians[row["case_a"]]
    return ratio_table(rows, COLUMNS)
