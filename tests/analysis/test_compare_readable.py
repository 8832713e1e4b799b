"""`compare` as a person reads it: parameter columns, a verdict column, a warning when the repetitions
are too few for the rank test, and the same as a JSON document."""

import json

import pandas as pd

from tests.analysis.test_cli import scalebench
from tests.json_schema import validate
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


def test_cases_differing_only_in_schedule_are_told_apart(repo_root, tmp_path):
    node = NodeTypeSpec("n4", cores=4)
    specs = [CaseSpec("n4", "mcpi", "c", "omp", 4, reps=3, schedule=s) for s in ("static", "dynamic")]
    slower = [CaseSpec("n4", "mcpi", "c", "omp", 4, reps=3, schedule="static", slowdown=1.5), specs[1]]
    write_campaign(tmp_path, "a", specs, [node], seed=1)
    b = write_campaign(tmp_path, "b", slower, [node], seed=2)
    run = scalebench(repo_root, "compare", "a", "b", "--results-dir", str(tmp_path), "--resamples", "500")
    assert run.returncode == 0, run.stderr
    header, *rows = [line for line in run.stdout.splitlines() if "mcpi-c-omp" in line or "schedule" in line][
        :3
    ]
    assert "schedule" in header and "verdict" in header
    by_schedule = {line.split()[2]: line for line in rows}
    assert set(by_schedule) == {"static", "dynamic"}
    # 3 against 3 repetitions: the rank test cannot reach 5 %, and says so
    assert "cannot fall below 0.1" in run.stderr and "at least 4 repetitions" in run.stderr
    table = pd.read_csv(b.campaign_dir / "analysis" / "compare-a-vs-b.csv")
    assert {"schedule", "verdict", "reps_needed", "params_json"} <= set(table)
    assert table.set_index("schedule").loc["static", "ratio_b_over_a"] > 1.3


def test_planted_slowdown_is_regressed_and_json_carries_it(repo_root, tmp_path):
    node = NodeTypeSpec("n4", cores=4)
    before = [CaseSpec("n4", "mcpi", "c", "omp", p, reps=12) for p in (1, 2, 4)]
    after = [
        CaseSpec("n4", "mcpi", "c", "omp", p, reps=12, slowdown=1.2 if p == 4 else 1.0) for p in (1, 2, 4)
    ]
    write_campaign(tmp_path, "before", before, [node], seed=1)
    write_campaign(tmp_path, "after", after, [node], seed=2)
    run = scalebench(
        repo_root,
        "compare",
        "before",
        "after",
        "--json",
        "--results-dir",
        str(tmp_path),
        "--resamples",
        "500",
    )
    assert run.returncode == 0, run.stderr  # compare reports; `check --against` is the gate
    doc = validate(json.loads(run.stdout))
    verdicts = {p["threads"]: p["verdict"] for p in doc["pairs"]}
    assert verdicts[4] == "regressed" and verdicts[1] in ("within", "inconclusive")
    assert doc["band"] == {"low": 0.9, "high": 1.1} and doc["warnings"] == []
    assert all(p["params"]["samples"] == 1_000_000 for p in doc["pairs"])
