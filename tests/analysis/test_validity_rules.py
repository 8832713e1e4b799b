"""Validity rules for what is reported as a result: implausible speedups, bimodal cases, the headline
chosen by the CI's lower bound, in the tables, the report and the console summary."""

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from analysis.checks import headline
from analysis.outputs.plots import all_plots
from analysis.outputs.report.render import write_report
from analysis.pipeline import Options, analyze
from analysis.stats.bimodality import bimodality
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, rewrite_case, write_campaign

SLOW_MODE = 1.7  # the planted bimodal case: half of its repetitions this much slower


def arrays(samples):
    counts = np.array([len(s) for s in samples])
    return np.concatenate([[0], np.cumsum(counts)[:-1]]), counts, np.concatenate(samples)


def test_bimodality_test_on_small_and_large_samples():
    rng = np.random.default_rng(5)
    two_states = [
        np.array([0.124, 0.125, 0.214, 0.22]),  # smallest testable sample: two clear pairs
        np.concatenate([0.124 * rng.lognormal(0, 0.02, 5), 0.215 * rng.lognormal(0, 0.02, 5)]),
        np.concatenate([1.0 * rng.lognormal(0, 0.02, 300), 1.12 * rng.lognormal(0, 0.02, 200)]),
    ]
    one_state = [
        np.array([0.124, 0.125, 0.126]),  # n = 3: nothing can be said
        np.full(10, 0.5),  # identical times
        np.array([1.0, 1.01, 0.99, 1.0, 1.02, 1.0, 0.98, 1.01, 1.0, 1.6]),  # one outlier is no mode
        *(rng.lognormal(0, 0.05, n) for n in (10, 50, 1000, 10000)),
        rng.lognormal(0, 0.3, 1000),  # very noisy, but one cluster
    ]
    flags = bimodality(*arrays(two_states + one_state))
    assert flags["bimodal"].tolist() == [True] * len(two_states) + [False] * len(one_state)
    # The modes are the two planted states.
    assert flags.loc[1, "mode_fast_s"] == pytest.approx(0.124, rel=0.05)
    assert flags.loc[1, "mode_slow_s"] == pytest.approx(0.215, rel=0.05)
    assert flags.loc[2, "mode_slow_share"] == pytest.approx(0.4, abs=0.02)


@pytest.fixture(scope="module")
def trap(tmp_path_factory):
    """A 2-core node type where the largest median speedup is implausible, the best CI lower bound is
    a different case, one case is bimodal and one superlinear beyond doubt."""
    node = NodeTypeSpec("vm2", cores=2, oversub=0.05)

    def spec(kernel, model, threads, **kw):
        return CaseSpec("vm2", kernel, "c", model, threads, reps=12, t1=1.0, serial_fraction=0.0, **kw)

    specs = [
        spec("mcpi", "serial", 1, sigma=0.01),
        spec("mcpi", "omp", 2, sigma=0.01, slowdown=2 / 1.6),  # 1.6x, tight CI: the honest headline
        spec("mcpi", "omp", 4, sigma=0.2, slowdown=(1 / 1.85) / 0.525),  # 1.85x median, wide CI
        spec("mcpi", "omp", 8, sigma=0.5, slowdown=(1 / 2.3) / 0.575),  # 2.3x on 2 cores: implausible
        spec("mandelbrot", "serial", 1, sigma=0.01),
        spec("mandelbrot", "omp", 2, sigma=0.01, slowdown=0.8),  # 2.5x, CI above 2: superlinear
        spec("mandelbrot", "omp", 1, schedule="dynamic,4", sigma=0.02),  # made bimodal below
        spec("mandelbrot", "omp", 1, schedule="guided", sigma=0.05),  # unimodal twin
    ]
    truth = write_campaign(tmp_path_factory.mktemp("results"), "trap-20261123T000000Z", specs, [node], seed=9)
    ids = [c["case_id"] for c in truth.cases]
    rewrite_case(  # a fixture, written before any run
        truth.campaign_dir / "raw" / ids[6],
        lambda records: [r | {"wall_s": r["wall_s"] * SLOW_MODE} if r["rep"] % 2 else r for r in records],
    )
    result = analyze(truth.campaign_dir, Options(n_resamples=1000, seed=2))
    return truth, ids, result


