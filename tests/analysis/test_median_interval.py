"""The intervals the seed verdicts rest on cover as stated, at the trial counts the seeds run: checked by
simulation on skewed, heavy-tailed and discrete-free data, beside the percentile bootstrap of a median
of 3 that they replace (which covers about 75 %, not 90 %)."""

import numpy as np
import pytest
from scipy import stats

from analysis.stats.median_interval import (
    MIN_INDEPENDENT,
    MIN_TRIALS,
    coverage_of,
    median_interval,
    ratio_interval,
)
from analysis.stats.trial_rule import trials_needed

DRAWS = {
    "lognormal": (lambda rng, n: rng.lognormal(0.0, 0.3, n), np.exp(0.0)),
    "exponential+1": (lambda rng, n: 1 + rng.exponential(0.2, n), 1 + 0.2 * np.log(2)),
    "student t3": (lambda rng, n: 2 + 0.1 * rng.standard_t(3, n), 2.0),
}
SIMULATIONS = 4000


def _covered(draw, median, n, rng) -> float:
    hits = 0
    for _ in range(SIMULATIONS):
        low, high, _ = median_interval(draw(rng, n), 0.90)
        hits += low <= median <= high
    return hits / SIMULATIONS


@pytest.mark.parametrize("name", sorted(DRAWS))
@pytest.mark.parametrize("n", [5, 6, 8, 12])
def test_the_median_interval_covers_as_stated(name, n):
    draw, median = DRAWS[name]
    rng = np.random.default_rng(n)
    stated = median_interval(np.arange(n, dtype=float), 0.90)[2]
    assert stated >= 0.90
    observed = _covered(draw, median, n, rng)
    # 4000 draws: a binomial standard error of about 0.004 at 0.94; 4 of them is the tolerance
    assert observed == pytest.approx(stated, abs=0.02) and observed >= 0.88


def test_three_trials_cannot_give_a_90_percent_interval():
    assert MIN_TRIALS == 5 and coverage_of(3, 1) == 0.75
    low, high, coverage = median_interval([1.0, 1.1, 0.9], 0.90)
    assert np.isnan(low) and np.isnan(high) and coverage == 0.75


def test_the_bootstrap_of_a_median_of_3_it_replaces_covers_far_less_than_90_percent():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(400):
        x = rng.lognormal(0.0, 0.3, 3)
        ci = stats.bootstrap((x,), np.median, confidence_level=0.9, n_resamples=200, method="percentile",
                             rng=rng).confidence_interval  # fmt: skip
        hits += ci.low <= 1.0 <= ci.high
    assert hits / 400 < 0.82


@pytest.mark.parametrize("n", [MIN_INDEPENDENT, 8])
def test_the_ratio_of_two_independent_medians_covers_at_least_90_percent(n):
    rng = np.random.default_rng(n)
    hits = 0
    for _ in range(SIMULATIONS):
        base, point = 2 * rng.lognormal(0.0, 0.2, n), rng.lognormal(0.0, 0.2, n)
        low, high, coverage = ratio_interval(base, point, 0.90)
        assert coverage >= 0.90
        hits += low <= 2.0 <= high
    assert hits / SIMULATIONS >= 0.89


def test_the_trial_rule_grows_with_spread_and_never_goes_below_the_interval_minimum():
    assert trials_needed(0.0, 0.10) == MIN_INDEPENDENT == 6
    assert trials_needed(0.10, 0.10) == 6  # (1.645 x 1.2533)^2 = 4.25
    assert trials_needed(0.20, 0.10) == 17  # (2 x 1.6449 x 1.2533)^2 = 17.0
    assert trials_needed(0.10, 0.05) == 17
    with pytest.raises(ValueError, match="margin"):
        trials_needed(0.05, 0.0)


def test_the_trial_rule_adds_trials_for_the_repetitions_the_probe_will_leave_out():
    assert trials_needed(0.05, 0.10, disturbed=0.0) == 6
    assert trials_needed(0.05, 0.10, disturbed=0.12) == 8
    # at 8 trials and 12 % flagged, at least 5 paired trials stay undisturbed 9 times in 10: simulated
    rng = np.random.default_rng(8)
    survivors = (rng.random((20000, 8, 2)) >= 0.12).all(axis=2).sum(axis=1)
    assert (survivors >= 5).mean() >= 0.9
    assert ((rng.random((20000, 7, 2)) >= 0.12).all(axis=2).sum(axis=1) >= 5).mean() < 0.9


@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.90**0.5])
def test_the_runners_rank_is_the_largest_whose_coverage_reaches_the_confidence(confidence):
    """One order-statistic interval for the runner and the analysis (sbcore/sampling.py): its k reaches
    the confidence by the binomial coverage, and k + 1 would not."""
    from sbcore.sampling import median_ci, median_ci_rank

    for n in range(1, 120):
        k = median_ci_rank(n, confidence)
        if k is None:
            assert all(coverage_of(n, j) < confidence for j in range(1, n // 2 + 1))
            continue
        assert coverage_of(n, k) >= confidence - 1e-12
        assert k == n // 2 or coverage_of(n, k + 1) < confidence
        values = np.arange(n, dtype=float)[::-1]
        assert median_ci(values, confidence) == (k - 1, n - k)
        assert median_interval(values, confidence)[:2] == (k - 1, n - k)


def test_the_undisturbed_medians_interval_is_the_runners_for_numpy_counts():
    """The vectorised per-case interval (analysis/stats/disturbance.py, counts as NumPy integers) equals
    sbcore.sampling.median_ci's for counts past 62, where 2**n overflows a NumPy integer."""
    import pandas as pd

    from analysis.stats.disturbance import clean_summary
    from sbcore.sampling import median_ci

    rng = np.random.default_rng(5)
    walls = {f"c{n}": rng.lognormal(0, 0.1, n) for n in (7, 40, 63, 65, 130)}
    flagged = pd.DataFrame(
        [{"case_id": c, "wall_s": w, "disturbed": False} for c, ws in walls.items() for w in ws]
    )
    got = clean_summary(flagged).set_index("case_id")
    for case, ws in walls.items():
        assert (got.loc[case, "ci_low_clean_s"], got.loc[case, "ci_high_clean_s"]) == median_ci(ws), case
