"""`scalebench history`: one case across campaigns from their analysis tables, ordered by date, the
planted slowdown marked regressed against the previous campaign, a plot and a valid JSON document."""

import json

import pytest

from analysis.stats.history_trend import ratio_ci_from_cis
from tests.analysis.test_cli import scalebench
from tests.json_schema import validate
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def test_ratio_ci_from_two_cis():
    ratio, low, high = ratio_ci_from_cis([1.2], [1.1], [1.3], [1.0], [0.95], [1.05])
    assert ratio[0] == pytest.approx(1.2) and low[0] < 1.2 < high[0]
    # wider than either CI alone, narrower than their sum (on the log scale)
    assert 1.2 / low[0] > 1.2 / 1.1 and low[0] > 1.1 / 1.05


def _created(campaign_dir, date):
    toml = campaign_dir / "campaign.toml"
    toml.write_text(toml.read_text().replace("2026-11-22T00:00:00Z", date))


def test_history_orders_by_date_and_marks_the_regression(repo_root, tmp_path):
    node = NodeTypeSpec("n4", 4)
    # Names in the reverse of date order: the order must come from the dates, not the names.
    for name, date, slowdown, seed in (
        ("c-first", "2026-11-01T00:00:00Z", 1.0, 1),
        ("b-second", "2026-11-02T00:00:00Z", 1.0, 2),
        ("a-third", "2026-11-03T00:00:00Z", 1.3, 3),
    ):
        specs = [CaseSpec("n4", "mcpi", "c", "omp", p, reps=10, slowdown=slowdown) for p in (2, 4)]
        truth = write_campaign(tmp_path, name, specs, [node], seed=seed)
        _created(truth.campaign_dir, date)
        run = scalebench(
            repo_root, "analyze", str(truth.campaign_dir), "--format", "csv", "--resamples", "300"
        )
        assert run.returncode == 0, run.stderr
    write_campaign(tmp_path, "d-unanalysed", specs, [node], seed=4)
    run = scalebench(repo_root, "history", "--threads", "4", "--json", "--results-dir", str(tmp_path))
    assert run.returncode == 0, run.stderr
    doc = validate(json.loads(run.stdout))
    assert [p["campaign"] for p in doc["points"]] == ["c-first", "b-second", "a-third"]
    assert [p["verdict"] for p in doc["points"]] == [None, "within", "regressed"]
    assert doc["not_analysed"] == ["d-unanalysed"] and "analyze d-unanalysed" in run.stderr
    assert "plot: " in run.stderr and (tmp_path / "history.png").is_file()
    text = scalebench(repo_root, "history", "--threads", "4", "--results-dir", str(tmp_path))
    assert "regressed" in text.stdout and "2026-11-03" in text.stdout
    # The medians `check` judges (undisturbed repetitions; none is disturbed here): the same verdicts,
    # counted over the undisturbed repetitions.
    clean = scalebench(
        repo_root, "history", "--threads", "4", "--metric", "median_undisturbed_s", "--json",
        "--results-dir", str(tmp_path),
    )  # fmt: skip
    assert clean.returncode == 0, clean.stderr
    clean_doc = validate(json.loads(clean.stdout))
    assert [p["verdict"] for p in clean_doc["points"]] == [None, "within", "regressed"]
    assert [p["n"] for p in clean_doc["points"]] == [10, 10, 10]
    assert [p["value"] for p in clean_doc["points"]] == [p["value"] for p in doc["points"]]


def test_history_without_a_match_is_a_usage_error(repo_root, tmp_path):
    run = scalebench(repo_root, "history", "--binary", "nothing", "--results-dir", str(tmp_path))
    assert run.returncode == 2 and "no analysed campaign" in run.stderr, run.stderr
