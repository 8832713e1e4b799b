"""Two campaigns (before/after a change, or the same experiment on two clusters or node types): per
matched case, ratio of medians B/A with a bootstrap CI, the Mann–Whitney p-value (Holm-corrected over
all matched cases) and the verdict of the CI against a tolerance band (analysis/stats/verdicts.py, the
engine `check --against` uses). Both sides are judged on their undisturbed repetitions by default
(analysis/stats/undisturbed.py); a pair with too few of them on either side is `inconclusive`.

Cases are matched by their content, not their case_id (which includes the node type): first on content
and node type, then, among what is left, on content alone where that is unambiguous on both sides (one
case of that content left in A and one in B). So campaigns run on differently named node types still
compare; cases that cannot be matched are listed, never silently dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.campaign import read_campaign
from analysis.outputs.tables import write_table
from analysis.records.load import load_records
from analysis.stats.per_case import ratio_ci, summarize
from analysis.stats.speedup import key_strings
from analysis.stats.undisturbed import disturbed_reason, keep, too_disturbed
from analysis.stats.variant_tests import holm
from analysis.stats.verdicts import Band, judge
from analysis.variants import NODE_TYPE_MATCH
from sbcore.errors import ScalebenchError

CONTENT = NODE_TYPE_MATCH  # what a case is, apart from where it ran
COLUMNS = [
    "case_a",
    "case_b",
    "node_type_a",
    "node_type_b",
    "matched_by",
    "binary",
    "threads",
    "ranks",
    "schedule",
    "sync",
    "inner",
    "params_json",
    "n_a",
    "n_b",
    "n_disturbed_a",
    "n_disturbed_b",
    "basis_a",
    "basis_b",
    "median_a_s",
    "median_b_s",
    "ratio_b_over_a",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "p_holm",
    "verdict",
    "reps_needed",
    "reason",
]
DEFAULT_BAND = Band.around_one(0.10, 0.10)


def match_cases(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(pairs case_a/case_b/matched_by, unmatched rows of A, unmatched rows of B) of two case tables."""
    a = a.assign(_content=key_strings(a, CONTENT).to_numpy(), _node=a["node_type"].astype(str))
    b = b.assign(_content=key_strings(b, CONTENT).to_numpy(), _node=b["node_type"].astype(str))
    exact = a.merge(b, on=["_content", "_node"], suffixes=("_a", "_b"))[["case_id_a", "case_id_b"]]
    exact = (
        exact.drop_duplicates("case_id_a").drop_duplicates("case_id_b").assign(matched_by="content+node_type")
    )
    rest_a = a[~a["case_id"].isin(exact["case_id_a"])]
    rest_b = b[~b["case_id"].isin(exact["case_id_b"])]
    unique_a = rest_a[~rest_a["_content"].duplicated(keep=False)]
    unique_b = rest_b[~rest_b["_content"].duplicated(keep=False)]
    loose = unique_a.merge(unique_b, on="_content", suffixes=("_a", "_b"))[["case_id_a", "case_id_b"]]
    pairs = pd.concat([exact, loose.assign(matched_by="content")], ignore_index=True)
    pairs.columns = ["case_a", "case_b", "matched_by"]
    return pairs, a[~a["case_id"].isin(pairs["case_a"])], b[~b["case_id"].isin(pairs["case_b"])]


def unmatched_cases(label: str, rows: pd.DataFrame) -> list[str]:
    return [
        f"{label}: {r.case_id} ({r.node_type} {r.binary} threads={r.threads} ranks={r.ranks})"
        for r in rows.itertuples()
    ]


def _unmatched_note(label: str, path, rows: pd.DataFrame) -> str:
    shown = ", ".join(
        f"{r.case_id} ({r.node_type} {r.binary} threads={r.threads} ranks={r.ranks})"
        for r in rows.head(10).itertuples()
    )
    more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
    return f"{len(rows)} case(s) of {label} ({path.name}) have no match in the other campaign: {shown}{more}"


