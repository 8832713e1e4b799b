"""The vectorised paths of the analysis against the straightforward per-group computations they replace
(kept here as references), on small random data with ragged groups."""

import numpy as np
import pandas as pd
import pytest

from analysis.disturbance import clean_summary
from sbcore.sampling import median_ci


def clean_summary_reference(flagged: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for case_id, group in flagged.groupby("case_id", observed=True, sort=True):
        clean = group.loc[~group["disturbed"].astype(bool), "wall_s"].dropna().to_numpy(float)
        ci = median_ci(clean) if len(clean) else None
        rows.append(
            {
                "case_id": case_id,
                "n_disturbed": int(group["disturbed"].sum()),
                "n_clean": len(clean),
                "median_clean_s": float(np.median(clean)) if len(clean) else np.nan,
                "ci_low_clean_s": ci[0] if ci else np.nan,
                "ci_high_clean_s": ci[1] if ci else np.nan,
            }
        )
    return pd.DataFrame(rows)


def test_clean_summary_equals_the_per_case_loop():
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 30, 60)
    case = np.repeat([f"c{i:03d}" for i in range(len(sizes))], sizes)
    flagged = pd.DataFrame(
        {
            "case_id": case,
            "wall_s": rng.lognormal(0, 0.3, len(case)),
            "disturbed": rng.random(len(case)) < 0.3,
        }
    ).sample(frac=1, random_state=1)  # records arrive in no particular order
    flagged.loc[flagged.index[:5], "wall_s"] = np.nan
    flagged.loc[flagged["case_id"] == "c007", "disturbed"] = True  # nothing clean left
    fast = clean_summary(flagged)
    slow = clean_summary_reference(flagged)
    pd.testing.assert_frame_equal(fast.reset_index(drop=True), slow, check_dtype=False)
    assert fast["ci_low_clean_s"].notna().sum() > 20 and fast["ci_low_clean_s"].isna().any()


def amdahl_reference(workers: np.ndarray, medians: np.ndarray, replicates: np.ndarray) -> dict:
    """One series fitted as before the closed form: scipy's curve_fit, and the replicates through the
    pseudo-inverse of the design matrix."""
    from scipy.optimize import curve_fit

    from analysis.models import amdahl

    (t1, f), cov = curve_fit(
        amdahl,
        workers,
        medians,
        p0=(medians[np.argmin(workers)] * workers.min(), 0.1),
        sigma=medians,
        bounds=([0, 0], [np.inf, 1]),
    )
    residual = (medians - amdahl(workers, t1, f)) / medians
    weight = 1 / medians
    design = np.column_stack([np.ones_like(workers), 1 / workers]) * weight[:, None]
    coef = np.linalg.pinv(design) @ (replicates.astype(float) * weight[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_f = coef[0] / (coef[0] + coef[1])
    low, high = np.nanquantile(boot_f, [0.025, 0.975])
    return {
        "t1_s": t1,
        "serial_fraction": f,
        "serial_fraction_ci_low": low,
        "serial_fraction_ci_high": high,
        "serial_fraction_se": float(np.sqrt(cov[1, 1])) if np.isfinite(cov[1, 1]) else np.nan,
        "rel_rms_residual": float(np.sqrt(np.mean(residual**2))),
    }


def scaling_summary(rng: np.random.Generator, n_series: int, n_resamples: int):
    """A checked summary of many scaling series (true f from 0 to 1, also beyond the bounds: f < 0 is
    superlinear, f > 1 slower with more workers) and bootstrap replicates of each case's median."""
    rows, dist = [], []
    true_f = np.concatenate([[-0.05, 0.0, 1.0, 1.2], rng.uniform(0, 0.6, n_series - 4)])
    for i, f in enumerate(true_f):
        workers = np.array(sorted(rng.choice([1, 2, 3, 4, 6, 8, 12, 16], rng.integers(3, 8), replace=False)))
        t1 = rng.uniform(0.01, 10)
        for p in workers:
            median = t1 * (f + (1 - f) / p) * rng.lognormal(0, 0.03)
            median = max(median, 1e-3)
            rows.append(
                {
                    "case_id": f"s{i}p{p}",
                    "node_type": "n16",
                    "binary": "k-c-omp",
                    "kernel": "k",
                    "lang": "c",
                    "model": "omp",
                    "schedule": "static",
                    "sync": "none",
                    "inner": "scalar",
                    "pin": "compact",
                    "counter_group": None,
                    "params_json": f'{{"size": {i}}}',
                    "problem": f"size={i}",
                    "workers": int(p),
                    "median_s": median,
                    "valid": True,
                    "row": len(rows),
                }
            )
            dist.append(median * rng.lognormal(0, 0.02, n_resamples))
    return pd.DataFrame(rows), np.array(dist, dtype=np.float32)


def test_closed_form_amdahl_fits_equal_curve_fit():
    from analysis.models import fit_models

    rng = np.random.default_rng(7)
    summary, dist = scaling_summary(rng, 40, 300)
    fast = fit_models(summary, dist, {"n16": 16})
    assert len(fast) == 40
    at_bound = 0
    for _, row in fast.iterrows():
        series = summary[summary["params_json"] == f'{{"size": {row["problem"].split("=")[1]}}}']
        ref = amdahl_reference(
            series["workers"].to_numpy(float), series["median_s"].to_numpy(float), dist[series["row"]]
        )
        at_bound += ref["serial_fraction"] in (0.0, 1.0) or ref["serial_fraction"] < 1e-6
        assert row["t1_s"] == pytest.approx(ref["t1_s"], rel=1e-5)
        assert row["serial_fraction"] == pytest.approx(ref["serial_fraction"], rel=1e-4, abs=1e-7)
        assert row["rel_rms_residual"] == pytest.approx(ref["rel_rms_residual"], rel=1e-4, abs=1e-9)
        assert row["serial_fraction_se"] == pytest.approx(ref["serial_fraction_se"], rel=1e-3, nan_ok=True)
        assert row["serial_fraction_ci_low"] == pytest.approx(ref["serial_fraction_ci_low"], rel=1e-9)
        assert row["serial_fraction_ci_high"] == pytest.approx(ref["serial_fraction_ci_high"], rel=1e-9)
    assert at_bound >= 2  # the bounded cases were exercised (f < 0 and f > 1 planted)


def test_row_quantiles_are_numpys_quantiles_bit_for_bit():
    from analysis.stats import row_quantiles

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 2000, 2001):
        matrix = rng.lognormal(0, 0.3, (50, n))
        matrix[3, n // 2] = np.nan
        matrix[4] = 1.5  # all equal
        qs = [0.0, 0.025, 0.5, 0.975, 1.0]
        expected = np.quantile(matrix, qs, axis=1)
        np.testing.assert_array_equal(row_quantiles(matrix.copy(), qs), expected)


def test_ratio_ci_in_batches_equals_the_whole_matrix_at_once():
    from analysis.stats import CONFIDENCE, RATIO_ROWS, ratio_ci

    rng = np.random.default_rng(9)
    num = rng.lognormal(0, 0.05, (RATIO_ROWS + 300, 500)).astype(np.float32)
    den = rng.lognormal(0.5, 0.05, (RATIO_ROWS + 300, 500)).astype(np.float32)
    low, high = ratio_ci(num, den, np.random.default_rng(1))
    perm = np.random.default_rng(1).permutation(500)
    alpha = (1 - CONFIDENCE) / 2
    ref = np.quantile(num[:, perm].astype(float) / den.astype(float), [alpha, 1 - alpha], axis=1)
    np.testing.assert_array_equal(low, ref[0])
    np.testing.assert_array_equal(high, ref[1])
