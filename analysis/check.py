"""`scalebench check`: every case of a campaign judged against a baseline campaign or a reference file
by the CI of its ratio to the expected value (analysis/stats/verdicts.py); a table, no output files.

Each case is judged on its undisturbed repetitions by default (analysis/stats/undisturbed.py: the
machine-state probe's flags; a case with too few of them is `inconclusive`, reason "host disturbed"),
or on all of them with `repetitions="all"`.

Against a campaign: the ratio of medians campaign / baseline with its two-sample bootstrap CI, pairs
matched by content as `compare` matches them (analysis/campaign_diff.py). Against references: the
case's median and its 95 % CI divided by the reference's median_s, each with the band of its entry; for
a speedup entry, the reference's speedup divided by the case's and its CI (from the campaign's
analysis/speedup.csv: `analyze` first), so that above 1 is slower either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.campaign import read_campaign
from analysis.campaign_diff import compare_campaigns
from analysis.performance_references import KEY, key_frame
from analysis.records.load import load_records
from analysis.stats.per_case import summarize
from analysis.stats.undisturbed import disturbed_reason, keep, too_disturbed
from analysis.stats.verdicts import Band, judge
from sbcore import layout
from sbcore.errors import ScalebenchError, UsageError

COLUMNS = [
    "case_id",
    "node_type",
    "binary",
    "threads",
    "ranks",
    "params_json",
    "metric",
    "reference",
    "measured",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "band_low",
    "band_high",
    "verdict",
    "reps",
    "reps_disturbed",
    "basis",
    "reps_needed",
    "reason",
]


@dataclass
class Check:
    table: pd.DataFrame  # COLUMNS, one row per judged case
    unmatched: list[str] = field(default_factory=list)  # cases or references without a counterpart
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool((self.table["verdict"] == "regressed").any())


def against_campaign(
    campaign_dir, baseline_dir, band: Band, n_resamples: int, seed: int, basis: str = "undisturbed"
) -> Check:
    pairs, notes, unmatched = compare_campaigns(baseline_dir, campaign_dir, n_resamples, seed, band, basis)
    table = pd.DataFrame(
        {
            "case_id": pairs["case_b"],
            "node_type": pairs["node_type_b"],
            "binary": pairs["binary"],
            "threads": pairs["threads"],
            "ranks": pairs["ranks"],
            "params_json": pairs["params_json"],
            "metric": "median_s",
            "reference": pairs["median_a_s"],
            "measured": pairs["median_b_s"],
            "ratio": pairs["ratio_b_over_a"],
            "ratio_ci_low": pairs["ratio_ci_low"],
            "ratio_ci_high": pairs["ratio_ci_high"],
            "band_low": band.low,
            "band_high": band.high,
            "verdict": pairs["verdict"],
            "reps": pairs["n_b"],
            "reps_disturbed": pairs["n_disturbed_b"],
            "basis": pairs["basis_b"],
            "reps_needed": pairs["reps_needed"],
            "reason": pairs["reason"],
        }
    )
    renamed = [u.replace("A: ", "baseline: ", 1).replace("B: ", "campaign: ", 1) for u in unmatched]
    return Check(table[COLUMNS], renamed, notes)


SPEEDUP = ["speedup", "speedup_ci_low", "speedup_ci_high"]


def analysed_speedups(campaign_dir) -> pd.DataFrame:
    """case_id and SPEEDUP of the campaign's analysis (analysis/speedup.csv, as `analyze` wrote it); a
    case that is its own baseline (1 by definition) has none."""
    path = layout.analysis_dir(campaign_dir) / "speedup.csv"
    if not path.is_file():
        raise UsageError(f"{path}: missing: speedups come from the analysis; run `scalebench analyze` first")
    table = pd.read_csv(path, usecols=["case_id", "baseline_case_id", *SPEEDUP]).astype({"case_id": str})
    table.loc[table["case_id"] == table["baseline_case_id"].astype(str), SPEEDUP] = float("nan")
    return table.drop(columns="baseline_case_id")


def measured_cases(
    campaign_dir, n_resamples: int, seed: int, speedups: bool = False, basis: str = "undisturbed"
) -> tuple[pd.DataFrame, list[str]]:
    """The campaign's cases with measured records: case table columns plus reps_measured and
    reps_disturbed, and n, median_s and its 95 % CI over the repetitions of its `basis` (and, with
    `speedups`, the analysis's speedup and its CI)."""
    data = load_records(campaign_dir)
    notes = [
        f"{campaign_dir.name}/{file}: skipped: {reason}"
        for file, reason in data.problems.itertuples(index=False)
    ]
    kept, counts = keep(data.records, basis)
    if counts.empty:
        raise ScalebenchError(f"check: {campaign_dir.name} has no readable records")
    stats = summarize(kept, n_resamples, seed).table
    stats = counts.merge(stats[["case_id", "n", "median_s", "ci_low_s", "ci_high_s"]], on="case_id")
    cases = read_campaign(campaign_dir).cases
    merged = cases.merge(stats, on="case_id")
    if speedups:
        merged = merged.merge(analysed_speedups(campaign_dir), on="case_id", how="left")
    return merged, notes


def against_references(
    campaign_dir, references: pd.DataFrame, n_resamples: int, seed: int, basis: str = "undisturbed"
) -> Check:
    speedups = (references["metric"] == "speedup").any()
    cases, notes = measured_cases(campaign_dir, n_resamples, seed, speedups, basis)
    keyed = pd.concat([cases.drop(columns=KEY), key_frame(cases)], axis=1)
    matched = keyed.merge(references, on=KEY, how="outer", indicator=True)
    unmatched = [
        f"campaign: {r.case_id} ({r.node_type} {r.binary} threads={r.threads} ranks={r.ranks}): no reference"
        for r in matched[matched["_merge"] == "left_only"].itertuples()
    ] + [
        f"references: {r.node_type} {r.binary} threads={r.threads} ranks={r.ranks} {r.params_json}: "
        "not measured"
        for r in matched[matched["_merge"] == "right_only"].itertuples()
    ]
    both = matched[matched["_merge"] == "both"].reset_index(drop=True)
    verdict = np.full(len(both), "inconclusive", dtype=object)
    needed = np.zeros(len(both))
    # Time-like ratios (above 1 = slower): measured / expected of a time, expected / measured of a speedup.
    time = (both["metric"] == "median_s").to_numpy()
    ref = both["expected"].to_numpy(float)
    measured = np.where(time, both["median_s"], both.get("speedup", np.nan)).astype(float)
    m_low = np.where(time, both["ci_low_s"], both.get("speedup_ci_low", np.nan)).astype(float)
    m_high = np.where(time, both["ci_high_s"], both.get("speedup_ci_high", np.nan)).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(time, measured / ref, ref / measured)
        low = np.where(time, m_low / ref, ref / m_high)
        high = np.where(time, m_high / ref, ref / m_low)
    for (lower, upper), rows in both.groupby(["lower", "upper"]).groups.items():
        band = Band.around_one(lower, upper)
        idx = np.asarray(rows)
        verdict[idx], needed[idx] = judge(ratio[idx], low[idx], high[idx], band, both["n"].to_numpy()[idx])
    # A time judged on too few undisturbed repetitions says nothing about the code. (A speedup entry is
    # the analysis's, over all repetitions: its own interval carries the host's phases.)
    short = too_disturbed(both["reps_measured"], both["reps_disturbed"], basis) & time
    verdict[short] = "inconclusive"
    needed[short] = np.nan
    reason = np.where(short, disturbed_reason(both["reps_measured"], both["reps_disturbed"], basis), "")
    table = pd.DataFrame(
        {
            "case_id": both["case_id"],
            "node_type": both["node_type"],
            "binary": both["binary"],
            "threads": both["threads"],
            "ranks": both["ranks"],
            "params_json": both["params_json"],
            "metric": both["metric"],
            "reference": ref,
            "measured": measured,
            "ratio": ratio,
            "ratio_ci_low": low,
            "ratio_ci_high": high,
            "band_low": 1 - both["lower"],
            "band_high": 1 + both["upper"],
            "verdict": verdict,
            "reps": np.where(time, both["n"], both["reps_measured"]),
            "reps_disturbed": both["reps_disturbed"],
            "basis": np.where(time, both["basis"], "all"),
            "reps_needed": needed,
            "reason": reason,
        }
    )
    return Check(
        table[COLUMNS].sort_values(["node_type", "binary", "threads", "params_json"], ignore_index=True),
        unmatched,
        notes,
    )
