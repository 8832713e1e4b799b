"""The vectorised statistics of a large campaign against the straightforward computations they replace
(scipy's own bootstrap, per-group loops), on small random data: equal to the last bit where the
outputs must not change."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from analysis.stats.per_case import CONFIDENCE, bca_median_interval, jackknife_medians


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
    from analysis.stats.per_case import RATIO_ROWS, ratio_ci

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

    from analysis.checks import completeness
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


def test_summary_by_case_codes_equals_a_groupby_of_strings():
    """summarize groups by categorical codes (categories put in text order): the same table as grouping
    the ids as strings, with unsorted and unused categories and warm-up records in the input."""
    import pandas as pd

    from analysis.stats.per_case import summarize

    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 12, 40)
    ids = [f"case-{rng.integers(1 << 30):09d}" for _ in sizes]
    case = np.repeat(ids, sizes)
    records = pd.DataFrame(
        {
            "case_id": pd.Categorical(case, categories=[*ids[::-1], "never-measured"]),
            "rep": np.concatenate([np.arange(k) for k in sizes]),
            "wall_s": rng.lognormal(0, 0.2, len(case)),
            "n_warmup": rng.integers(0, 2, len(case)),
            "checksum": rng.choice(["a", "b"], len(case), p=[0.9, 0.1]),
            "warmup": rng.random(len(case)) < 0.1,
        }
    ).sample(frac=1, random_state=2)
    stats_ = summarize(records, n_resamples=50, seed=3)
    measured = records[~records["warmup"]].astype({"case_id": str})
    groups = measured.groupby("case_id", sort=True)
    wall = groups["wall_s"]
    q1, q3 = wall.quantile(0.25), wall.quantile(0.75)
    fence_lo = measured["case_id"].map(q1 - 1.5 * (q3 - q1))
    fence_hi = measured["case_id"].map(q3 + 1.5 * (q3 - q1))
    outlier = (measured["wall_s"] < fence_lo) | (measured["wall_s"] > fence_hi)
    warm = records[records["warmup"]].astype({"case_id": str}).groupby("case_id").size()
    expected = pd.DataFrame(
        {
            "n": wall.size(),
            "median_s": wall.median(),
            "min_s": wall.min(),
            "cv": wall.std(ddof=1) / wall.mean(),
            "n_warmup_dropped": groups["n_warmup"].sum() + warm.reindex(wall.size().index, fill_value=0),
            "checksum": groups["checksum"].first(),
            "n_checksums": groups["checksum"].nunique(),
            "n_outliers": outlier.groupby(measured["case_id"]).sum(),
        }
    ).reset_index()
    got = stats_.table[expected.columns]
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, check_exact=True)
    assert list(stats_.records["outlier"]) == list(outlier) and outlier.any()
    assert (warm > 0).any()


def test_categorical_probe_columns_parse_as_to_numeric_and_isin_of_strings():
    import pandas as pd

    from analysis.stats.categorical import numeric, text_in

    values = ["0.5", "1e-3", None, "x", "7", "0.5", None, "mcpi", "nan"]
    column = pd.Series(values, dtype="category")
    expected = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").astype(float)
    pd.testing.assert_series_equal(numeric(column), expected)
    pd.testing.assert_series_equal(numeric(pd.Series(values, dtype=object)), expected)
    assert numeric(pd.Series([None, None], dtype="category")).isna().all()
    for names in (("mcpi", "7"), ("nan",), ()):
        reference = column.astype(str).isin(names).to_numpy()
        assert (text_in(column, names) == reference).all()
    assert text_in(column, ("mcpi",)).sum() == 1


def test_replicate_fractions_gathered_by_batch_equal_the_per_series_fits():
    from analysis.stats.models import REPLICATE_POINTS, replicate_fractions

    rng = np.random.default_rng(12)
    sizes = rng.integers(3, 7, REPLICATE_POINTS // 3)  # series cross the batch boundaries
    group = np.repeat(np.arange(len(sizes)), sizes)
    workers = np.concatenate([np.arange(1, k + 1) for k in sizes]).astype(float)
    medians = 0.2 + 1 / workers + rng.normal(0, 0.01, len(group))
    dist = (medians[:, None] * rng.lognormal(0, 0.02, (len(group), 300))).astype(np.float32)
    shuffle = rng.permutation(len(group))
    source = np.empty_like(dist)
    source[shuffle] = dist  # point i's replicates live at row shuffle[i]
    fast = replicate_fractions(workers, medians, group, len(sizes), source, shuffle)
    assert np.array_equal(fast, replicate_fractions(workers, medians, group, len(sizes), dist))
    # All resamples at once, batch by batch of points: the same sums in the same order, to the bit.
    x1, x2, n = 1 / medians, 1 / (workers * medians), len(sizes)
    c1, c2 = np.zeros((n, dist.shape[1])), np.zeros((n, dist.shape[1]))
    for first in range(0, len(group), REPLICATE_POINTS):
        part = slice(first, first + REPLICATE_POINTS)
        y, g = dist[part].astype(float), group[part]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        c1[g[starts]] += np.add.reduceat(y * (x1[part] * x1[part])[:, None], starts, axis=0)
        c2[g[starts]] += np.add.reduceat(y * (x1[part] * x2[part])[:, None], starts, axis=0)
    s11, s12, s22 = (np.bincount(group, weights=w) for w in (x1 * x1, x1 * x2, x2 * x2))
    det = (s11 * s22 - s12 * s12)[:, None]
    a = (s22[:, None] * c1 - s12[:, None] * c2) / det
    b = (s11[:, None] * c2 - s12[:, None] * c1) / det
    assert np.array_equal(fast, a / (a + b))
    for g in (0, len(sizes) // 2, len(sizes) - 1):
        mine = group == g
        design = np.column_stack([1 / medians[mine], 1 / (workers[mine] * medians[mine])])
        a, b = np.linalg.lstsq(design, dist[mine].astype(float) / medians[mine][:, None], rcond=None)[0]
        np.testing.assert_allclose(fast[g], a / (a + b), rtol=1e-9)


def test_binary_names_per_combination_equal_the_joined_strings():
    import pandas as pd

    from analysis.stats.counters import binary_names

    rng = np.random.default_rng(13)
    frame = pd.DataFrame(
        {
            "kernel": rng.choice(["mandelbrot", "mcpi", None], 500),
            "lang": rng.choice(["c", "fortran"], 500),
            "model": rng.choice(["omp", "serial", "mpi"], 500),
        }
    ).astype("category")
    kernel, lang, model = (frame[c].astype(str) for c in ("kernel", "lang", "model"))
    expected = kernel + "-" + lang + "-" + model
    pd.testing.assert_series_equal(binary_names(frame), expected)
    assert binary_names(frame).isna().any() and binary_names(frame).nunique() == 12


def test_row_nanquantiles_equal_numpys_nanquantile_bit_for_bit():
    from analysis.stats.models import row_nanquantiles

    rng = np.random.default_rng(14)
    matrix = rng.normal(0.1, 0.05, (60, 301))
    matrix[3, 7] = np.nan
    matrix[5] = np.nan  # all NaN
    matrix[8, ::2] = np.nan
    qs = [0.025, 0.975]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.nanquantile(matrix, qs, axis=1)
    assert np.array_equal(row_nanquantiles(matrix.copy(), qs), expected, equal_nan=True)
    assert np.isfinite(expected).sum() == 2 * 59


def test_never_filled_categorical_column_is_written_as_empty_fields(tmp_path):
    import pandas as pd

    from analysis.outputs.tables import write_table

    empty = pd.Series([None] * 4, dtype="category")
    frame = pd.DataFrame({"case_id": ["a", "b", "c", "d"], "probe": empty, "x": [1.5, 2, None, 4]})
    write_table(frame, tmp_path / "fast.csv")
    write_table(frame.astype({"probe": object}), tmp_path / "slow.csv")
    text = (tmp_path / "fast.csv").read_text()
    assert text == (tmp_path / "slow.csv").read_text()
    assert text.splitlines()[1] == '"a",,1.5'


def _status_records(rng, size=400):
    import pandas as pd

    ids = [f"c{i:02d}" for i in range(30)]
    return pd.DataFrame(
        {
            "case_id": pd.Categorical(rng.choice(ids, size), categories=ids[::-1] + ["unused"]),
            "rep": rng.integers(0, 5, size),
            "pin_violations": rng.choice([0, 0, 0, 1, 2], size),
            "node_type": pd.Categorical(rng.choice(["b", "a"], size), categories=["b", "a"]),
            "counters_group": pd.Categorical(rng.choice(["FLOPS_DP", "L2", None], size)),
            "counters_status": pd.Categorical(rng.choice(["ok", "off", "unavailable"], size)),
            "counters_reason": pd.Categorical(rng.choice([None, "no PMU", "", "paranoid"], size)),
        }
    )


def test_placement_and_counter_status_by_codes_equal_the_groupbys_of_objects():
    import pandas as pd

    from analysis.checks import counter_status, placement_violations

    records = _status_records(np.random.default_rng(15))
    r = records.astype({"case_id": str}).assign(violated=records["pin_violations"] > 0)
    counts = r.groupby("case_id", observed=True).agg(
        records_with_violations=("violated", "sum"), records=("rep", "size")
    )
    expected = counts[counts["records_with_violations"] > 0].reset_index()
    pd.testing.assert_frame_equal(placement_violations(records), expected)
    keys = ["node_type", "counters_group", "counters_status", "counters_reason"]
    r = records[keys].copy()
    for column in keys[1:]:
        r[column] = r[column].astype(object).fillna("")
    expected = r.groupby(keys, observed=True).size().rename("records").reset_index()
    pd.testing.assert_frame_equal(counter_status(records), expected)
    assert len(expected) > 20 and (expected["counters_reason"] == "").any()


@pytest.mark.parametrize("record_twice", [False, True], ids=["one row a record", "a record twice"])
def test_counter_cases_by_codes_equal_a_groupby_of_every_row_as_text(record_twice):
    import pandas as pd

    from analysis.stats.counters import CASE_COLUMNS, aggregation, counter_cases, unit_of

    rng = np.random.default_rng(16)
    ids = [f"k{i:02d}" for i in range(12)]
    recs = pd.DataFrame(
        [
            {
                "case_id": case,
                "rep": rep,
                "hostname": "h",
                "node_type": "n" + case[-1],
                "kernel": "mcpi",
                "lang": "c",
                "model": ["omp", "serial"][i % 2],
                "threads": 1 + i % 3,
                "pin_strategy": "compact",
                "counters_group": ["MEM", "FLOPS"][i % 2],
                "counters_status": "ok" if rng.random() < 0.8 else "off",
            }
            for i, case in enumerate(ids)
            for rep in range(4)
        ]
    )
    metrics = ["CPI", "Memory bandwidth [MBytes/s]", "Runtime (RDTSC) [s]", "DP [MFLOP/s]"]
    rows = [
        (case, rep, metric, t, rng.random())
        for case in ids
        for rep in range(4)
        for metric in metrics
        for t in range(int(rng.integers(1, 4)))
    ]
    if record_twice:  # (the loader never gives one: a table of someone else's)
        recs = pd.concat([recs, recs[recs["counters_status"] == "ok"].iloc[:3]], ignore_index=True)
    counters = pd.DataFrame(rows, columns=["case_id", "rep", "metric", "hwthread", "value"])
    counters = counters.astype({"case_id": pd.CategoricalDtype(ids[::-1]), "metric": "category"})
    fast = counter_cases(
        recs.astype({c: "category" for c in ("case_id", "kernel", "lang", "model")}), counters
    )

    ok = recs[recs["counters_status"] == "ok"].assign(
        binary=lambda r: r["kernel"] + "-" + r["lang"] + "-" + r["model"]
    )
    data = counters.astype({"case_id": str, "metric": str}).merge(ok, on=["case_id", "rep"])
    data = data[~data["metric"].str.startswith("Runtime ")]
    keys = ["node_type", "binary", "threads", "pin_strategy", "counters_group", "case_id", "metric"]
    per_record = data.groupby([*keys, "rep"])["value"]
    value = per_record.sum().where(
        per_record.sum().index.get_level_values("metric").map(lambda m: aggregation(m) == "sum"),
        per_record.mean(),
    )
    slow = value.groupby(level=keys).agg(["count", "median", "min", "max"]).rename(columns={"count": "reps"})
    slow = slow.reset_index().assign(
        unit=lambda t: t["metric"].map(unit_of), over_hwthreads=lambda t: t["metric"].map(aggregation)
    )
    order = ["case_id", "metric"]
    fast = fast.sort_values(order, ignore_index=True)
    slow = slow[CASE_COLUMNS].sort_values(order, ignore_index=True)
    pd.testing.assert_frame_equal(fast, slow, check_dtype=False, check_exact=False, rtol=1e-12)
    assert len(slow) > 20


def test_reappearing_counter_keys_are_found_as_by_duplicated():
    import pandas as pd

    from analysis.stats.counters import _reappears

    rng = np.random.default_rng(17)
    for _ in range(50):
        size = int(rng.integers(0, 40))
        case, rep, metric = rng.integers(-1, 6, size), rng.integers(0, 4, size), rng.integers(-1, 3, size)
        expected = pd.DataFrame({"c": case, "r": rep, "m": metric}).duplicated().any()
        assert _reappears(case, rep, metric, 3) == expected
    assert not _reappears(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([2, 2, 2]), 3)
    assert _reappears(np.array([1, 0, 1]), np.array([0, 1, 0]), np.array([-1, 2, -1]), 3)


def test_key_strings_join_the_columns_as_text_with_missing_values_alike():
    import pandas as pd

    from analysis.stats.speedup import key_strings

    frame = pd.DataFrame(
        {
            "a": pd.Categorical(["x", None, "y", "x"]),
            "b": [1.0, np.nan, 2.5, 1.0],
            "c": [None, None, "z", pd.NA],
            "d": [3, 4, 5, 3],
        },
        index=[7, 8, 9, 10],
    )
    keys = key_strings(frame, ["a", "b", "c", "d"])
    # The column-by-column string additions it replaces:
    parts = [frame[c].astype(object).where(frame[c].notna(), "<none>").astype(str) for c in "abcd"]
    expected = parts[0] + "\x1f" + parts[1] + "\x1f" + parts[2] + "\x1f" + parts[3]
    pd.testing.assert_series_equal(keys, expected)
    assert keys.tolist()[:2] == ["x\x1f1.0\x1f<none>\x1f3", "<none>\x1f<none>\x1f<none>\x1f4"]


def test_batches_spread_over_threads_each_once(monkeypatch):
    from analysis.stats import row_batches

    monkeypatch.setattr(row_batches, "cpus", lambda: 64)
    seen, calls = [], []

    def work(batches):
        calls.append(len(batches))
        seen.extend((b.start, b.stop) for b in batches)

    row_batches.in_threads(work, 1000, 7)
    assert sorted(seen) == [(i, min(i + 7, 1000)) for i in range(0, 1000, 7)]
    assert len(calls) == row_batches.MAX_THREADS  # one share per thread, never more threads than that
    seen.clear()
    row_batches.in_threads(work, 0, 7)
    assert seen == []


def test_ratio_ci_of_a_subset_of_pairs_equals_those_pairs_in_the_full_set():
    """speedups leaves a case against itself out of the resampling (its CI is exactly 1): the other
    pairs' CIs must not change."""
    from analysis.stats.per_case import ratio_ci

    rng = np.random.default_rng(18)
    dist = rng.lognormal(0, 0.05, (200, 300)).astype(np.float32)
    top, bottom = rng.integers(0, 200, 500), rng.integers(0, 200, 500)
    keep = rng.random(500) < 0.7
    full = ratio_ci(dist, dist, np.random.default_rng(4), top, bottom)
    part = ratio_ci(dist, dist, np.random.default_rng(4), top[keep], bottom[keep])
    assert np.array_equal(full[0][keep], part[0]) and np.array_equal(full[1][keep], part[1])


