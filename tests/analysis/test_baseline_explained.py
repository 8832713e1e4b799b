"""An OpenMP-only sweep: the message without a baseline names the choices; with `--baseline self` the
headline is a parallel case, never the one-worker case against itself (speedup 1 [1-1])."""

import pytest

from tests.analysis.test_cli import scalebench
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


@pytest.fixture(scope="module")
def omp_only(tmp_path_factory):
    node = NodeTypeSpec("n4", 4)
    # A noisy 4-thread case: its CI's lower bound falls below 1, where the 1-worker case's [1-1] would win.
    specs = [
        CaseSpec("n4", "mcpi", "c", "omp", 1, reps=8),
        CaseSpec("n4", "mcpi", "c", "omp", 4, reps=8, slowdown=2.5, sigma=0.5),
    ]
    return write_campaign(tmp_path_factory.mktemp("omp"), "omp-only", specs, [node]).campaign_dir


def test_no_baseline_names_the_choices(repo_root, omp_only):
    run = scalebench(repo_root, "analyze", str(omp_only), "--format", "md", "--resamples", "200")
    assert run.returncode == 0, run.stderr
    (line,) = [x for x in run.stdout.splitlines() if x.startswith("speedup:")]
    assert "no valid serial case" in line and "--baseline self" in line and "serial binary" in line
    assert "--baseline self" in (omp_only / "analysis" / "report.md").read_text()


def test_self_baseline_headline_is_never_the_one_worker_case(repo_root, omp_only):
    run = scalebench(
        repo_root, "analyze", str(omp_only), "--baseline", "self", "--format", "csv", "--resamples", "200"
    )
    assert run.returncode == 0, run.stderr
    (line,) = [x for x in run.stdout.splitlines() if x.startswith("best mcpi")]
    assert " x4:" in line and "speedup 1.00 [95% CI 1.00-1.00]" not in line, line
