"""The microbenchmark studies' figures are judged by the one equivalence rule: ours' 90 % bootstrap CI
over repetitions against the published value +- its margin; a figure marked not reproducible says why."""

import pandas as pd
import pytest

from analysis.stats.micro import medians_by_case, reference_table

FIGURE = {"what": "thread create", "match": {"op": "thread-create"}, "stat": "mean", "value": 5.0,
          "unit": "us"}  # fmt: skip


def _reps(means_us: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {"case_id": "a", "node_type": "w", "kernel": "osbench", "threads": 1, "op": "thread-create",
         "param_op": "thread-create", "rep": range(len(means_us)), "mean_s": [m * 1e-6 for m in means_us],
         "median_s": [m * 1e-6 for m in means_us]}
    )  # fmt: skip


def _row(means_us, figure=FIGURE):
    reps = _reps(means_us)
    return reference_table(medians_by_case(reps), [{"seed": "001", "figure": [figure]}], reps=reps).iloc[0]


@pytest.mark.parametrize(
    ("means_us", "verdict"),
    [
        ([5.0, 5.1, 4.9, 5.05, 4.95], "agrees"),
        ([8.0, 8.1, 7.9, 8.05, 7.95], "differs"),
        ([3.0, 7.0, 5.0, 4.0, 6.5], "inconclusive"),
    ],
)
def test_published_figures_get_an_equivalence_verdict_from_a_ci_over_repetitions(means_us, verdict):
    row = _row(means_us)
    assert row["verdict"] == verdict
    assert row["ci_low"] <= row["ours"] <= row["ci_high"] and row["margin"] == 0.10
    if verdict == "inconclusive":
        assert row["needed_n"] > 5


def test_a_stated_margin_and_a_not_reproducible_mark_are_honoured():
    wide = _row([5.6, 5.7, 5.65, 5.6, 5.7], FIGURE | {"margin": 0.2})
    assert wide["verdict"] == "agrees"  # 13 % above, inside +-20 %
    assert _row([5.6, 5.7, 5.65, 5.6, 5.7])["verdict"] == "differs"  # outside the default +-10 %
    marked = _row([5.0] * 3, FIGURE | {"not_reproducible": "RTOS-32 is not available"})
    assert marked["verdict"] == "not reproducible here" and pd.isna(marked["ours"])
    assert "RTOS-32" in marked["how"]