def test_bimodal_case_is_flagged_and_unimodal_ones_are_not(trap):
    _, ids, result = trap
    flagged = set(result.summary.loc[result.summary["bimodal"], "case_id"])
    assert flagged == {ids[6]}
    row = result.summary.set_index("case_id").loc[ids[6]]
    assert row["mode_slow_s"] / row["mode_fast_s"] == pytest.approx(SLOW_MODE, rel=0.1)


def test_speedup_above_the_cores_is_implausible_unless_its_ci_is_above_too(trap):
    _, ids, result = trap
    sp = result.speedup.set_index("case_id")
    implausible, superlinear = sp.loc[ids[3]], sp.loc[ids[5]]
    assert implausible["speedup"] > 2 and implausible["speedup_ci_low"] < 2  # what was planted
    assert implausible["usable_cores"] == 2 and implausible["plausibility"] == "implausible"
    assert superlinear["speedup_ci_low"] > 2 and superlinear["plausibility"] == "superlinear"
    assert (sp.drop(index=[ids[3], ids[5]])["plausibility"].isin(["ok", "unknown"])).all()


def test_headline_is_chosen_by_the_ci_lower_bound_never_an_implausible_one_superlinear_last(trap):
    _, ids, result = trap
    best = headline(result.speedup).set_index("kernel")
    mcpi = result.speedup[result.speedup["kernel"] == "mcpi"].set_index("case_id")
    assert mcpi["speedup"].idxmax() == ids[3]  # the old rule (largest median) would pick this one
    assert mcpi.loc[ids[2], "speedup"] > mcpi.loc[ids[1], "speedup"]  # larger median, wider CI
    assert best.loc["mcpi", "case_id"] == ids[1]
    assert best.loc["mcpi", "implausible_left_out"] == 1
    # The superlinear case (2.5x on 2 cores, CI above 2) is not the headline while a plausible one exists.
    assert best.loc["mandelbrot", "case_id"] != ids[5] and best.loc["mandelbrot", "plausibility"] == "ok"
    assert "1 superlinear speedup(s) not taken as the headline" in best.loc["mandelbrot", "caveats"]
    only = headline(result.speedup[result.speedup["case_id"] == ids[5]]).set_index("kernel")
    assert only.loc["mandelbrot", "case_id"] == ids[5]  # nothing plausible left: shown, with its caveat
    assert "superlinear: needs an explanation" in only.loc["mandelbrot", "caveats"]


def test_headline_says_when_the_case_is_noisy():
    row = {
        "node_type": "n",
        "kernel": "k",
        "model": "omp",
        "binary": "k-c-omp",
        "workers": 2,
        "speedup": 1.5,
        "speedup_ci_low": 1.1,
        "speedup_ci_high": 1.9,
        "usable_cores": 2,
        "plausibility": "ok",
        "noisy": True,
        "baseline_noisy": False,
        "bimodal": False,
        "baseline_bimodal": True,
    }
    (caveats,) = headline(pd.DataFrame([row]))["caveats"]
    assert caveats == "noisy case, bimodal baseline"


def flagged_row(case_id, ci_low, **flags):
    row = {
        "node_type": "n",
        "kernel": "k",
        "model": "omp",
        "case_id": case_id,
        "baseline_case_id": "serial",
        "binary": "k-c-omp",
        "workers": 2,
        "speedup": ci_low + 0.03,
        "speedup_ci_low": ci_low,
        "speedup_ci_high": ci_low + 0.06,
        "usable_cores": 2,
        "plausibility": "ok",
    }
    return row | {f: flags.get(f, False) for f in ("noisy", "bimodal", "baseline_noisy", "baseline_bimodal")}


