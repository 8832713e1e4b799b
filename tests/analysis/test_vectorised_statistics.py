"""The vectorised statistics of a large campaign against the straightforward computations they replace
(scipy's own bootstrap, per-group loops), on small random data: equal to the last bit where the
outputs must not change."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from analysis.stats import CONFIDENCE, bca_median_interval, jackknife_medians


def _samples(rng, rows: int, n: int) -> np.ndarray:
    # Rounded: ties, as timer resolution gives them.
    return np.round(rng.lognormal(0, 0.1, (rows, n)), 3)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 11, 49, 50])
def test_jackknife_medians_are_the_medians_without_each_value(n):
    matrix = _samples(np.random.default_rng(n), 40, n)
    fast = jackknife_medians(matrix, np.sort(matrix, axis=1))
    slow = np.array([[np.median(np.delete(row, i)) for i in range(n)] for row in matrix])
    assert np.array_equal(fast, slow)


@pytest.mark.parametrize("rows", [1, 3, 200])
@pytest.mark.parametrize("n", [2, 5, 6, 50])
def test_bca_interval_equals_scipys_bootstrap_bit_for_bit(rows, n):
    rng = np.random.default_rng(rows * 100 + n)
    matrix = _samples(rng, rows, n)
    if rows > 1:
        matrix[0] = 1.0  # constant: BCa undefined (NaN), as in scipy
    ordered = np.sort(matrix, axis=1)
    index = np.sort(rng.integers(0, n, (500, n)), axis=1)
    replicates = 0.5 * (ordered[:, index[:, (n - 1) // 2]] + ordered[:, index[:, n // 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.bootstrap(
            (matrix,),
            np.median,
            n_resamples=0,
            bootstrap_result=SimpleNamespace(bootstrap_distribution=replicates),
            vectorized=True,
            axis=-1,
            confidence_level=CONFIDENCE,
            method="BCa",
        ).confidence_interval
        low, high = bca_median_interval(matrix, ordered, replicates)
    assert np.array_equal(low, expected.low, equal_nan=True)
    assert np.array_equal(high, expected.high, equal_nan=True)
    assert np.isfinite(low).sum() >= rows // 2  # the comparison covers computed intervals, not only NaNs


def test_ratio_ci_of_gathered_rows_equals_ratio_ci_of_the_gathered_matrices():
    from analysis.stats import RATIO_ROWS, ratio_ci

    rng = np.random.default_rng(5)
    dist = rng.lognormal(0, 0.05, (300, 400)).astype(np.float32)
    top, bottom = rng.integers(0, 300, RATIO_ROWS + 50), rng.integers(0, 300, RATIO_ROWS + 50)
    expected = ratio_ci(dist[top], dist[bottom], np.random.default_rng(2))
    low, high = ratio_ci(dist, dist, np.random.default_rng(2), top, bottom)
    assert np.array_equal(low, expected[0]) and np.array_equal(high, expected[1])
    assert (low < high).all()


def test_completeness_equals_one_state_per_case():
    """completeness asks sbcore.layout once per distinct (rule, done, failed): the same states as one
    call per case."""
    import pandas as pd

    from analysis.validity import completeness
    from sbcore import layout
    from sbcore.sampling import Rule

    rng = np.random.default_rng(8)
    rows, records, failed = [], [], []
    for i in range(60):
        reps = int(rng.integers(1, 5))
        rule = None if i % 3 else Rule(reps=reps, reps_per_process=1)
        rows.append({"case_id": f"c{i:02d}", "node_type": "n", "binary": "b", "threads": 1, "ranks": 1})
        rows[-1] |= {"reps": reps, "planned": True, "sampling_rule": rule}
        for rep in range(reps):
            fate = rng.choice(["done", "failed", "missing"], p=[0.6, 0.2, 0.2])
            if fate == "done":
                records.append({"case_id": f"c{i:02d}", "rep": rep})
            elif fate == "failed":
                failed.append({"case_id": f"c{i:02d}", "rep": rep, "file": f"f{i}-{rep}", "reason": "x"})
    cases = pd.DataFrame(rows)
    table = completeness(cases, pd.DataFrame(records), pd.DataFrame(failed))
    for case, row in zip(rows, table.itertuples(), strict=True):
        done = {r["rep"] for r in records if r["case_id"] == case["case_id"]}
        fails = {f["rep"] for f in failed if f["case_id"] == case["case_id"]}
        expected = layout.case_progress(case, dict.fromkeys(done, {}), fails, case["sampling_rule"])
        assert (row.state, row.done, row.failed, row.missing) == (
            expected.state,
            expected.reps_done,
            expected.reps_failed,
            expected.reps_missing,
        )
    assert set(table["state"]) == {"done", "failed", "partial", "missing"}