@pytest.mark.parametrize("shuffled", [False, True])
def test_clean_summary_of_records_in_case_order_equals_the_per_case_loop(shuffled):
    import pandas as pd

    from analysis.stats.disturbance import clean_summary
    from tests.analysis.test_fast_paths import clean_summary_reference

    rng = np.random.default_rng(19)
    sizes = rng.choice([3, 7, 7, 7, 12], 80)
    case = np.repeat([f"c{i:03d}" for i in range(len(sizes))], sizes)  # grouped by case, as loaded
    flagged = pd.DataFrame(
        {
            "case_id": pd.Categorical(case),
            "wall_s": rng.lognormal(0, 0.3, len(case)).round(3),
            "disturbed": rng.random(len(case)) < 0.2,
        }
    )
    flagged.loc[flagged.index[::17], "wall_s"] = np.nan
    if shuffled:
        flagged = flagged.sample(frac=1, random_state=3)
    fast = clean_summary(flagged).reset_index(drop=True)
    slow = clean_summary_reference(flagged)
    pd.testing.assert_frame_equal(fast, slow, check_dtype=False)
    assert fast["ci_low_clean_s"].notna().sum() > 20


def test_model_worker_lists_equal_a_groupby_of_each_series():
    from analysis.stats.models import fit_models
    from analysis.variants import SCALING_SERIES
    from tests.analysis.test_fast_paths import scaling_summary

    summary, dist = scaling_summary(np.random.default_rng(20), 40, 50)
    summary = summary.sample(frac=1, random_state=5)  # series interleaved
    models = fit_models(summary, dist, {"n16": 16})
    series = summary.groupby(SCALING_SERIES, dropna=False, sort=True)["workers"]
    expected = [" ".join(str(w) for w in sorted(ws)) for ws in series.agg(list)]
    assert models["workers"].tolist() == expected and len(expected) == 40
