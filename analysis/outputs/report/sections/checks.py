"""Validity details: the counts behind the one-line warnings of the findings, and the tables."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded
from analysis.stats import bimodality


def section(result, plots) -> list[Block]:
    s, done, sp = result.summary, result.completeness, result.speedup
    bad_sum = s[~s["checksum_status"].isin(["ok", "no reference"])]
    unref = s[s["checksum_status"] == "no reference"]
    noisy = s[s["noisy"].astype(bool)]
    bimodal = s[s["bimodal"].astype(bool)]
    incomplete = done[done["state"] != "done"]
    problems = result.loaded.problems
    ctr = result.counters
    unavailable = ctr[ctr["counters_status"] == "unavailable"] if len(ctr) else ctr
    implausible = sp[sp["plausibility"].isin(["implausible", "superlinear"])]
    counts = {
        "checksum mismatch / inconsistent (invalid, excluded from speedups)": len(bad_sum),
        "cases without a serial reference checksum (unchecked)": len(unref),
        "cases with placement violations": len(result.violations),
        "failed cases (a failed attempt explains a missing repetition)": int(
            (done["state"] == "failed").sum()
        ),
        "partial cases (some repetitions done)": int((done["state"] == "partial").sum()),
        "missing cases (no record, no failed attempt)": int((done["state"] == "missing").sum()),
        "unreadable record files (skipped)": len(problems),
        "implausible speedups (> min(workers, cores), CI reaches below)": int(
            (sp["plausibility"] == "implausible").sum()
        ),
        "superlinear speedups (CI above min(workers, cores))": int(
            (sp["plausibility"] == "superlinear").sum()
        ),
        "bimodal cases (two clusters of repetition times)": len(bimodal),
        f"noisy cases (CI wider than {result.options.noise_threshold:.0%} of the median)": len(noisy),
        "records with counters unavailable": int(unavailable["records"].sum()) if len(unavailable) else 0,
    }
    b = [Block("kv", counts)]

    def detail(title, table):
        if len(table):
            b.append(folded(f"{title} ({len(table)})", [Block("table", table)]))

    detail(
        "Checksum mismatches",
        bad_sum[
            [
                "case_id",
                "node_type",
                "binary",
                "schedule",
                "sync",
                "threads",
                "ranks",
                "checksum",
                "reference_checksum",
                "checksum_status",
            ]
        ],
    )
    if len(result.violations):
        detail(
            "Placement violations",
            result.violations.merge(s[["case_id", "binary", "threads", "pin"]], how="left"),
        )
    detail("Failed, partial and missing cases", incomplete)
    detail("Unreadable record files (skipped)", problems)
    detail(
        "Implausible and superlinear speedups",
        implausible[
            [
                "case_id",
                "node_type",
                "binary",
                "schedule",
                "sync",
                "workers",
                "speedup",
                "speedup_ci_low",
                "speedup_ci_high",
                "usable_cores",
                "plausibility",
                "baseline_case_id",
                "baseline_median_s",
                "median_s",
            ]
        ],
    )
    if len(bimodal):
        b.append(
            Block(
                "p",
                "Bimodal: two normals on log time beat one by BIC > "
                f"{bimodality.MIN_DELTA_BIC:g} and are separated (Ashman's D > {bimodality.MIN_ASHMAN_D:g}), "
                f"each cluster >= max(2, {bimodality.MIN_SHARE:.0%} of n) repetitions. The median of such a "
                "case describes neither state of the machine.",
            )
        )
    detail(
        "Bimodal cases",
        bimodal[
            [
                "case_id",
                "node_type",
                "binary",
                "schedule",
                "sync",
                "threads",
                "n",
                "median_s",
                "mode_fast_s",
                "mode_slow_s",
                "mode_slow_share",
                "bimodal_delta_bic",
                "bimodal_ashman_d",
            ]
        ],
    )
    detail(
        "Noisy cases",
        noisy[
            [
                "case_id",
                "node_type",
                "binary",
                "threads",
                "n",
                "median_s",
                "ci_low_s",
                "ci_high_s",
                "ci_rel_width",
                "cv",
                "n_outliers",
            ]
        ],
    )
    if len(ctr):
        detail("Counters", ctr)
    return b
