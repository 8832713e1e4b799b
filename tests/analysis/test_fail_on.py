"""`analyze --fail-on`: which findings end the command with exit status 1 (docs/exit-codes.md)."""

import pytest

from analysis.cli import gate
from analysis.fail_on import DEFAULT_FAIL_ON, FAIL_ON_KINDS, parse_fail_on
from sbcore.errors import UsageError
from tests.analysis.test_cli import scalebench
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def test_parse_takes_any_subset_and_none():
    assert parse_fail_on("noisy, failed") == ("noisy", "failed")
    assert parse_fail_on("none") == ()
    assert DEFAULT_FAIL_ON == ("checksum", "placement")
    with pytest.raises(UsageError, match="unknown speed"):
        parse_fail_on("checksum,speed")


def test_gate_fails_only_on_the_kinds_asked_for(capsys):
    counts = dict.fromkeys(FAIL_ON_KINDS, 0) | {"noisy": 3}
    assert gate(counts, DEFAULT_FAIL_ON) == 0
    assert gate(counts, ("noisy",)) == 1
    assert "fail-on noisy: 3 cases" in capsys.readouterr().err


@pytest.fixture(scope="module")
def noisy_campaign(tmp_path_factory):
    node = NodeTypeSpec("n2", 2)
    specs = [
        CaseSpec("n2", "mcpi", "c", "serial", 1, reps=6, sigma=0.3),
        CaseSpec("n2", "mcpi", "c", "omp", 2, reps=6, sigma=0.001),
    ]
    return write_campaign(tmp_path_factory.mktemp("fail-on"), "noisy", specs, [node]).campaign_dir


@pytest.mark.parametrize(
    "fail_on, status", [(None, 0), ("noisy", 1), ("checksum,placement,failed,implausible", 0), ("none", 0)]
)
def test_analyze_exit_status_follows_fail_on(repo_root, noisy_campaign, fail_on, status):
    option = [] if fail_on is None else ["--fail-on", fail_on]
    run = scalebench(
        repo_root, "analyze", str(noisy_campaign), "--format", "csv", "--resamples", "200", *option
    )
    assert run.returncode == status, run.stderr
    assert ("fail-on noisy" in run.stderr) == (status == 1)
    assert (noisy_campaign / "analysis" / "summary.csv").is_file()  # written whatever the verdict


def test_bad_fail_on_is_a_usage_error(repo_root, noisy_campaign):
    run = scalebench(repo_root, "analyze", str(noisy_campaign), "--fail-on", "fast")
    assert run.returncode == 2 and "--fail-on 'fast'" in run.stderr, run.stderr
