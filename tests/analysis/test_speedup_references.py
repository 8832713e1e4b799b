"""Speedup references: `check --write-references --metric speedup` from an analysed campaign, and a
campaign whose parallel case scales worse is `regressed` (a lower speedup is the slower side)."""

import json

from tests.analysis.test_cli import scalebench
from tests.json_schema import validate
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def _campaign(root, name, slowdown, seed):
    node = NodeTypeSpec("n4", 4)
    specs = [
        CaseSpec("n4", "mcpi", "c", "serial", 1, reps=10),
        CaseSpec("n4", "mcpi", "c", "omp", 4, reps=10, slowdown=slowdown),
    ]
    return write_campaign(root, name, specs, [node], seed=seed).campaign_dir


def test_speedup_references(repo_root, tmp_path):
    good, worse = _campaign(tmp_path, "good", 1.0, 1), _campaign(tmp_path, "worse", 1.3, 2)
    refs = tmp_path / "refs.toml"
    early = scalebench(repo_root, "check", str(good), "--write-references", str(refs), "--metric", "speedup")
    assert early.returncode == 2 and "run `scalebench analyze` first" in early.stderr, early.stderr
    for campaign in (good, worse):
        run = scalebench(repo_root, "analyze", str(campaign), "--format", "csv", "--resamples", "300")
        assert run.returncode == 0, run.stderr
    made = scalebench(repo_root, "check", str(good), "--write-references", str(refs), "--metric", "speedup")
    assert made.returncode == 0, made.stderr
    assert refs.read_text().count("speedup = ") == 1  # the serial case has no speedup entry of its own
    run = scalebench(
        repo_root, "check", str(worse), "--references", str(refs), "--json", "--resamples", "300"
    )
    assert run.returncode == 1, run.stdout + run.stderr
    doc = validate(json.loads(run.stdout))
    (case,) = doc["cases"]
    assert case["metric"] == "speedup" and case["verdict"] == "regressed"
    assert case["measured"] < case["reference"] and case["ratio"] > 1.2
    same = scalebench(repo_root, "check", str(good), "--references", str(refs), "--resamples", "300")
    assert same.returncode == 0 and "regressed" not in same.stdout.split("check:")[0], same.stdout
