"""`./scalebench analyze` and `./scalebench compare` as a user runs them."""

import subprocess
import sys

import pandas as pd
import pytest

from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, standard_campaign, write_campaign


def scalebench(repo_root, *args, cwd=None):
    return subprocess.run(
        [sys.executable, str(repo_root / "scalebench"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_missing_campaign_is_a_usage_error(repo_root, tmp_path):
    for name in ("no-such-campaign", "latest"):
        run = scalebench(repo_root, "analyze", name, "--results-dir", str(tmp_path))
        assert run.returncode == 2
        assert run.stderr.count("\n") == 1 and name in run.stderr, run.stderr
    run = scalebench(repo_root, "compare", "a", "b", "--results-dir", str(tmp_path))
    assert run.returncode == 2


def test_not_a_campaign_directory_is_an_error(repo_root, tmp_path):
    (tmp_path / "empty").mkdir()
    run = scalebench(repo_root, "analyze", str(tmp_path / "empty"))
    # The same rule and exit status as every other command taking a CAMPAIGN (sbcore.layout).
    assert run.returncode == 2 and "not a campaign directory" in run.stderr


@pytest.mark.parametrize(
    "option, message",
    [
        (["--format", "pdf"], "--format"),
        (["--noise-threshold", "-1"], "--noise-threshold"),
        (["--baseline", "nonsense"], "--baseline"),
        (["--resamples", "5"], "--resamples"),
    ],
)
def test_bad_options_exit_2_naming_the_option(repo_root, tmp_path, option, message):
    truth = write_campaign(
        tmp_path, "tiny", [CaseSpec("n2", "mcpi", "c", "serial", 1, reps=3)], [NodeTypeSpec("n2", 2)]
    )
    run = scalebench(repo_root, "analyze", str(truth.campaign_dir), *option)
    assert run.returncode == 2 and message in run.stderr, run.stderr


@pytest.mark.slow
def test_analyze_latest_prints_summary_and_report_path(repo_root, tmp_path):
    truth = standard_campaign(tmp_path, reps=6)
    (tmp_path / "latest").symlink_to(truth.campaign_dir.name)
    run = scalebench(repo_root, "analyze", "latest", "--results-dir", str(tmp_path), "--resamples", "200")
    # The planted checksum mismatch is a finding of the default --fail-on: exit 1, report written.
    assert run.returncode == 1, run.stderr
    assert "fail-on checksum: 1 cases" in run.stderr
    assert "validity: 1 checksum mismatches" in run.stdout
    assert "best mandelbrot on synth16" in run.stdout and "vs mandelbrot-c-serial" in run.stdout
    assert f"report: {truth.campaign_dir}/analysis/report.html" in run.stdout
    assert (truth.campaign_dir / "analysis" / "report.html").is_file()


def test_compare_finds_a_planted_slowdown(repo_root, tmp_path):
    node = NodeTypeSpec("n4", cores=4)
    before = [CaseSpec("n4", "mcpi", "c", "omp", p, reps=12) for p in (1, 2, 4)]
    after = [
        CaseSpec("n4", "mcpi", "c", "omp", p, reps=12, slowdown=1.2 if p == 4 else 1.0) for p in (1, 2, 4)
    ]
    a = write_campaign(tmp_path, "before", before, [node], seed=1)
    b = write_campaign(tmp_path, "after", after, [node], seed=2)
    run = scalebench(
        repo_root, "compare", "before", "after", "--results-dir", str(tmp_path), "--resamples", "500"
    )
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(b.campaign_dir / "analysis" / "compare-before-vs-after.csv").set_index("threads")
    assert "compare-before-vs-after.csv" in run.stdout
    assert (
        table.loc[4, "ratio_ci_low"] <= 1.2 <= table.loc[4, "ratio_ci_high"] and table.loc[4, "p_holm"] < 0.05
    )
    for p in (1, 2):
        assert table.loc[p, "ratio_ci_low"] < 1.1 and table.loc[p, "p_holm"] > 0.05
    assert a.campaign_dir.is_dir()


def test_compare_matches_cases_across_clusters_by_content(repo_root, tmp_path):
    """The same experiment on two clusters with differently named node types: matched by content."""
    sky, ice = NodeTypeSpec("skylake", cores=4), NodeTypeSpec("icelake", cores=4)
    a_specs = [CaseSpec("skylake", "mcpi", "c", "omp", p, reps=12) for p in (1, 2, 4)]
    b_specs = [CaseSpec("icelake", "mcpi", "c", "omp", p, reps=12, slowdown=0.8) for p in (1, 2)]
    b_specs.append(CaseSpec("icelake", "mcpi", "c", "omp", 3, reps=12))  # no twin in A
    write_campaign(tmp_path, "on-sky", a_specs, [sky], seed=1)
    b = write_campaign(tmp_path, "on-ice", b_specs, [ice], seed=2)
    run = scalebench(
        repo_root, "compare", "on-sky", "on-ice", "--results-dir", str(tmp_path), "--resamples", "500"
    )
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(b.campaign_dir / "analysis" / "compare-on-sky-vs-on-ice.csv").set_index("threads")
    assert sorted(table.index) == [1, 2]
    assert set(table["matched_by"]) == {"content"}
    assert set(table["node_type_a"]) == {"skylake"} and set(table["node_type_b"]) == {"icelake"}
    for p in (1, 2):
        assert table.loc[p, "ratio_ci_low"] <= 0.8 <= table.loc[p, "ratio_ci_high"]
    # what could not be matched is named on both sides
    assert "1 case(s) of A (on-sky) have no match" in run.stderr and "threads=4" in run.stderr
    assert "1 case(s) of B (on-ice) have no match" in run.stderr and "threads=3" in run.stderr
