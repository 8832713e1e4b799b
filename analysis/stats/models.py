"""Amdahl's law fitted per scaling series (one variant over worker counts <= the node's cores).

    T(p) = T1 * (f + (1 - f) / p)

fitted to the case medians by least squares with relative errors (sigma = median), f in [0, 1].
With a = T1 f and b = T1 (1 - f) the model is linear, T = a + b / p, and the bounds become a, b >= 0:
a two-parameter non-negative weighted least squares, solved in closed form (normal equations; on the
boundary, the better of the two one-parameter fits) for all series at once. That is the same optimum
scipy.optimize.curve_fit reaches iteratively (tests/analysis/test_fast_paths.py pins the two together),
without ~4 ms per series. The standard error of f is curve_fit's: from the Jacobian in (T1, f),
scaled by the residual variance.
The CI of f comes from the bootstrap replicates of the medians (percentile), by refitting each replicate
with the same weighted least squares in the linear form (f = a / (a + b)), all replicates of all series
at once. 1/f is the upper bound of the speedup the series can reach.
Only series with >= 3 distinct worker counts are fitted; beyond the cores time sharing, not Amdahl,
decides, so those points are left out.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from analysis.stats.per_case import CONFIDENCE, row_quantiles
from analysis.stats.row_batches import in_threads
from analysis.variants import CASE_DESCRIPTION, SCALING_SERIES
from sbcore.case_shape import oversubscribed

MIN_POINTS = 3
MODEL_COLUMNS = [
    *CASE_DESCRIPTION,
    "problem",
    "cores",
    "n_points",
    "workers",
    "t1_s",
    "serial_fraction",
    "serial_fraction_ci_low",
    "serial_fraction_ci_high",
    "serial_fraction_se",
    "amdahl_limit",
    "rel_rms_residual",
]


REPLICATE_POINTS = 4096  # points per batch of the replicate refit (bounds its memory: points x resamples)
REPLICATE_COLUMNS = 128  # resamples per block of a batch: its buffers (points x columns) stay in the cache


def amdahl(p, t1, f):
    return t1 * (f + (1 - f) / p)


def fit_amdahl(workers: np.ndarray, medians: np.ndarray, group: np.ndarray, n_groups: int) -> dict:
    """Weighted Amdahl fits of many series at once; points of series g have group == g.

    Returns arrays per series: t1_s, serial_fraction, serial_fraction_se, rel_rms_residual."""
    x1 = 1 / medians  # the model a + b/p divided by its sigma (the median): residual 1 - a x1 - b x2
    x2 = 1 / (workers * medians)

    def total(v):
        return np.bincount(group, weights=v, minlength=n_groups)

    n = np.bincount(group, minlength=n_groups).astype(float)
    s11, s12, s22, t1, t2 = total(x1 * x1), total(x1 * x2), total(x2 * x2), total(x1), total(x2)
    with np.errstate(divide="ignore", invalid="ignore"):
        det = s11 * s22 - s12 * s12
        a = (s22 * t1 - s12 * t2) / det
        b = (s11 * t2 - s12 * t1) / det
        # Outside the bounds the optimum lies on one of them: a = 0 or b = 0, whichever fits better.
        only_b, only_a = t2 / s22, t1 / s11
        loss_only_b = n - 2 * only_b * t2 + only_b**2 * s22
        loss_only_a = n - 2 * only_a * t1 + only_a**2 * s11
        outside = ~((a >= 0) & (b >= 0))
        use_b = outside & (loss_only_b <= loss_only_a)
        use_a = outside & ~use_b
        a = np.where(use_b, 0.0, np.where(use_a, only_a, a))
        b = np.where(use_b, only_b, np.where(use_a, 0.0, b))
        t1_s = a + b
        f = a / t1_s
        model = t1_s[group] * (f[group] + (1 - f[group]) / workers)
        residual = (medians - model) / medians
        chi2 = total(residual**2)
        # curve_fit's covariance of (T1, f): inverse of J'J (J: Jacobian of the weighted residuals in
        # T1 and f) times chi2 / (points - 2).
        j_t1 = (f[group] + (1 - f[group]) / workers) / medians
        j_f = t1_s[group] * (1 - 1 / workers) / medians
        a00, a01, a11 = total(j_t1 * j_t1), total(j_t1 * j_f), total(j_f * j_f)
        jdet = a00 * a11 - a01 * a01
        var_f = np.where(jdet > 0, a00 / jdet, np.inf) * chi2 / (n - 2)
    return {
        "t1_s": t1_s,
        "serial_fraction": f,
        "serial_fraction_se": np.where(np.isfinite(var_f) & (var_f >= 0), np.sqrt(var_f), np.nan),
        "rel_rms_residual": np.sqrt(chi2 / n),
    }


def replicate_fractions(
    workers: np.ndarray,
    medians: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    replicates: np.ndarray,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """f = a / (a + b) of the unconstrained weighted fit (weights: the observed medians) of every
    bootstrap replicate, (series x resamples); points must be sorted by group. Point i's replicates
    are replicates[i], or replicates[rows[i]] when rows is given (gathered block by block, not as a
    (points x resamples) copy)."""
    x1 = 1 / medians
    x2 = 1 / (workers * medians)
    s11 = np.bincount(group, weights=x1 * x1, minlength=n_groups)
    s12 = np.bincount(group, weights=x1 * x2, minlength=n_groups)
    s22 = np.bincount(group, weights=x2 * x2, minlength=n_groups)
    n_resamples = replicates.shape[1]
    det = (s11 * s22 - s12 * s12)[:, None]
    fractions = np.empty((n_groups, n_resamples))

    def work(column_blocks: list[slice]) -> None:
        # Blocks of resamples: each column's sums are added in the same order as over all columns at
        # once (batches of REPLICATE_POINTS points), and each block's fractions are computed while its
        # sums are in the cache, so threads and blocks change no bit of the result.
        weighted = np.empty((min(REPLICATE_POINTS, len(group)), REPLICATE_COLUMNS))
        runs = np.empty((len(weighted), REPLICATE_COLUMNS))
        for columns in column_blocks:
            width = columns.stop - columns.start
            c1 = np.zeros((n_groups, width))
            c2 = np.zeros((n_groups, width))
            for first in range(0, len(group), REPLICATE_POINTS):
                part = slice(first, first + REPLICATE_POINTS)
                size = len(group[part])
                # (rows and a slice of columns in one indexing: np.take on a column slice is 20x slower)
                y = replicates[part, columns] if rows is None else replicates[rows[part], columns]
                g = group[part]
                starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
                for total, weight in ((c1, x1[part] * x1[part]), (c2, x1[part] * x2[part])):
                    # y.astype(float) * weight, summed over each series' run of points
                    np.multiply(y, weight[:, None], out=weighted[:size, :width])
                    np.add.reduceat(weighted[:size, :width], starts, axis=0, out=runs[: len(starts), :width])
                    total[g[starts]] += runs[: len(starts), :width]
            with np.errstate(divide="ignore", invalid="ignore"):
                a = (s22[:, None] * c1 - s12[:, None] * c2) / det
                b = (s11[:, None] * c2 - s12[:, None] * c1) / det
                fractions[:, columns] = a / (a + b)

    in_threads(work, n_resamples, REPLICATE_COLUMNS)
    return fractions


def row_nanquantiles(matrix: np.ndarray, quantiles: list[float]) -> np.ndarray:
    """np.nanquantile(matrix, quantiles, axis=1): numpy takes it row by row in Python (a second for
    thousands of series); rows without NaN (nearly all) go through stats.row_quantiles at once, the
    same numbers bit for bit. `matrix` is reordered within rows."""
    out = np.empty((len(quantiles), len(matrix)))
    with_nan = np.isnan(matrix).any(axis=1)
    if with_nan.any():
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: NaN
            out[:, with_nan] = np.nanquantile(matrix[with_nan], quantiles, axis=1)
    if not with_nan.all():
        out[:, ~with_nan] = row_quantiles(matrix[~with_nan], quantiles)
    return out


def fit_models(s: pd.DataFrame, dist: np.ndarray, cores: dict[str, int | None]) -> pd.DataFrame:
    """`s`: checked summary with `row` (into dist) and `workers`; cores per node type."""
    usable = s[s["valid"] & (s["model"] != "serial")].copy()
    usable["cores"] = usable["node_type"].map(cores)
    usable = usable[usable["cores"].notna() & ~oversubscribed(usable["workers"], usable["cores"])]
    if usable.empty:
        return pd.DataFrame(columns=MODEL_COLUMNS)
    usable["_series"] = usable.groupby(SCALING_SERIES, dropna=False, sort=True).ngroup()
    distinct = usable.groupby("_series")["workers"].nunique()
    usable = usable[usable["_series"].map(distinct) >= MIN_POINTS]
    if usable.empty:
        return pd.DataFrame(columns=MODEL_COLUMNS)
    usable = usable.sort_values("_series", kind="stable")
    group, series_ids = pd.factorize(usable["_series"], sort=True)
    n_groups = len(series_ids)
    workers = usable["workers"].to_numpy(float)
    medians = usable["median_s"].to_numpy(float)
    fitted = fit_amdahl(workers, medians, group, n_groups)
    boot_f = replicate_fractions(workers, medians, group, n_groups, dist, usable["row"].to_numpy())
    alpha = (1 - CONFIDENCE) / 2
    low, high = row_nanquantiles(boot_f, [alpha, 1 - alpha])
    first = usable.groupby("_series", sort=True).head(1)
    f = fitted["serial_fraction"]
    out = first[[*CASE_DESCRIPTION, "problem"]].reset_index(drop=True)
    out["cores"] = first["cores"].astype(int).to_numpy()
    out["n_points"] = np.bincount(group, minlength=n_groups)
    # Points are sorted by series (group = its rank): each series' worker counts are one run.
    runs = np.split(usable["workers"].to_numpy(), np.cumsum(np.bincount(group, minlength=n_groups))[:-1])
    out["workers"] = [" ".join(str(w) for w in sorted(ws.tolist())) for ws in runs]
    out["t1_s"] = fitted["t1_s"]
    out["serial_fraction"] = f
    out["serial_fraction_ci_low"] = low
    out["serial_fraction_ci_high"] = high
    out["serial_fraction_se"] = fitted["serial_fraction_se"]
    with np.errstate(divide="ignore"):
        out["amdahl_limit"] = np.where(f > 0, 1 / f, np.inf)
    out["rel_rms_residual"] = fitted["rel_rms_residual"]
    return out[MODEL_COLUMNS]
