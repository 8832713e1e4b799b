"""Baselines and speedup CIs against the planted true times."""

import numpy as np
import pytest

from analysis.pipeline import Options, analyze
from sbcore.errors import UsageError
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def test_default_baseline_is_best_serial_of_same_language(standard):
    truth, result = standard
    sp = result.speedup
    s = result.summary.set_index("case_id")
    fortran = sp[(sp["binary"] == "mandelbrot-f-omp")]
    assert (fortran["baseline_binary"] == "mandelbrot-f-serial").all()
    base = fortran["baseline_case_id"].iloc[0]
    assert fortran["baseline_median_s"].iloc[0] == s.loc[base, "median_s"]
    assert (sp["baseline"] == "serial").all()


def test_speedup_ci_covers_the_true_speedup_for_most_cases(standard):
    truth, result = standard
    sp = result.speedup.dropna(subset=["speedup"])
    sp = sp[sp["model"] != "serial"]
    true = np.array(
        [
            truth.true_median_s[b] / truth.true_median_s[c]
            for b, c in zip(sp["baseline_case_id"], sp["case_id"], strict=True)
        ]
    )
    covered = (sp["speedup_ci_low"].to_numpy() <= true) & (true <= sp["speedup_ci_high"].to_numpy())
    assert covered.mean() >= 0.85, covered.mean()
    assert np.allclose(sp["efficiency"], sp["speedup"] / sp["workers"])


def test_self_baseline_and_karp_flatt(tmp_path):
    node = NodeTypeSpec("n8", cores=8)
    specs = [
        CaseSpec("n8", "mcpi", "c", "omp", p, reps=12, serial_fraction=0.2, noise="none")
        for p in (1, 2, 4, 8)
    ]
    truth = write_campaign(tmp_path, "self", specs, [node])
    result = analyze(truth.campaign_dir, Options(baseline="self", n_resamples=200))
    sp = result.speedup.set_index("threads")
    assert sp.loc[1, "speedup"] == 1 and sp.loc[1, "speedup_ci_low"] == 1
    for p in (2, 4, 8):
        assert sp.loc[p, "speedup"] == pytest.approx(1 / (0.2 + 0.8 / p))
        assert sp.loc[p, "karp_flatt"] == pytest.approx(0.2)  # exact Amdahl times: e = f


def test_case_and_binary_baselines_and_unknown_baseline(standard):
    truth, result = standard
    from analysis.stats.speedup import speedups

    rng = np.random.default_rng(0)
    s, dist = result.summary, result.stats.dist
    one = s[(s["binary"] == "mandelbrot-c-omp") & (s["workers"] == 1) & (s["schedule"] == "static")]
    cid = one["case_id"].iloc[0]
    by_case = speedups(s, dist, cid, rng)
    mandel = by_case[by_case["kernel"] == "mandelbrot"]
    assert (mandel["baseline_case_id"].dropna() == cid).all()
    by_binary = speedups(s, dist, "mandelbrot-c-omp", rng)
    base = by_binary.dropna(subset=["baseline_case_id"])
    assert set(base["baseline_binary"]) == {"mandelbrot-c-omp"} and (base["baseline_workers"] == 1).all()
    with pytest.raises(UsageError, match="--baseline 'nonsense'"):
        speedups(s, dist, "nonsense", rng)


def test_simd_cases_scale_against_the_simd_serial_loop(tmp_path):
    """A vectorised parallel run is compared with the vectorised serial loop, never with the scalar one
    (that would report vectorisation x parallelism as a 'speedup' far above the core count)."""
    node = NodeTypeSpec("n2", cores=2)
    specs = [
        CaseSpec("n2", "mandelbrot", "c", "serial", 1, inner="scalar", t1=1.0, reps=8),
        CaseSpec("n2", "mandelbrot", "c", "serial", 1, inner="simd", t1=0.1, reps=8),
        CaseSpec("n2", "mandelbrot", "c", "omp", 2, inner="simd", t1=0.1, reps=8, schedule="dynamic,1"),
        CaseSpec("n2", "mandelbrot", "c", "omp", 2, inner="scalar", t1=1.0, reps=8, schedule="dynamic,1"),
    ]
    truth = write_campaign(tmp_path, "simd", specs, [node], seed=4)
    sp = analyze(truth.campaign_dir, Options(n_resamples=300, seed=1)).speedup.set_index("inner")
    omp = sp[sp["model"] == "omp"]
    for inner in ("scalar", "simd"):
        base = omp.loc[inner, "baseline_case_id"]
        assert sp.loc[sp["case_id"] == base].index[0] == inner
        assert omp.loc[inner, "speedup"] == pytest.approx(1 / (0.1 + 0.9 / 2), rel=0.1)
