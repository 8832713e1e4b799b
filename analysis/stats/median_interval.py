"""Distribution-free confidence intervals of a median, whose coverage holds at any count of trials.

A percentile bootstrap of the median of 3 trials is [min, max] of the 3, which covers the true median
with probability 1 - 2 x 0.5^3 = 75 %, not the 90 % it is labelled with; at 5 trials the bootstrap
interval is narrower than [min, max] and covers less than its label too. The order-statistic interval
is exact instead: for n independent draws of any continuous distribution, [x_(k), x_(n-k+1)] covers the
median with probability 1 - 2 P(Binomial(n, 1/2) <= k - 1). The largest k reaching the confidence is
used (sbcore/sampling.py's median_ci_rank, the runner's interval too), and that probability is
returned as the interval's coverage. Below MIN_TRIALS draws no interval
reaches 90 %: there is none (NaN), and the caller says so.

For the ratio of the medians of two independent samples, each median gets its interval at
sqrt(confidence), and the ratio's interval [low_a / high_b, high_a / low_b] covers the ratio of the true
medians with probability at least the product of the two coverages (both cover at once).
tests/stats/test_median_interval.py checks these coverages by simulation.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from sbcore.sampling import median_ci_rank


def coverage_of(n: int, k: int) -> float:
    """P([x_(k), x_(n-k+1)] covers the median) for n continuous i.i.d. draws (1 <= k <= n / 2)."""
    return float(1 - 2 * stats.binom.cdf(k - 1, n, 0.5))


def smallest_count(confidence: float) -> int:
    """The fewest draws at which [min, max] reaches `confidence`."""
    n = 1
    while median_ci_rank(n, confidence) is None:
        n += 1
    return n


def median_interval(values, confidence: float) -> tuple[float, float, float]:
    """(low, high, coverage) of the median of `values`; NaN bounds when too few values reach it."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[np.isfinite(x)]
    k = median_ci_rank(len(x), confidence)
    if k is None:
        return math.nan, math.nan, coverage_of(len(x), 1) if len(x) >= 2 else 0.0
    return float(x[k - 1]), float(x[len(x) - k]), coverage_of(len(x), k)


def ratio_interval(base, point, confidence: float) -> tuple[float, float, float]:
    """(low, high, coverage) of median(base) / median(point) of two independent samples."""
    each = math.sqrt(confidence)
    b_low, b_high, b_cov = median_interval(base, each)
    p_low, p_high, p_cov = median_interval(point, each)
    if math.isnan(b_low) or math.isnan(p_low) or p_low <= 0:
        return math.nan, math.nan, b_cov * p_cov
    return b_low / p_high, b_high / p_low, b_cov * p_cov


MIN_TRIALS = smallest_count(0.90)  # 5: [min, max] of 5 covers 93.75 %
MIN_INDEPENDENT = smallest_count(math.sqrt(0.90))  # 6 per side for the ratio of two medians
