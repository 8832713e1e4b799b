"""One campaign layout for every command: with SCALEBENCH_RESULTS_DIR set, `run` writes there, and
`run-case latest`, `status latest` and `analyze latest` find the campaign there and agree on the state
of every case (sbcore.layout.case_progress)."""

import csv
import json
import re

import pytest

from sbcore import layout

from .conftest import ROOT, run_cli

EXPERIMENT = """
description = "layout agreement: done, failed, partial and missing cases"
node_types = ["workstation", "tc-core"]
repetitions = 2
warmup = 0
timeout_s = 20
seed = 1

[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [1000] }

[[sweep]]
binary = ["failinject-sh-exit3"]
"""


def test_progress_rule():
    case = {"reps": 3}
    assert layout.case_progress(case, [0, 1, 2], []).state == "done"
    assert layout.case_progress(case, [0, 1, 2, 7], [1]).state == "done"  # a later retry succeeded
    assert layout.case_progress(case, [0], [1]) == layout.CaseProgress("failed", 3, 1, 1)
    assert layout.case_progress(case, [0], []).state == "partial"
    assert layout.case_progress(case, [], [5]).state == "missing"  # rep 5 is not asked for
    assert layout.case_progress(case, [], []).reps_missing == 3


def test_file_names_match_their_patterns(tmp_path):
    assert layout.REP_FILE.match(layout.rep_name(12)).group(1) == "12"
    failed = layout.failed_name(3)
    assert layout.FAILED_FILE.match(failed).group(1) == "3" and not layout.REP_FILE.match(failed)
    assert layout.IMAGE_FILE.match(layout.image_relpath("c", 4).name).group(1) == "4"
    assert layout.is_record_file(layout.RECORDS_FILE) and layout.is_record_file(layout.rep_name(2))
    assert layout.is_record_file(failed) and not layout.is_record_file("rep-2.pgm")
    directory = layout.case_dir(tmp_path, "c")
    directory.mkdir(parents=True)
    older, newer = (
        "rep-1.failed-20261122T000000.000000Z-1.json",
        "rep-1.failed-20261123T000000.000000Z-1.json",
    )
    for name in (newer, older, "rep-1.json", "rep-2.failed-20261121T000000.000000Z-9.json"):
        (directory / name).write_text("{}")
    attempts = layout.failed_attempts(tmp_path, "c")
    assert {k: p.name for k, p in attempts.items()} == {
        1: newer,
        2: "rep-2.failed-20261121T000000.000000Z-9.json",
    }
    assert layout.newest_failure(attempts)[0] == 1


def test_results_dir_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(layout.RESULTS_ENV, str(tmp_path))
    assert layout.results_root() == tmp_path
    (tmp_path / "c1" / "raw").mkdir(parents=True)
    layout.update_latest(tmp_path, "c1")
    assert layout.resolve_campaign("latest") == (tmp_path / "c1").resolve()
    monkeypatch.delenv(layout.RESULTS_ENV)
    assert layout.results_root() == ROOT / "results"


def status_states(stdout: str) -> dict[str, str]:
    """case_id -> state from the case lists of `status --all`."""
    states, current = {}, None
    for line in stdout.splitlines():
        if line.rstrip(":") in layout.CASE_STATES and line.endswith(":"):
            current = line.rstrip(":")
        elif current and (match := re.match(r"\s+case \d+ (\S+) ", line)):
            states[match.group(1)] = current
    return states


@pytest.mark.slow
def test_run_status_and_analyze_agree_under_results_dir(tmp_path, injection_bin_dir):
    results = tmp_path / "elsewhere"
    env = {layout.RESULTS_ENV: str(results)}
    experiment = tmp_path / "layout.toml"
    experiment.write_text(EXPERIMENT)

    run = run_cli("run", experiment, "--name", "agree", "--no-progress", env=env)
    assert run.returncode == 1, run.stderr  # the failing stand-in
    campaign = results / "agree"
    assert (results / "latest").resolve() == campaign.resolve()
    cases = {c["case_id"]: c for c in map(json.loads, (campaign / "cases.jsonl").open())}
    by_kind = {(c["node_type"], c["binary"]): c for c in cases.values()}
    partial = by_kind[("tc-core", "mcpi-c-serial")]  # not local: `run` left it; one rep by hand
    one = run_cli("run-case", "latest", partial["index"], "--rep", "0", env=env)
    assert one.returncode == 0, one.stderr
    assert 0 in layout.ok_records(campaign, partial)

    status = run_cli("status", "latest", "--all", env=env)
    assert status.returncode == 1, status.stderr  # the failing stand-in leaves it incomplete
    assert str(campaign.resolve()) in status.stdout
    listed = status_states(status.stdout)

    analyze = run_cli("analyze", "latest", "--format", "csv", env=env)
    assert analyze.returncode == 0, analyze.stderr
    with (layout.analysis_dir(campaign) / "completeness.csv").open() as fh:
        analysed = {row["case_id"]: row["state"] for row in csv.DictReader(fh)}

    expected = {
        by_kind[("workstation", "mcpi-c-serial")]["case_id"]: "done",
        by_kind[("workstation", "failinject-sh-exit3")]["case_id"]: "failed",
        partial["case_id"]: "partial",
        by_kind[("tc-core", "failinject-sh-exit3")]["case_id"]: "missing",
    }
    assert analysed == expected
    assert listed == {cid: state for cid, state in expected.items() if state != "done"}
    # Nothing went to the repository's results/.
    assert not (ROOT / "results" / "agree").exists()
