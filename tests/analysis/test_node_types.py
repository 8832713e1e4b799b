"""Node types compared on synthetic campaigns with a planted difference (truth known, not computed)."""

import pytest

from analysis.pipeline import Options, analyze
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign

PLANTED = 1.3  # mandelbrot on `beta` takes 1.3x as long as on `alpha`
NODES = [NodeTypeSpec("alpha", cores=4), NodeTypeSpec("beta", cores=8)]


def specs(reps: int = 12) -> list[CaseSpec]:
    out = []
    for node, t1 in (("alpha", 1.0), ("beta", PLANTED)):
        out.append(CaseSpec(node, "mandelbrot", "c", "serial", 1, reps=reps, t1=t1))
        out.append(CaseSpec(node, "mcpi", "c", "serial", 1, reps=reps, t1=0.5))
        for p in (1, 2, 4):
            out.append(CaseSpec(node, "mandelbrot", "c", "omp", p, schedule="dynamic,4", reps=reps, t1=t1))
            # mcpi: the same true time on both node types (an identical pair: nothing to find)
            out.append(
                CaseSpec(node, "mcpi", "c", "omp", p, schedule="static", sync="reduction", reps=reps, t1=0.5)
            )
    # only on beta: cannot be paired
    out.append(CaseSpec("beta", "mandelbrot", "c", "omp", 8, schedule="dynamic,4", reps=reps, t1=PLANTED))
    return out


@pytest.fixture(scope="module")
def two_node_types(tmp_path_factory):
    truth = write_campaign(tmp_path_factory.mktemp("nt"), "nt-20261123T000000Z", specs(), NODES, seed=11)
    return truth, analyze(truth.campaign_dir, Options(n_resamples=600, seed=2))


def test_planted_node_type_difference_is_found_with_sign_and_ci(two_node_types):
    truth, result = two_node_types
    nt = result.node_types
    mandel = nt[nt["kernel"] == "mandelbrot"]
    # serial + omp at 1, 2, 4 threads are on both node types; omp at 8 only on beta
    assert sorted(mandel["threads"]) == [1, 1, 2, 4]
    assert set(mandel["node_type_a"]) == {"alpha"} and set(mandel["node_type_b"]) == {"beta"}
    covered = 0
    for row in mandel.itertuples():
        true_ratio = truth.true_median_s[row.case_b] / truth.true_median_s[row.case_a]
        assert true_ratio == pytest.approx(PLANTED)
        covered += row.ratio_ci_low <= true_ratio <= row.ratio_ci_high
        # a 95 % CI may miss now and then, but never by much
        assert row.ratio_ci_low < true_ratio * 1.02 and row.ratio_ci_high > true_ratio / 1.02
        assert row.significant and row.faster == "alpha"
    assert covered >= len(mandel) - 1


def test_identical_pair_is_not_significant(two_node_types):
    _, result = two_node_types
    mcpi = result.node_types[result.node_types["kernel"] == "mcpi"]
    assert len(mcpi) == 4
    assert not mcpi["significant"].any()
    assert ((mcpi["ratio_ci_low"] <= 1.0) & (mcpi["ratio_ci_high"] >= 1.0)).all()


def test_node_type_pairs_share_the_holm_correction_with_the_variant_comparisons(two_node_types):
    _, result = two_node_types
    c = result.comparisons
    assert set(c["dimension"]) >= {"node_type"}
    # Holm over all rows: the adjusted p of the smallest raw p is (number of comparisons) x p
    smallest = c.sort_values("p_value").iloc[0]
    assert smallest["p_holm"] == pytest.approx(min(1.0, len(c) * smallest["p_value"]))


def test_best_configuration_per_node_type_and_kernel(two_node_types):
    truth, result = two_node_types
    best = result.node_types_best
    mandel = best[best["kernel"] == "mandelbrot"].set_index("node_type")
    assert set(mandel.index) == {"alpha", "beta"}
    # alpha's fastest mandelbrot case is at its 4 cores; beta's at 8 threads (its 8 cores)
    assert mandel.loc["alpha", "threads"] == 4 and mandel.loc["beta", "threads"] == 8
    assert mandel.loc["alpha", "cores"] == 4 and mandel.loc["beta", "cores"] == 8
    # rates: work / median; per core = per node / cores
    row = mandel.loc["alpha"]
    assert row["rate_per_core"] == pytest.approx(row["rate_per_node"] / 4)
    assert row["rate_unit"] == "iterations/s"
    # efficiency of the alpha variant at all 4 cores: the Amdahl truth 1 / (4 (0.1 + 0.9/4)) within its CI
    truth_eff = 1 / (4 * (0.1 + 0.9 / 4))
    assert row["efficiency_full_node_ci_low"] <= truth_eff * 1.0 + 0.05
    assert row["efficiency_full_node"] == pytest.approx(truth_eff, rel=0.08)


def test_single_node_type_campaign_has_no_node_type_rows(tmp_path):
    truth = write_campaign(tmp_path, "one-20261123T000000Z", specs()[:8], NODES[:1], seed=5)
    result = analyze(truth.campaign_dir, Options(n_resamples=200, seed=1))
    assert result.node_types.empty
    assert (result.comparisons["dimension"] != "node_type").all()


def test_report_has_a_node_types_section_near_the_top(two_node_types):
    from analysis.outputs.plots import all_plots
    from analysis.outputs.report.render import write_report
    from analysis.pipeline import write_tables

    truth, result = two_node_types
    write_tables(result)
    plots = all_plots(result)
    nt_plots = [p for p in plots if p.section == "node_types"]
    assert len(nt_plots) == 2 and all(p.png.stat().st_size > 10_000 for p in nt_plots)  # mandelbrot, mcpi
    write_report(result, plots, ("md", "html"))
    md = (truth.campaign_dir / "analysis" / "report.md").read_text()
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Findings", "## Node types"]
    assert "mandelbrot: 4 cases measured on both alpha and beta; alpha significantly faster in 4" in md
    assert "mcpi: 4 cases measured on both alpha and beta; alpha significantly faster in 0, beta in 0" in md
    assert (truth.campaign_dir / "analysis" / "node_types.csv").is_file()


def test_single_node_type_report_has_no_node_types_section(tmp_path):
    from analysis.outputs.plots import all_plots
    from analysis.outputs.report.render import write_report

    truth = write_campaign(tmp_path, "one-20261123T000000Z", specs()[:8], NODES[:1], seed=5)
    result = analyze(truth.campaign_dir, Options(n_resamples=200, seed=1))
    plots = all_plots(result)
    assert not [p for p in plots if p.section == "node_types"]
    write_report(result, plots, ("md",))
    assert "Node types" not in (truth.campaign_dir / "analysis" / "report.md").read_text()