def test_headline_passes_over_a_bimodal_case_while_a_clean_one_exists():
    rows = [flagged_row("a", 1.95, bimodal=True), flagged_row("b", 1.90), flagged_row("c", 1.93, noisy=True)]
    (best,) = headline(pd.DataFrame(rows)).to_dict("records")
    assert best["case_id"] == "b"
    assert best["caveats"] == "2 noisy or bimodal case(s) with a higher CI lower bound passed over"


def test_headline_takes_the_best_flagged_case_when_every_one_is_flagged():
    # a bimodal baseline flags every speedup of the kernel alike: the CI lower bound decides, as before
    rows = [flagged_row("a", 1.95, baseline_bimodal=True), flagged_row("b", 1.90, baseline_bimodal=True)]
    (best,) = headline(pd.DataFrame(rows)).to_dict("records")
    assert best["case_id"] == "a" and best["caveats"] == "bimodal baseline"


def test_a_clean_case_on_one_worker_does_not_displace_the_noisy_ones_on_two():
    # every 2-worker case noisy or bimodal, the only clean one at 1 worker: the headline is about scaling
    rows = [
        flagged_row("a", 1.95, bimodal=True),
        flagged_row("b", 1.90, noisy=True),
        flagged_row("one", 0.99) | {"workers": 1},
    ]
    (best,) = headline(pd.DataFrame(rows)).to_dict("records")
    assert best["case_id"] == "a"
    assert best["caveats"] == "bimodal case, every case on more than one worker is noisy or bimodal"
    rows[1]["noisy"] = False  # a clean 2-worker case is preferred, as before
    (best,) = headline(pd.DataFrame(rows)).to_dict("records")
    assert (
        best["case_id"] == "b"
        and best["caveats"] == "1 noisy or bimodal case(s) with a higher CI lower bound passed over"
    )
    (best,) = headline(pd.DataFrame(rows[2:])).to_dict("records")  # only one worker measured: that one
    assert best["case_id"] == "one" and best["workers"] == 1


