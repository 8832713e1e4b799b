"""The vectorised paths of the analysis against the straightforward per-group computations they replace
(kept here as references), on small random data with ragged groups."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.disturbance import clean_summary
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

    from analysis.stats.models import amdahl

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
    from analysis.stats.models import fit_models

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
    from analysis.stats.per_case import row_quantiles

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 40, 2000, 2001):
        matrix = rng.lognormal(0, 0.3, (50, n))
        matrix[3, n // 2] = np.nan
        matrix[4] = 1.5  # all equal
        qs = [0.0, 0.025, 0.5, 0.975, 1.0]
        expected = np.quantile(matrix, qs, axis=1)
        np.testing.assert_array_equal(row_quantiles(matrix.copy(), qs), expected)


def test_ratio_ci_in_batches_equals_the_whole_matrix_at_once():
    from analysis.stats.per_case import CONFIDENCE, RATIO_ROWS, ratio_ci

    rng = np.random.default_rng(9)
    num = rng.lognormal(0, 0.05, (RATIO_ROWS + 300, 500)).astype(np.float32)
    den = rng.lognormal(0.5, 0.05, (RATIO_ROWS + 300, 500)).astype(np.float32)
    low, high = ratio_ci(num, den, np.random.default_rng(1))
    perm = np.random.default_rng(1).permutation(500)
    alpha = (1 - CONFIDENCE) / 2
    ref = np.quantile(num[:, perm].astype(float) / den.astype(float), [alpha, 1 - alpha], axis=1)
    np.testing.assert_array_equal(low, ref[0])
    np.testing.assert_array_equal(high, ref[1])


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = frame.astype({c: object for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})
    return out.sort_values(keys, ignore_index=True)


def test_workers_listing_case_directories_load_what_the_file_list_loads(standard, monkeypatch):
    """The cold path (workers list and read whole case directories) against the path the cache uses
    (the main process lists every file, workers parse given files), in parallel chunks of a few cases."""
    from analysis.records import load
    from sbcore import layout

    truth, _ = standard
    monkeypatch.setattr(load, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(load, "CHUNK_FILES", 40)
    fast = load._concat(load.parse_campaign(truth.campaign_dir, processes=2))
    keys = layout.raw_files(truth.campaign_dir)
    slow = load._concat(load.parse_python(truth.campaign_dir, keys, processes=2))
    assert len(fast.keys) == len(keys) > 100 and set(fast.keys) == set(keys)
    pd.testing.assert_frame_equal(  # columns in order of first appearance, which the chunking decides
        _sorted(fast.records, ["case_id", "rep"]), _sorted(slow.records, ["case_id", "rep"]), check_like=True
    )
    key = ["case_id", "rep", "metric", "hwthread"]
    pd.testing.assert_frame_equal(_sorted(fast.counters, key), _sorted(slow.counters, key))
    pd.testing.assert_frame_equal(_sorted(fast.problems, ["file"]), _sorted(slow.problems, ["file"]))
    assert set(fast.problems["file"]) >= set(truth.corrupt_files)
    pd.testing.assert_frame_equal(_sorted(fast.failed, ["file"]), _sorted(slow.failed, ["file"]))
    assert len(fast.failed) > 0


def test_the_analysis_reads_every_raw_file_once(standard, monkeypatch):
    """The microbenchmark tables come from the records table (result_json): no raw file is read again
    after the load."""
    from analysis.pipeline import Options, analyze
    from analysis.records import load
    from sbcore import layout

    truth, _ = standard
    reads = []
    real = load.load_records

    def load_then_forbid(*args, **kwargs):
        loaded = real(*args, **kwargs)
        monkeypatch.setattr(layout, "case_records", lambda *a: reads.append(a))
        return loaded

    monkeypatch.setattr("analysis.pipeline.load_records", load_then_forbid)
    result = analyze(truth.campaign_dir, Options(n_resamples=50, use_cache=False))
    assert reads == [] and result.micro == {} and len(result.summary) > 10


def test_tables_written_side_by_side_equal_those_written_one_by_one(tmp_path):
    from analysis.outputs.tables import write_files, write_table
    from sbcore.errors import EnvironmentProblem

    rng = np.random.default_rng(2)
    tables = {
        f"t{i}.csv": pd.DataFrame(
            {"case": pd.Categorical(rng.choice(["a", "b", None], 500)), "x": rng.random(500) * i}
        )
        for i in range(5)
    }
    write_files({tmp_path / "together" / name: t for name, t in tables.items()})
    for name, table in tables.items():
        write_table(table, tmp_path / "alone" / name)
        assert (tmp_path / "together" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes()
    (tmp_path / "file").write_text("")
    with pytest.raises(EnvironmentProblem, match=r"file/t\.csv: cannot write"):
        write_files({tmp_path / "file" / "t.csv": tables["t0.csv"]})  # parent is a file: one line naming it


def test_per_record_counter_values_equal_a_groupby_of_every_row():
    from analysis.stats.counters import per_record_values

    rng = np.random.default_rng(6)
    rows = []
    for case in ("a", "b", "c"):
        for rep in range(4):
            for metric in ("CPI", "Memory bandwidth [MBytes/s]", "Runtime (RDTSC) [s]"):
                rows += [(case, rep, metric, t, rng.random()) for t in range(int(rng.integers(1, 6)))]
    counters = pd.DataFrame(rows, columns=["case_id", "rep", "metric", "hwthread", "value"])
    counters.loc[rng.random(len(counters)) < 0.2, "value"] = np.nan
    counters.loc[(counters["case_id"] == "b") & (counters["rep"] == 1), "value"] = np.nan  # nothing measured
    counters = pd.concat([counters.iloc[::2], counters.iloc[1::2]])  # a record's rows split in two runs
    counters = counters.astype({"case_id": "category", "metric": "category", "rep": np.int32})
    fast = per_record_values(counters).sort_values(["case_id", "rep", "metric"], ignore_index=True)
    kept = counters[~counters["metric"].astype(str).str.startswith("Runtime")].astype({"metric": str})
    grouped = kept.astype({"case_id": str}).groupby(["case_id", "rep", "metric"])["value"]
    slow = pd.DataFrame({"sum": grouped.sum(min_count=1), "mean": grouped.mean()}).reset_index()
    assert len(fast) == len(slow) == 24
    np.testing.assert_array_equal(fast["case_id"], slow["case_id"])
    np.testing.assert_array_equal(fast["rep"], slow["rep"])
    np.testing.assert_allclose(fast["sum"], slow["sum"], rtol=1e-12)
    np.testing.assert_allclose(fast["mean"], slow["mean"], rtol=1e-12)
    nothing = (fast["case_id"] == "b") & (fast["rep"] == 1)
    assert fast.loc[nothing, "sum"].isna().all() and nothing.sum() == 2  # no value: NaN, not 0


def test_reps_by_case_equals_a_groupby_of_strings():
    from analysis.checks import reps_by_case

    rng = np.random.default_rng(8)
    frame = pd.DataFrame(
        {"case_id": rng.choice(["b", "a", "c", "d"], 300), "rep": rng.integers(0, 40, 300)}
    ).astype({"case_id": "category"})
    pairs = frame.astype({"case_id": str}).drop_duplicates()
    slow = {case_id: set(reps) for case_id, reps in pairs.groupby("case_id")["rep"]}
    assert reps_by_case(frame) == slow and len(slow) == 4
    assert reps_by_case(frame.astype({"case_id": str})) == slow


def test_records_in_case_rep_order_are_recognised():
    from analysis.pipeline import in_case_rep_order

    ordered = pd.DataFrame({"case_id": ["a", "a", "a", "b", "c"], "rep": [0, 2, 10, 1, 0]})
    assert in_case_rep_order(ordered) and in_case_rep_order(ordered.astype({"case_id": "category"}))
    assert not in_case_rep_order(ordered.iloc[[0, 2, 1, 3, 4]])  # rep 10 before rep 2
    assert not in_case_rep_order(ordered.iloc[[3, 0, 1, 2, 4]])
    assert not in_case_rep_order(pd.DataFrame({"case_id": ["a", "a"], "rep": [1, 1]}))


def test_the_scale_benchmarks_campaign_is_analysed_and_its_tables_written(tmp_path):
    """perf/perf_analysis.py's campaign shape (many cases, few distinct values per field, so the
    loader types them as categoricals) through the whole analysis: every table is computed and
    written, as `make perf` needs."""
    from analysis.pipeline import Options, analyze, write_tables
    from tests.synthetic_campaigns import bulk_specs, write_campaign

    specs, nodes = bulk_specs(1200, reps=6)
    truth = write_campaign(tmp_path, "bulk", specs, nodes)
    result = analyze(truth.campaign_dir, Options(n_resamples=50, seed=1, use_cache=False))
    assert len(result.summary) == len(specs)
    written = write_tables(result)
    assert any(p.name.startswith("summary") for p in written) and all(p.is_file() for p in written)
