"""Per-case statistics: median, min, bootstrap 95 % CI of the median, CV, outliers, warm-up dropped.

No normality is assumed (Hoefler & Belli, SC15): the centre is the median, its CI a BCa bootstrap
(scipy.stats.bootstrap's, to the bit; its jackknife from order statistics). The bootstrap runs
vectorised over all cases with the same number of
repetitions, and each case's bootstrap distribution of the median is kept: speedup ratios, scaling fits
and campaign comparisons are computed from those replicates instead of resampling again.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy import special, stats

from analysis.stats.categorical import case_categories
from analysis.stats.row_batches import in_threads

CONFIDENCE = 0.95
BOOTSTRAP_ROWS = 1024  # cases per batch of the bootstrap: its (cases x resamples) float64 buffers stay ~30 MB


@dataclass
class CaseStats:
    table: pd.DataFrame  # one row per case with records; row i <-> dist[i]
    dist: np.ndarray  # (cases, n_resamples) float32: bootstrap replicates of each case's median
    records: pd.DataFrame  # measured (non-warm-up) records, with an `outlier` column
    starts: np.ndarray | None = None  # values[starts[i] : starts[i] + counts[i]] = times of case i
    counts: np.ndarray | None = None
    values: np.ndarray | None = None


def grouped_values(records: pd.DataFrame, column: str = "wall_s"):
    """case ids, start offsets, counts and the values sorted by case (for matrix gathers)."""
    case = case_categories(records["case_id"])
    codes, case_ids = case.cat.codes.to_numpy(), case.cat.categories
    order = np.argsort(codes, kind="stable")
    values = records[column].to_numpy(dtype=float)[order]
    counts = np.bincount(codes, minlength=len(case_ids))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return np.asarray(case_ids), starts, counts, values


def bootstrap_medians(
    values: np.ndarray, starts: np.ndarray, counts: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BCa-bootstrap CI of the median per group; returns (low, high, replicates).

    The replicates are drawn as scipy.stats.bootstrap draws them (one (n_resamples, n) index matrix per
    sample size, shared by all groups of that size, as scipy does when vectorised), but computed without
    materialising the resamples: on sorted data the k-th smallest of a resample is the value at the k-th
    smallest resample index, so the median of every resample of every group is a gather of two columns.
    That is O(groups x n_resamples) instead of O(records x n_resamples). bca_median_interval then
    turns those replicates into the BCa interval, in batches of cases spread over threads."""
    n_groups = len(counts)
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    dist = np.empty((n_groups, n_resamples), dtype=np.float32)
    single = np.flatnonzero(counts == 1)
    dist[single] = values[starts[single], None]
    for n in np.unique(counts[counts >= 2]):
        n = int(n)
        rows = np.flatnonzero(counts == n)
        matrix = values[starts[rows, None] + np.arange(n)]
        ordered = np.sort(matrix, axis=1)
        index = np.sort(rng.integers(0, n, (n_resamples, n)), axis=1)
        lower, upper = index[:, (n - 1) // 2], index[:, n // 2]

        def work(batches: list[slice], rows=rows, matrix=matrix, ordered=ordered, lower=lower, upper=upper):
            buffer = np.empty((2, BOOTSTRAP_ROWS, n_resamples))
            for part in batches:
                size = part.stop - part.start
                replicates, upper_values = buffer[0, :size], buffer[1, :size]
                np.take(ordered[part], lower, axis=1, out=replicates, mode="clip")
                np.take(ordered[part], upper, axis=1, out=upper_values, mode="clip")
                replicates += upper_values
                replicates *= 0.5  # 0.5 * (a + b), the median of an even-sized resample
                lo, hi = bca_median_interval(matrix[part], ordered[part], replicates)
                # BCa is undefined for (near-)constant samples: fall back to the percentile interval.
                bad = ~(np.isfinite(lo) & np.isfinite(hi))
                if bad.any():
                    alpha = (1 - CONFIDENCE) / 2
                    lo[bad], hi[bad] = np.quantile(replicates[bad], [alpha, 1 - alpha], axis=-1)
                low[rows[part]] = lo
                high[rows[part]] = hi
                dist[rows[part]] = replicates

        with warnings.catch_warnings():  # here: the filters are global, the threads share them
            # All-equal samples give a degenerate distribution: the CI is then that one value.
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
            in_threads(work, len(rows), BOOTSTRAP_ROWS)
    return low, high, dist


def jackknife_medians(matrix: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """(rows, n): the median of each row of `matrix` without its i-th value, as np.median computes it
    (`ordered`: the rows sorted). Without the value of rank r the row's n - 1 values in order are
    ordered[:r] then ordered[r + 1:], so its middle value(s) sit at position h (h < r) or h + 1 (h >= r):
    n medians per row are a gather, not n sorts of n - 1 values."""
    n = matrix.shape[1]
    order = np.argsort(matrix, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n), axis=1)
    removed = np.arange(n)
    low = (n - 2) // 2 + ((n - 2) // 2 >= removed)
    high = (n - 1) // 2 + ((n - 1) // 2 >= removed)
    # n - 1 values: one middle value, or np.median's mean of the two middle ones, (a + b) / 2
    by_rank = ordered[:, low] if n % 2 == 0 else (ordered[:, low] + ordered[:, high]) / 2
    # In the memory order np.median leaves scipy's jackknife medians in (column-major): the sums over
    # them below then add in the same order, to the last bit.
    return np.asfortranarray(np.take_along_axis(by_rank, rank, axis=1))


def bca_median_interval(
    matrix: np.ndarray, ordered: np.ndarray, replicates: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The BCa interval of each row's median from its bootstrap replicates, with the arithmetic of
    scipy.stats.bootstrap(method="BCa") step by step (tests/analysis/test_fast_paths.py pins the two
    together), except that the jackknife medians come from jackknife_medians: scipy materialises the
    n jackknife samples of every row and takes their medians (O(rows x n^2 log n), most of the time of
    a large campaign's statistics). Rows with a NaN go through scipy itself (np.median's NaN rules)."""
    if np.isnan(matrix).any():
        result = stats.bootstrap(
            (matrix,),
            np.median,
            n_resamples=0,
            bootstrap_result=SimpleNamespace(bootstrap_distribution=replicates),
            vectorized=True,
            axis=-1,
            confidence_level=CONFIDENCE,
            method="BCa",
        )
        return result.confidence_interval.low, result.confidence_interval.high
    alpha = (1 - CONFIDENCE) / 2
    n_resamples = replicates.shape[-1]
    theta_hat = np.median(matrix, axis=-1)[:, None]
    below = np.count_nonzero(replicates < theta_hat, axis=-1) + np.count_nonzero(
        replicates <= theta_hat, axis=-1
    )
    z0_hat = special.ndtri(below.astype(theta_hat.dtype) / (2 * n_resamples))
    theta_hat_i = jackknife_medians(matrix, ordered)
    n = float(theta_hat_i.shape[-1])
    u = (n - 1) * (np.mean(theta_hat_i, axis=-1, keepdims=True) - theta_hat_i)
    num = np.sum(u**3, axis=-1) / n**3
    den = np.sum(u**2, axis=-1) / n**2
    a_hat = 1 / 6 * (0 + num) / (0 + den) ** (3 / 2)  # scipy sums over samples with sum(): 0 + ...
    z_alpha = float(special.ndtri(alpha))
    num1 = z0_hat + z_alpha
    alpha_1 = special.ndtr(z0_hat + num1 / (1 - a_hat * num1))
    num2 = z0_hat - z_alpha
    alpha_2 = special.ndtr(z0_hat + num2 / (1 - a_hat * num2))
    ci = stats.quantile(replicates, np.stack((alpha_1, alpha_2), axis=-1), axis=-1)
    return ci[..., 0], ci[..., 1]


def summarize(
    records: pd.DataFrame, n_resamples: int = 2000, seed: int = 0, noise_threshold: float = 0.05
) -> CaseStats:
    return with_median_cis(describe(records), n_resamples, seed, noise_threshold)


def describe(records: pd.DataFrame) -> CaseStats:
    """The per-case table without the CIs of the medians (with_median_cis adds them), and the measured
    records with their `outlier` flags: final here, so the analysis can write them while the
    bootstrap, most of the time of this module, runs."""
    warm_rows = records["warmup"].astype(bool).to_numpy() if len(records) else np.zeros(0, bool)
    # Copy-on-write: without warm-up records the measured table shares the loaded columns (a million
    # rows: a full copy costs ~300 MB).
    measured = records[~warm_rows] if warm_rows.any() else records.copy(deep=False)
    if measured.empty:
        return CaseStats(pd.DataFrame(columns=SUMMARY_COLUMNS), np.empty((0, 0), "float32"), measured)
    measured["case_id"] = case = case_categories(measured["case_id"])
    codes = case.cat.codes.to_numpy()
    n_cases = len(case.cat.categories)
    groups = measured.groupby("case_id", sort=True, observed=True)  # in category (= text) order
    wall = groups["wall_s"]
    table = pd.DataFrame(
        {
            "n": wall.size(),
            "median_s": wall.median(),
            "min_s": wall.min(),
            "max_s": wall.max(),
            "mean_s": wall.mean(),
            "q1_s": wall.quantile(0.25),
            "q3_s": wall.quantile(0.75),
            "cv": wall.std(ddof=1) / wall.mean(),
            "n_warmup_dropped": groups["n_warmup"].sum(),
            "checksum": groups["checksum"].first(),
            "n_checksums": groups["checksum"].nunique(),
        }
    )
    table.index = table.index.astype(str)
    if warm_rows.any():
        warm = pd.Categorical(records.loc[warm_rows, "case_id"].astype(str), categories=case.cat.categories)
        warm_codes = warm.codes[warm.codes >= 0]
        table["n_warmup_dropped"] += np.bincount(warm_codes, minlength=n_cases)
    # Tukey's fences: flagged, not removed (the median is robust; the reader sees how many there are).
    iqr = table["q3_s"] - table["q1_s"]
    lo = (table["q1_s"] - 1.5 * iqr).to_numpy()[codes]  # table row i = category i
    hi = (table["q3_s"] + 1.5 * iqr).to_numpy()[codes]
    wall_s = measured["wall_s"].to_numpy(dtype=float)
    measured["outlier"] = (wall_s < lo) | (wall_s > hi)
    table["n_outliers"] = np.bincount(
        codes, weights=measured["outlier"].to_numpy(), minlength=n_cases
    ).astype(np.int64)
    case_ids, starts, counts, values = grouped_values(measured)
    assert (case_ids == table.index.to_numpy()).all()
    return CaseStats(table.reset_index(), np.empty((0, 0), "float32"), measured, starts, counts, values)


def with_median_cis(
    described: CaseStats, n_resamples: int = 2000, seed: int = 0, noise_threshold: float = 0.05
) -> CaseStats:
    """describe's table with the bootstrap CI of each case's median, and the bootstrap distributions."""
    if described.values is None:  # no measured record
        return CaseStats(described.table, np.empty((0, n_resamples), "float32"), described.records)
    rng = np.random.default_rng(seed)
    table = described.table.copy()
    low, high, dist = bootstrap_medians(
        described.values, described.starts, described.counts, n_resamples, rng
    )
    table["ci_low_s"] = low
    table["ci_high_s"] = high
    table["ci_rel_width"] = (high - low) / table["median_s"]
    table["noisy"] = table["ci_rel_width"] > noise_threshold
    table["n_resamples"] = n_resamples
    return CaseStats(table, dist, described.records, described.starts, described.counts, described.values)


SUMMARY_COLUMNS = [
    "case_id",
    "n",
    "median_s",
    "min_s",
    "max_s",
    "mean_s",
    "q1_s",
    "q3_s",
    "cv",
    "n_warmup_dropped",
    "checksum",
    "n_checksums",
    "n_outliers",
    "ci_low_s",
    "ci_high_s",
    "ci_rel_width",
    "noisy",
    "n_resamples",
]


RATIO_ROWS = 1024  # pairs per batch of ratio_ci: its float64 ratios stay a few MB, in cache


def row_quantiles(matrix: np.ndarray, quantiles: list[float]) -> np.ndarray:
    """np.quantile(matrix, quantiles, axis=1) (the default, linear method), bit for bit, but by
    partitioning each row in place around the few order statistics needed: numpy's own path moves the
    axis first and partitions along strided columns, several times slower on wide matrices.
    `matrix` (2-D, float) is reordered within rows."""
    n = matrix.shape[1]
    virtual = [(n - 1) * q for q in quantiles]
    below = [int(np.floor(v)) for v in virtual]
    above = [min(b + 1, n - 1) for b in below]
    # A pass over what lies above the previous order statistic per pair (b, b + 1) of neighbours: the
    # upper one, then the lower one as the largest below it (numpy's several-kth partition is two to
    # three times slower on rows of bootstrap ratios).
    kth, done = sorted({*below, *above}), 0
    while kth:
        k = kth.pop(0)
        pair = bool(kth) and kth[0] == k + 1
        matrix[:, done:].partition(k + pair - done, axis=1)
        if pair:
            matrix[:, done : k + 1].partition(k - done, axis=1)
            kth.pop(0)
        done = k + pair + 1
    # NaN sorts after every number, so a row with one has one at or after its largest kth position.
    has_nan = np.isnan(matrix[:, max(above) :]).any(axis=1)
    out = np.empty((len(quantiles), matrix.shape[0]))
    for i, (v, b, a) in enumerate(zip(virtual, below, above, strict=True)):
        low, high = matrix[:, b], matrix[:, a]
        gamma = v - np.floor(v)
        diff = high - low
        # numpy's _lerp: from the nearer end, so that gamma = 0 or 1 returns that value exactly
        out[i] = high - diff * (1 - gamma) if gamma >= 0.5 else low + diff * gamma
        out[i][has_nan] = np.nan
    return out


def ratio_ci(
    numerator: np.ndarray,
    denominator: np.ndarray,
    rng: np.random.Generator,
    numerator_rows: np.ndarray | None = None,
    denominator_rows: np.ndarray | None = None,
) -> tuple:
    """CI of a ratio of two independent medians from their bootstrap replicates (rows = pairs; with
    numerator_rows/denominator_rows: pair i is numerator[numerator_rows[i]] over
    denominator[denominator_rows[i]], gathered batch by batch instead of as two (pairs x resamples)
    copies).

    Replicates of different cases were drawn with shared resample indices (scipy vectorises that way);
    permuting one side's replicates makes the two resamplings independent, as a two-sample bootstrap is.
    Computed in batches of rows, in threads, each into buffers it allocates once: two (pairs x
    resamples) float64 matrices of the whole campaign would take 600 MB for 20,000 pairs."""
    n_pairs = len(numerator) if numerator_rows is None else len(numerator_rows)
    if n_pairs == 0 or numerator.shape[1] == 0:
        return np.empty(0), np.empty(0)
    perm = rng.permutation(numerator.shape[1])
    alpha = (1 - CONFIDENCE) / 2
    low = np.empty(n_pairs)
    high = np.empty(n_pairs)

    def work(batches: list[slice]) -> None:
        rows_of = np.empty((RATIO_ROWS, numerator.shape[1]), dtype=numerator.dtype)
        taken = np.empty((RATIO_ROWS, numerator.shape[1]), dtype=numerator.dtype)
        below = np.empty((RATIO_ROWS, numerator.shape[1]), dtype=denominator.dtype)
        ratios = np.empty((RATIO_ROWS, numerator.shape[1]))
        for part in batches:
            size = part.stop - part.start
            top = numerator[part]
            if numerator_rows is not None:
                top = np.take(numerator, numerator_rows[part], axis=0, out=rows_of[:size], mode="clip")
            bottom = denominator[part]
            if denominator_rows is not None:
                bottom = np.take(denominator, denominator_rows[part], axis=0, out=below[:size], mode="clip")
            np.take(top, perm, axis=1, out=taken[:size], mode="clip")
            # Both sides in float64 first (as .astype(float) / .astype(float)), then divided.
            np.divide(taken[:size], bottom, out=ratios[:size], dtype=float)
            low[part], high[part] = row_quantiles(ratios[:size], [alpha, 1 - alpha])

    in_threads(work, n_pairs, RATIO_ROWS)
    return low, high