def test_console_summary_applies_the_same_rules(trap, repo_root):
    truth, ids, _ = trap
    run = subprocess.run(
        [
            sys.executable,
            str(repo_root / "scalebench"),
            "analyze",
            str(truth.campaign_dir),
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    (line,) = [x for x in run.stdout.splitlines() if x.startswith("best mcpi")]
    assert "x2:" in line and "speedup 1.6" in line and "1 implausible left out" in line
    assert "1 bimodal, 1 implausible speedups, 1 superlinear" in run.stdout
    speedup = pd.read_csv(truth.campaign_dir / "analysis" / "speedup.csv")
    assert {"usable_cores", "plausibility", "noisy", "bimodal", "baseline_noisy"} <= set(speedup)
    summary = pd.read_csv(truth.campaign_dir / "analysis" / "summary.csv")
    assert summary.loc[summary["bimodal"], "case_id"].tolist() == [ids[6]]


def test_report_leads_with_findings_and_ends_with_readable_provenance(trap):
    truth, ids, result = trap
    written = write_report(result, all_plots(result), ("md", "html"))
    page = written["html"].read_text()
    headings = re.findall(r'<h2 id="([^"]+)"', page)
    assert headings.index("findings") == 0
    assert headings.index("scaling") < headings.index("validity") < headings.index("method")
    assert headings[-1] == "provenance"
    findings = page[page.index('id="findings"') : page.index('id="scaling"')]
    assert "mcpi on vm2: best mcpi-c-omp" in findings and "implausible speedup(s) left out" in findings
    assert "bimodal case(s)" in findings and ids[6] in findings
    assert "<img" not in findings  # the summary first, the plots after it
    # Provenance as key/value tables: no JSON object of the manifest anywhere in the report.
    manifest = json.loads((truth.campaign_dir / "manifest.json").read_text())
    for value in manifest.values():
        if isinstance(value, dict):
            assert json.dumps(value) not in page and json.dumps(value, sort_keys=True) not in page
    provenance = page[page.index('id="provenance"') :]
    assert "<table" in provenance and not re.search(r"<td>\s*[{\[](&quot;|\")", provenance)
    assert "<td>gcc 12.2.0</td>" in page  # compilers.c, one row of its own
    md = written["md"].read_text()
    assert md.index("## Findings") < md.index("## Scaling") < md.index("## Provenance")


def test_headline_says_when_it_is_no_speedup_at_all():
    base = {"node_type": "n", "kernel": "k", "model": "omp", "binary": "k-c-omp", "workers": 2}
    base["usable_cores"] = 2
    rows = [
        {**base, "speedup": 0.9, "speedup_ci_low": 0.8, "speedup_ci_high": 1.2, "plausibility": "ok"},
        {
            **base,
            "kernel": "j",
            "speedup": 0.7,
            "speedup_ci_low": 0.6,
            "speedup_ci_high": 0.8,
            "plausibility": "ok",
        },
    ]
    caveats = headline(pd.DataFrame(rows)).set_index("kernel")["caveats"]
    assert caveats["k"] == "not significantly faster than the baseline"
    assert caveats["j"] == "slower than the baseline"


def test_a_speedup_just_above_the_bound_is_called_perfect_scaling_within_noise():
    from analysis.checks import caveats as caveats_of
    from analysis.checks import plausibility

    base = {"node_type": "n", "kernel": "k", "model": "omp", "binary": "k-c-omp", "workers": 2}
    rows = [
        {**base, "speedup": 2.01, "speedup_ci_low": 1.97, "speedup_ci_high": 2.02},  # within 2 %
        {**base, "kernel": "j", "speedup": 2.1, "speedup_ci_low": 1.9, "speedup_ci_high": 2.3},  # beyond
    ]
    rated = plausibility(pd.DataFrame(rows), {"n": (2, "test")})
    assert rated["plausibility"].tolist() == ["ok", "implausible"]
    caveats = headline(rated).set_index("kernel")["caveats"]
    assert caveats["k"] == "above 2 cores/workers by under 2%: perfect scaling within noise"
    beyond = caveats_of(rated.iloc[1])
    assert beyond.startswith("implausible: above 2") and "perfect scaling" not in beyond


def test_the_reference_checksum_is_the_most_frequent_serial_one_the_smallest_of_a_tie():
    from analysis.checks import checksum_check

    def case(problem, model, checksum, n_checksums=1):
        return {"kernel": "k", "problem": problem, "inner": None, "model": model}, checksum, n_checksums

    rows = [
        case("tie", "serial", "b"),
        case("tie", "serial", "a"),
        case("tie", "serial", "b"),
        case("tie", "serial", "a"),
        case("tie", "omp", "b"),  # not serial: not counted
        case("tie", "omp", "b"),
        case("most", "serial", "x"),
        case("most", "serial", "y"),
        case("most", "serial", "y"),
        case("most", "serial", "x", n_checksums=2),  # inconsistent: not counted
        case("most", "serial", "x", n_checksums=2),
        case("most", "omp", "y"),
        case("none", "omp", "z"),
    ]
    summary = pd.DataFrame([{**keys, "checksum": c, "n_checksums": n} for keys, c, n in rows]).astype(
        {"checksum": "str"}
    )
    checked = checksum_check(summary)
    assert checked["reference_checksum"].iloc[:12].tolist() == ["a"] * 6 + ["y"] * 6
    assert checked["reference_checksum"].isna().iloc[12]
    assert checked["checksum_status"].tolist() == (
        ["mismatch", "ok", "mismatch", "ok", "mismatch", "mismatch"]
        + ["mismatch", "ok", "ok", "inconsistent", "inconsistent", "ok", "no reference"]
    )
