"""Amdahl's law fitted per scaling series (one variant over worker counts <= the node's cores).

    T(p) = T1 * (f + (1 - f) / p)

fitted to the case medians with scipy.optimize.curve_fit, relative errors (sigma = median), f in [0, 1].
The CI of f comes from the bootstrap replicates of the medians (percentile), by refitting each replicate
with the same weighted least squares in the linear form T = a + b/p (f = a / (a + b)), all replicates
at once through the pseudo-inverse of the design matrix. 1/f is the upper bound of the speedup the
series can reach.
Only series with >= 3 distinct worker counts are fitted; beyond the cores time sharing, not Amdahl,
decides, so those points are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

from analysis.stats import CONFIDENCE
from analysis.variants import CASE_DESCRIPTION, SCALING_SERIES

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
    "speedup_bound",
    "rel_rms_residual",
]


def amdahl(p, t1, f):
    return t1 * (f + (1 - f) / p)


def fit_series(workers: np.ndarray, medians: np.ndarray, replicates: np.ndarray) -> dict:
    (t1, f), cov = curve_fit(
        amdahl,
        workers,
        medians,
        p0=(medians[np.argmin(workers)] * workers.min(), 0.1),
        sigma=medians,
        bounds=([0, 0], [np.inf, 1]),
    )
    residual = (medians - amdahl(workers, t1, f)) / medians
    # Same weights for every replicate (the observed medians): one lstsq with many right-hand sides.
    weight = 1 / medians
    design = np.column_stack([np.ones_like(workers), 1 / workers]) * weight[:, None]
    coef = np.linalg.pinv(design) @ (replicates.astype(float) * weight[:, None])  # the lstsq solution
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_f = coef[0] / (coef[0] + coef[1])
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.nanquantile(boot_f, [alpha, 1 - alpha])
    return {
        "t1_s": t1,
        "serial_fraction": f,
        "serial_fraction_ci_low": low,
        "serial_fraction_ci_high": high,
        "serial_fraction_se": float(np.sqrt(cov[1, 1])) if np.isfinite(cov[1, 1]) else np.nan,
        "speedup_bound": 1 / f if f > 0 else np.inf,
        "rel_rms_residual": float(np.sqrt(np.mean(residual**2))),
    }


def fit_models(s: pd.DataFrame, dist: np.ndarray, cores: dict[str, int | None]) -> pd.DataFrame:
    """`s`: checked summary with `row` (into dist) and `workers`; cores per node type."""
    usable = s[s["valid"] & (s["model"] != "serial")].copy()
    usable["cores"] = usable["node_type"].map(cores)
    usable = usable[usable["cores"].notna() & (usable["workers"] <= usable["cores"])]
    rows = []
    for _, series in usable.groupby(SCALING_SERIES, dropna=False):
        if series["workers"].nunique() < MIN_POINTS:
            continue
        first = series.iloc[0]
        fitted = fit_series(
            series["workers"].to_numpy(float),
            series["median_s"].to_numpy(float),
            dist[series["row"].to_numpy()],
        )
        rows.append(
            {
                **{c: first[c] for c in [*CASE_DESCRIPTION, "problem"]},
                "cores": int(first["cores"]),
                "n_points": len(series),
                "workers": " ".join(str(w) for w in sorted(series["workers"])),
                **fitted,
            }
        )
    return pd.DataFrame(rows, columns=MODEL_COLUMNS)
