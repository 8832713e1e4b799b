"""`--json` of status and analyze: one versioned document on stdout, valid against
docs/output.schema.json, saying what the text says (and the exit status unchanged)."""

import json

import jsonschema
import pytest

from sbcore.output_json import VERSION
from tests.analysis.test_cli import scalebench
from tests.json_schema import validate
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign


@pytest.fixture(scope="module")
def incomplete(tmp_path_factory):
    node = NodeTypeSpec("n2", 2)
    specs = [
        CaseSpec("n2", "mcpi", "c", "serial", 1, reps=5),
        CaseSpec("n2", "mcpi", "c", "omp", 2, reps=5),
        CaseSpec("n2", "mcpi", "c", "omp", 2, reps=5, schedule="dynamic", fate="missing"),
    ]
    return write_campaign(tmp_path_factory.mktemp("json"), "incomplete", specs, [node])


def test_status_json(repo_root, incomplete):
    run = scalebench(repo_root, "status", str(incomplete.campaign_dir), "--json")
    assert run.returncode == 1, run.stderr  # incomplete: a finding, as without --json
    doc = validate(json.loads(run.stdout))
    assert doc["command"] == "status" and doc["complete"] is False
    assert doc["node_types"]["n2"]["done"] == 2 and doc["node_types"]["n2"]["missing"] == 1
    (missing,) = [c for c in doc["cases"] if c["state"] == "missing"]
    assert missing["case_id"] == incomplete.missing[0]


def test_analyze_json_and_summary_json(repo_root, incomplete):
    run = scalebench(
        repo_root, "analyze", str(incomplete.campaign_dir), "--json", "--format", "csv", "--resamples", "200"
    )
    assert run.returncode == 0, run.stderr
    doc = validate(json.loads(run.stdout))  # stdout is the document alone; the text went to stderr
    assert "validity:" in run.stderr and "validity:" not in run.stdout
    assert doc["validity"]["missing"] == 1 and doc["fail_on"]["kinds"] == ["checksum", "placement"]
    assert [c["case_id"] for c in doc["unfinished_cases"]] == incomplete.missing
    by_case = {c["case_id"]: c for c in doc["cases"]}
    for case_id, true_median in incomplete.true_median_s.items():
        if case_id in by_case:
            case = by_case[case_id]
            assert case["ci_low_s"] <= case["median_s"] <= case["ci_high_s"]
            assert case["median_s"] == pytest.approx(true_median, rel=0.1)
    (headline,) = doc["headlines"]
    assert headline["binary"] == "mcpi-c-omp" and headline["speedup_ci_low"] <= headline["speedup"]
    written = json.loads((incomplete.campaign_dir / "analysis" / "summary.json").read_text())
    assert written == doc


def test_schema_rejects_what_it_does_not_describe():
    good = {"format": "scalebench-output", "version": VERSION, "command": "status", "campaign": "c"}
    with pytest.raises(jsonschema.ValidationError):  # status without its cases
        validate(good)
    with pytest.raises(jsonschema.ValidationError):
        validate({**good, "version": VERSION + 1, "complete": True, "node_types": {}, "cases": []})
    validate({**good, "complete": True, "node_types": {}, "cases": []})
