"""The acceptance counts of a trial campaign's paired comparisons (analysis/stats/comparison_precision.py),
on comparison tables and the headline table (analysis/checks.py's `headline`)."""

import numpy as np
import pandas as pd

from analysis.checks import headline
from analysis.stats.comparison_precision import comparison_precision, precision_line, speedup_comparisons


def comparisons(rows) -> pd.DataFrame:
    """rows: (kind, kernel, case_id, workers, ratio, half-width relative); two cores."""
    return pd.DataFrame(
        [
            {
                "kind": kind,
                "node_type": "ws",
                "kernel": kernel,
                "case_id": case_id,
                "workers": float(workers),
                "cores": 2.0,
                "ratio": ratio,
                "ci_low": ratio * (1 - hw),
                "ci_high": ratio * (1 + hw),
            }
            for kind, kernel, case_id, workers, ratio, hw in rows
        ]
    )


def speedup_table(rows, flagged=()) -> pd.DataFrame:
    """The speedup rows of comparison tuples as checks.headline reads them; `flagged`: noisy case ids."""
    return pd.DataFrame(
        [
            {
                "node_type": "ws",
                "kernel": kernel,
                "model": "omp",
                "binary": f"{kernel}-c-omp",
                "case_id": case_id,
                "baseline_case_id": "serial",
                "workers": workers,
                "usable_cores": 2,
                "speedup": ratio,
                "speedup_ci_low": ratio * (1 - hw),
                "speedup_ci_high": ratio * (1 + hw),
                "estimate": "paired",
                "plausibility": "ok",
                "noisy": case_id in flagged,
                "bimodal": False,
                "baseline_noisy": False,
                "baseline_bimodal": False,
            }
            for kind, kernel, case_id, workers, ratio, hw in rows
            if kind == "speedup"
        ]
    )


def precision(rows, flagged=()) -> dict:
    """comparison_precision of the rows, the headlines chosen from them as the findings choose."""
    return comparison_precision(
        comparisons(rows), leads=headline(speedup_table(rows, flagged)), cores={"ws": 2}
    )


GOOD = [
    ("speedup", "mandelbrot", "m1", 1, 1.0, 0.01),
    ("speedup", "mandelbrot", "m2", 2, 1.97, 0.01),
    ("speedup", "mcpi", "p1", 1, 0.99, 0.005),
    ("speedup", "mcpi", "p1_code", 1, 1.006, 0.004),  # wholly above 1, within the 1 % code margin
    ("speedup", "mcpi", "p2", 2, 1.96, 0.012),
    ("variant ratio", "mandelbrot", "m2s", 2, 1.3, 0.015),
    ("speedup", "mandelbrot", "m4", 4, 1.5, 0.2),  # oversubscribed: reported, not counted
]


def test_a_campaign_within_every_target_is_met():
    p = precision(GOOD)
    assert (p["counted"], p["precise"], p["oversubscribed"]) == (6, 6, 1)
    assert p["by_kind"] == {
        "speedup": {"counted": 5, "precise": 5},
        "variant ratio": {"counted": 1, "precise": 1},
    }
    assert [(h["kernel"], h["case_id"], h["inside"]) for h in p["headlines"]] == [
        ("mandelbrot", "m2", True),
        ("mcpi", "p2", True),
    ]
    assert p["headlines"][0]["band_low"] == 1.90 and p["headlines"][0]["band_high"] == 2.02
    assert p["met"] is True
    line = precision_line(p)
    assert "6 of 6 (100 %)" in line and "1 oversubscribed" in line and "target met" in line


def test_each_failure_is_counted_and_named():
    rows = [
        *GOOD,
        ("speedup", "mandelbrot", "wide", 2, 1.8, 0.05),  # imprecise
        ("speedup", "mcpi", "one_fast", 1, 1.08, 0.01),  # at one worker wholly above 1.01
        ("speedup", "mcpi", "over", 4, 2.4, 0.05),  # wholly above min(4, 2) = 2, oversubscribed
    ]
    p = precision(rows)
    assert (p["counted"], p["precise"]) == (8, 7)
    # at one worker the bound is 1: a 1-worker speedup wholly above 1 is above its bound too
    assert p["above_bound"] == ["one_fast", "over"] and p["above_one_at_one_worker"] == ["one_fast"]
    assert p["met"] is False and "target NOT met" in precision_line(p)


def test_a_headline_outside_the_band_fails_the_target():
    rows = [r if r[2] != "p2" else ("speedup", "mcpi", "p2", 2, 1.85, 0.01) for r in GOOD]
    p = precision(rows)
    mcpi = next(h for h in p["headlines"] if h["kernel"] == "mcpi")
    assert mcpi["case_id"] == "p2" and not mcpi["inside"]
    assert p["precise_share"] == 1.0
    assert p["met"] is False


def test_a_share_below_90_percent_fails_the_target():
    rows = [*GOOD] + [("speedup", "mcpi", f"w{i}", 2, 1.5, 0.03) for i in range(2)]
    p = precision(rows)
    assert p["precise_share"] == 6 / 8 and p["met"] is False


def test_speedup_rows_take_the_together_estimate_and_the_node_types_cores():
    paired = pd.DataFrame(
        {
            "case_id": ["a"],
            "baseline_case_id": ["s"],
            "paired_speedup": [np.nan],
            "paired_ci_low": [np.nan],
            "paired_ci_high": [np.nan],
            "paired_together_speedup": [1.9],
            "paired_together_ci_low": [1.88],
            "paired_together_ci_high": [1.92],
        }
    )
    speedup = pd.DataFrame(
        {"case_id": ["a"], "baseline_case_id": ["s"], "node_type": ["ws"], "kernel": ["k"], "workers": [2]}
    )
    rows = speedup_comparisons(paired, speedup, {"ws": 2})
    assert rows.iloc[0][["ratio", "ci_low", "cores"]].tolist() == [1.9, 1.88, 2.0]
    p = comparison_precision(rows, leads=pd.DataFrame(), cores={"ws": 2})
    assert (p["counted"], p["precise"], p["no_interval"]) == (1, 1, 0)


def test_the_headline_judged_is_the_one_the_findings_lead_with():
    # a noisy case with a higher CI lower bound, outside the band; the findings pass over it for the
    # clean case inside: the target judges that one, and the console line names it
    rows = [*GOOD, ("speedup", "mcpi", "p2_noisy", 2, 2.015, 0.005)]
    p = precision(rows, flagged={"p2_noisy"})
    mcpi = next(h for h in p["headlines"] if h["kernel"] == "mcpi")
    assert (mcpi["case_id"], mcpi["inside"], mcpi["estimate"]) == ("p2", True, "paired")
    assert "mcpi x2 1.960" in precision_line(p) and p["met"] is True
    # the same rows with nothing flagged: the noisy case leads, and it is outside the band
    p = precision(rows)
    mcpi = next(h for h in p["headlines"] if h["kernel"] == "mcpi")
    assert (mcpi["case_id"], mcpi["inside"]) == ("p2_noisy", False) and p["met"] is False


def test_a_kernel_without_a_plausible_headline_fails_the_target():
    leads = pd.DataFrame([{"node_type": "ws", "kernel": "mcpi", "binary": np.nan, "implausible_left_out": 2}])
    p = comparison_precision(comparisons(GOOD), leads=leads, cores={"ws": 2})
    (h,) = p["headlines"]
    assert h["speedup"] is None and h["inside"] is False and p["met"] is False
    assert "mcpi no plausible speedup with an interval" in precision_line(p)