def compare_campaigns(
    dir_a, dir_b, n_resamples=2000, seed=0, band: Band = DEFAULT_BAND, basis: str = "undisturbed"
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """(one row per matched pair, notes, the unmatched cases as 'A: case_id (...)' lines). Each side's
    statistics are over its repetitions of `basis` (analysis/stats/undisturbed.py)."""
    notes = []
    stats_of, cases_of, counts_of = [], [], []
    for path in (dir_a, dir_b):
        data = load_records(path)
        for file, reason in data.problems.itertuples(index=False):
            notes.append(f"{path.name}/{file}: skipped: {reason}")
        kept, counts = keep(data.records, basis)
        stats_of.append(summarize(kept, n_resamples, seed))
        counts_of.append(counts.set_index("case_id"))
        cases_of.append(read_campaign(path).cases)
    a, b = stats_of
    if a.table.empty or b.table.empty:
        raise ScalebenchError(f"compare: {'A' if a.table.empty else 'B'} has no readable records")
    ta = a.table.reset_index(names="row_a")
    tb = b.table.reset_index(names="row_b")
    cases_a = cases_of[0][cases_of[0]["case_id"].isin(ta["case_id"])]
    cases_b = cases_of[1][cases_of[1]["case_id"].isin(tb["case_id"])]
    pairs, only_a, only_b = match_cases(cases_a, cases_b)
    unmatched = []
    for label, path, rows in (("A", dir_a, only_a), ("B", dir_b, only_b)):
        if len(rows):
            notes.append(_unmatched_note(label, path, rows))
            unmatched += unmatched_cases(label, rows)
    if pairs.empty:
        raise ScalebenchError(f"compare: no case of {dir_a.name} matches a case of {dir_b.name} by content")
    matched = pairs.merge(ta.rename(columns={"case_id": "case_a"}), on="case_a").merge(
        tb.rename(columns={"case_id": "case_b"}), on="case_b", suffixes=("_a", "_b")
    )
    rng = np.random.default_rng(seed + 7)
    row_a, row_b = matched["row_a"].to_numpy(), matched["row_b"].to_numpy()
    low, high = ratio_ci(b.dist[row_b], a.dist[row_a], rng)
    p = np.full(len(matched), np.nan)
    for i, (ra, rb) in enumerate(zip(row_a, row_b, strict=True)):
        xa = a.values[a.starts[ra] : a.starts[ra] + a.counts[ra]]
        xb = b.values[b.starts[rb] : b.starts[rb] + b.counts[rb]]
        p[i] = stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue
    info_a = cases_a.set_index("case_id")
    info_b = cases_b.set_index("case_id")
    out = pd.DataFrame(
        {
            "case_a": matched["case_a"],
            "case_b": matched["case_b"],
            "node_type_a": matched["case_a"].map(info_a["node_type"]),
            "node_type_b": matched["case_b"].map(info_b["node_type"]),
            "matched_by": matched["matched_by"],
            "binary": matched["case_a"].map(info_a["binary"]),
            "threads": matched["case_a"].map(info_a["threads"]),
            "ranks": matched["case_a"].map(info_a["ranks"]),
            **{c: matched["case_a"].map(info_a[c]) for c in ("schedule", "sync", "inner", "params_json")},
            "n_a": matched["n_a"],
            "n_b": matched["n_b"],
            "n_disturbed_a": matched["case_a"].map(counts_of[0]["reps_disturbed"]),
            "n_disturbed_b": matched["case_b"].map(counts_of[1]["reps_disturbed"]),
            "basis_a": matched["case_a"].map(counts_of[0]["basis"]),
            "basis_b": matched["case_b"].map(counts_of[1]["basis"]),
            "median_a_s": matched["median_s_a"],
            "median_b_s": matched["median_s_b"],
            "ratio_b_over_a": matched["median_s_b"] / matched["median_s_a"],
            "ratio_ci_low": low,
            "ratio_ci_high": high,
            "p_value": p,
        }
    )
    out["p_holm"] = holm(out["p_value"].fillna(1.0).to_numpy())
    out["verdict"], out["reps_needed"] = judge(
        out["ratio_b_over_a"], low, high, band, np.fmin(out["n_a"], out["n_b"])
    )
    # Too few undisturbed repetitions on either side: the host, not the code, would decide.
    measured_a = matched["case_a"].map(counts_of[0]["reps_measured"]).to_numpy(float)
    measured_b = matched["case_b"].map(counts_of[1]["reps_measured"]).to_numpy(float)
    short_a = too_disturbed(measured_a, out["n_disturbed_a"], basis)
    short_b = too_disturbed(measured_b, out["n_disturbed_b"], basis)
    out.loc[short_a | short_b, ["verdict", "reps_needed"]] = ["inconclusive", np.nan]
    reason_a = disturbed_reason(measured_a, out["n_disturbed_a"], basis)
    reason_b = disturbed_reason(measured_b, out["n_disturbed_b"], basis)
    out["reason"] = [
        "; ".join(f"{side}: {r}" for side, r in (("A", ra), ("B", rb)) if r)
        for ra, rb in zip(reason_a, reason_b, strict=True)
    ]
    order = ["node_type_a", "binary", "threads", "params_json", "case_a"]
    return out[COLUMNS].sort_values(order, ignore_index=True), notes, unmatched


def write_comparison(table: pd.DataFrame, dir_a, dir_b):
    path = dir_b / "analysis" / f"compare-{dir_a.name}-vs-{dir_b.name}.csv"
    write_table(table, path)
    return path
