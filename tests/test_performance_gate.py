"""The performance gate end to end, as a CI pipeline runs it, with a stand-in kernel whose times are
known exactly (tests/gate_fake/fake_kernel_timed.py): run a campaign, turn it into references, rerun
unchanged (every case within or inconclusive, exit 0), rerun 15 % slower (regressed, exit 1, the JUnit
file names the case), and `check --against` says the same."""

import json
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure, JUnitXml

from tests.jobs.conftest import run_cli
from tests.json_schema import validate

FAKE = Path(__file__).resolve().parent / "gate_fake" / "fake_kernel_timed.py"
XSD = Path(__file__).resolve().parent / "fixtures" / "junit-10.xsd"
EXPERIMENT = """
description = "performance gate with a stand-in kernel of known times"
warmup = 1
repetitions = 10

[[sweep]]
binary = ["fakegate-py-serial"]
params = { base = [0.05, 0.2] }
"""


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "fakegate-py-serial").symlink_to(FAKE)
    experiment = root / "gate.toml"
    experiment.write_text(EXPERIMENT)
    results = root / "results"
    env = {"SCALEBENCH_BIN_DIR": str(bin_dir)}
    runs = (
        ("reference", "1", ""),
        ("unchanged", "1", ""),
        ("slower", "1.15", ""),
        ("slow-phase", "1", "1,3,5,7,9"),  # half the rerun in the host's slow phase, and flagged
        ("disturbed", "1", "0,1,2,3,4,5,6"),  # too little left undisturbed to judge
    )
    for name, slowdown, disturbed in runs:
        state = root / f"state-{name}"
        state.mkdir()
        run = run_cli(
            "run", experiment, "--results-dir", results, "--name", name, "--no-progress",
            env={**env, "SB_FAKE_SLOWDOWN": slowdown, "SB_FAKE_DISTURBED_REPS": disturbed,
                 "SB_FAKE_STATE_DIR": str(state)},
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
    references = root / "references.toml"
    run = run_cli("check", "reference", "--write-references", references, "--results-dir", results)
    assert run.returncode == 0 and references.is_file(), run.stderr
    return root, results, references


def check(results, *args):
    return run_cli("check", *args, "--results-dir", results, "--resamples", 500)


def test_unchanged_rerun_passes(gate):
    root, results, references = gate
    run = check(results, "unchanged", "--references", references, "--json", "--junit", root / "ok.xml")
    assert run.returncode == 0, run.stdout + run.stderr
    doc = validate(json.loads(run.stdout))
    assert len(doc["cases"]) == 2 and doc["unmatched"] == [] and doc["regressed"] is False
    assert {c["verdict"] for c in doc["cases"]} <= {"within", "inconclusive"}
    assert all(c["ratio"] == pytest.approx(1.0, abs=1e-6) for c in doc["cases"])  # the same times exactly
    junit = JUnitXml.fromfile(str(root / "ok.xml"))
    assert junit.tests == 2 and junit.failures == 0


def test_fifteen_percent_slower_is_a_regression_named_in_junit(gate):
    root, results, references = gate
    junit_file = root / "slow.xml"
    run = check(results, "slower", "--references", references, "--junit", junit_file)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 regressed" in run.stdout and "exit 1" in run.stdout
    xmlschema.XMLSchema(str(XSD)).validate(str(junit_file))  # the Jenkins junit-10 structure
    junit = JUnitXml.fromfile(str(junit_file))  # read as a CI server reads it
    failed = [case for suite in junit for case in suite if any(isinstance(r, Failure) for r in case.result)]
    assert sorted("base=0.05" in c.name for c in failed) == [False, True]
    (message,) = {r.message.split(":")[0] for c in failed for r in c.result}
    assert message == "regressed"
    assert all("ratio 1.15" in r.message for c in failed for r in c.result)


def test_against_the_previous_campaign_gives_the_same_verdicts(gate):
    _, results, _ = gate
    same = check(results, "unchanged", "--against", "reference", "--json")
    assert same.returncode == 0, same.stderr
    assert {c["verdict"] for c in validate(json.loads(same.stdout))["cases"]} <= {"within", "inconclusive"}
    slower = check(results, "slower", "--against", "reference", "--json")
    assert slower.returncode == 1, slower.stderr
    assert {c["verdict"] for c in json.loads(slower.stdout)["cases"]} == {"regressed"}


def test_the_schema_rejects_a_junit_file_without_names(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites><testsuite tests="1"><testcase/></testsuite></testsuites>')
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        xmlschema.XMLSchema(str(XSD)).validate(str(bad))


def test_a_bad_reference_file_is_one_line_and_exit_2(gate, tmp_path):
    _, results, references = gate
    bad = tmp_path / "bad.toml"
    bad.write_text(references.read_text().replace("lower = 0.1", "lower = -3", 1))
    run = check(results, "unchanged", "--references", bad)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert str(bad) in run.stderr and "lower = -3" in run.stderr


def test_a_slow_host_phase_is_judged_on_the_undisturbed_repetitions(gate):
    """Half the rerun ran 1.5x slower in a planted host phase the probe flagged: judged on all
    repetitions it is no longer `within` (the host decides the verdict); on the undisturbed half, the
    default, it is `within` again, and says how many repetitions were left out."""
    _, results, references = gate
    default = check(results, "slow-phase", "--references", references, "--json")
    assert default.returncode == 0, default.stderr
    cases = validate(json.loads(default.stdout))["cases"]
    assert {c["verdict"] for c in cases} == {"within"}
    assert {(c["reps"], c["reps_disturbed"], c["basis"], c["reason"]) for c in cases} == {
        (5, 5, "undisturbed", "")
    }
    every = check(results, "slow-phase", "--references", references, "--json", "--repetitions", "all")
    assert {c["verdict"] for c in json.loads(every.stdout)["cases"]} & {"within"} == set()
    against = check(results, "slow-phase", "--against", "reference", "--json")
    assert {c["verdict"] for c in validate(json.loads(against.stdout))["cases"]} == {"within"}


def test_a_rerun_too_disturbed_to_judge_is_inconclusive_never_a_verdict(gate):
    root, results, references = gate
    junit_file = root / "disturbed.xml"
    run = check(results, "disturbed", "--references", references, "--json", "--junit", junit_file)
    assert run.returncode == 0, run.stderr
    cases = validate(json.loads(run.stdout))["cases"]
    assert {c["verdict"] for c in cases} == {"inconclusive"} and {c["basis"] for c in cases} == {"all"}
    assert {c["reason"] for c in cases} == {"host disturbed: 3 of 10 repetitions undisturbed, fewer than 5"}
    assert run.stderr.count("host disturbed") == 2
    junit = JUnitXml.fromfile(str(junit_file))
    messages = [r.message for suite in junit for case in suite for r in case.result]
    assert len(messages) == 2 and all("host disturbed" in m for m in messages)
    against = check(results, "disturbed", "--against", "reference", "--json")
    pairs = validate(json.loads(against.stdout))["cases"]
    assert {c["verdict"] for c in pairs} == {"inconclusive"}
