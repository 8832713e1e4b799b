"""Is a case's sample one cluster or two? (a machine that changed speed during the campaign)

The test works on log times (a speed change multiplies times) and compares one normal against two,
each fitted by maximum classification likelihood (Celeux & Govaert 1992: every repetition belongs to
one component; mixing weights n_k / n). In one dimension the best two-cluster partition is a split of
the sorted sample, so every split point is tried exactly (no EM, no random starts). A case is flagged
bimodal when all of these hold:

- n >= MIN_N: with fewer repetitions nothing can be said;
- the smaller cluster has >= max(2, MIN_SHARE x n) repetitions: a lone slow repetition is an outlier
  (Tukey's fences count those), not a second mode;
- BIC(one normal) - BIC(two normals) > MIN_DELTA_BIC ("strong" evidence, Kass & Raftery 1995). With the
  mixing weights in the likelihood, splitting a large normal sample costs more than it gains, so a
  unimodal case with many repetitions is not flagged;
- Ashman's D = sqrt(2) |mu1 - mu2| / sqrt(s1^2 + s2^2) > MIN_ASHMAN_D. D > 2 separates two normals;
  splitting one normal at its median already gives D = 2.65, hence the stricter bound.

Spreads are floored at SPREAD_FLOOR (in log time = relative): a cluster of identical times would
otherwise have an infinite likelihood, and jitter below 1 % is not resolved on a shared machine.
Vectorised over all cases with the same number of repetitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MIN_N = 4
MIN_SHARE = 0.1
MIN_DELTA_BIC = 6.0
MIN_ASHMAN_D = 3.0
SPREAD_FLOOR = 0.01

COLUMNS = [
    "bimodal",
    "bimodal_delta_bic",
    "bimodal_ashman_d",
    "mode_fast_s",
    "mode_slow_s",
    "mode_slow_share",
]


def _normal_loglik(ss: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Maximised log-likelihood of n values with sum of squared deviations ss (variance floored)."""
    var = np.maximum(ss / n, SPREAD_FLOOR**2)
    return -0.5 * n * np.log(2 * np.pi * var) - 0.5 * ss / var


def _median_of_slice(x: np.ndarray, first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Median of exp(x[i, first[i]:end[i]]) per row of the row-sorted matrix x."""
    size = end - first
    low = np.take_along_axis(x, (first + (size - 1) // 2)[:, None], axis=1)[:, 0]
    high = np.take_along_axis(x, (first + size // 2)[:, None], axis=1)[:, 0]
    return 0.5 * (np.exp(low) + np.exp(high))


def bimodality(starts: np.ndarray, counts: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    """One row per case (in the order of starts/counts) with the COLUMNS above."""
    n_cases = len(counts)
    out = {c: np.full(n_cases, np.nan) for c in COLUMNS}
    out["bimodal"] = np.zeros(n_cases, dtype=bool)
    for n in np.unique(counts[counts >= MIN_N]):
        n = int(n)
        rows = np.flatnonzero(counts == n)
        x = np.sort(np.log(np.maximum(values[starts[rows, None] + np.arange(n)], 1e-300)), axis=1)
        csum = np.cumsum(x, axis=1)
        csq = np.cumsum(x * x, axis=1)
        k = np.arange(1, n)  # size of the fast cluster for split after index k-1
        s1, q1 = csum[:, :-1], csq[:, :-1]
        s2, q2 = csum[:, -1:] - s1, csq[:, -1:] - q1
        ss1 = np.maximum(q1 - s1 * s1 / k, 0)
        ss2 = np.maximum(q2 - s2 * s2 / (n - k), 0)
        within = ss1 + ss2
        smallest = max(2, int(np.ceil(MIN_SHARE * n)))
        allowed = (k >= smallest) & (n - k >= smallest)
        if not allowed.any():
            continue
        within = np.where(allowed, within, np.inf)
        best = np.argmin(within, axis=1)
        pick = np.arange(len(rows))
        kb = k[best]
        total_ss = np.maximum(csq[:, -1] - csum[:, -1] ** 2 / n, 0)
        ll1 = _normal_loglik(total_ss, np.full(len(rows), n))
        ll2 = (
            _normal_loglik(ss1[pick, best], kb)
            + _normal_loglik(ss2[pick, best], n - kb)
            + kb * np.log(kb / n)
            + (n - kb) * np.log((n - kb) / n)
        )
        # Parameters: one normal 2; two normals 2 + 2 + 1 mixing weight.
        delta_bic = (2 * np.log(n) - 2 * ll1) - (5 * np.log(n) - 2 * ll2)
        m1 = s1[pick, best] / kb
        m2 = s2[pick, best] / (n - kb)
        v1 = np.maximum(ss1[pick, best] / kb, SPREAD_FLOOR**2)
        v2 = np.maximum(ss2[pick, best] / (n - kb), SPREAD_FLOOR**2)
        ashman = np.sqrt(2) * np.abs(m2 - m1) / np.sqrt(v1 + v2)
        fast = _median_of_slice(x, np.zeros_like(kb), kb)
        slow = _median_of_slice(x, kb, np.full_like(kb, n))
        out["bimodal_delta_bic"][rows] = delta_bic
        out["bimodal_ashman_d"][rows] = ashman
        out["mode_fast_s"][rows] = fast
        out["mode_slow_s"][rows] = slow
        out["mode_slow_share"][rows] = (n - kb) / n
        out["bimodal"][rows] = (delta_bic > MIN_DELTA_BIC) & (ashman > MIN_ASHMAN_D)
    return pd.DataFrame(out)
