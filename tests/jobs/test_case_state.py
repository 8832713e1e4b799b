"""One case state: status, resume (run --resume / run-case) and analyze count the same record lines and
name the same uncounted ones as file:line, whatever is wrong with them (sbcore/record_lines.py)."""

import json
import re

import pytest

from sbcore import record_lines, record_rows, stored_records
from tests.records import case_records, minimal_record, plant

from .conftest import run_cli

EXPERIMENT = """
description = "one case state"
repetitions = 3
warmup = 0
seed = 11
[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [20000], seed = [1, 2] }
"""


def _campaign(tmp_path):
    experiment = tmp_path / "state.toml"
    experiment.write_text(EXPERIMENT)
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "s", "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "s"
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    return campaign, cases


def _uncounted(text: str, prefix: str) -> set[str]:
    """The 'reps.csv:<line>' locations a command names (status: indented, analyze: 'skipped:')."""
    return set(re.findall(rf"{prefix}\S*/raw/\w+/(reps\.csv:\d+)", text))


def _recoded(row: bytes, **cells) -> bytes:
    """A stored row with some cells' text replaced (as a writer of another kind could have put it)."""
    parsed = dict(zip(record_rows.COLUMNS, record_rows.cells(row.rstrip(b"\n")), strict=True))
    parsed |= {name: (text, True) for name, text in cells.items()}
    quoted = ['"' + t.replace('"', '""') + '"' if q else (t or "") for t, q in parsed.values()]
    return (",".join(quoted) + "\n").encode()


def test_status_resume_and_analyze_agree_on_every_bad_line(tmp_path, bin_dir):
    campaign, (a, b) = _campaign(tmp_path)
    b_dir = campaign / "raw" / b["case_id"]
    b_path = b_dir / "reps.csv"
    header, *b_rows = b_path.read_bytes().splitlines(keepends=True)
    (a_record,) = [r for r in case_records(campaign, a["case_id"]) if r["rep"] == 2]
    # B keeps rep 0; rep 1 has a rep that is not a number; rep 2 is A's record (case_id of another
    # directory, with a facts line of its own); then garbage, a second rep 0, a non-UTF-8 line and a
    # last line cut short.
    b_path.write_bytes(header + b_rows[0])
    with b_path.open("ab") as handle:
        handle.write(_recoded(b_rows[1], rep="x"))
    plant(b_dir, [a_record])
    with b_path.open("ab") as handle:
        handle.write(b"{not json\n" + b_rows[0] + b"\xff\xfe\n" + b_rows[2][:40])
    expected = {f"reps.csv:{n}" for n in (3, 4, 5, 6, 7, 8)}

    status = run_cli("status", campaign, "--all")
    assert status.returncode == 1, status.stdout + status.stderr
    assert _uncounted(status.stdout, "  ") == expected, status.stdout
    assert "does not match its directory" in status.stdout and "recorded twice" in status.stdout

    analyze = run_cli("analyze", campaign)
    assert analyze.returncode == 0, analyze.stderr
    assert _uncounted(analyze.stderr, "skipped: ") == expected, analyze.stderr

    # resume measures again exactly what neither counts: reps 1 and 2 of B.
    resume = run_cli("run", "--resume", campaign, "--no-progress")
    assert resume.returncode == 0, resume.stderr
    assert _uncounted(resume.stderr, "note: ") == expected, resume.stderr
    assert "2 repetitions ran, 0 failed" in resume.stdout, resume.stdout
    assert run_cli("status", campaign).returncode == 0
    counted = stored_records.read(b_dir, b["case_id"]).records
    assert sorted(counted) == [0, 1, 2] and all(r["case_id"] == b["case_id"] for r in counted.values())
    assert len(case_records(campaign, a["case_id"])) == 3


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"[1]", "not a JSON object"),
        (b'{"rep": 0}', "'schema' is a required property"),
        (b"{", "not valid JSON"),
        (b"\xff", "not UTF-8"),
    ],
)
def test_rule_names_each_kind_of_bad_line(line, why):
    result = record_lines.classify(line + b"\n", "c")
    assert result.records == {} and len(result.problems) == 1
    assert result.problems[0][0] == 1 and why in result.problems[0][1]


def test_rule_counts_the_first_of_two_and_reports_a_cut_tail():
    record = minimal_record("c", 0)
    data = (json.dumps(record) + "\n" + json.dumps(record | {"wall_s": 0.2}) + '\n{"cut').encode()
    result = record_lines.classify(data, "c")
    assert result.records[0]["wall_s"] == 0.1
    assert [n for n, _ in result.problems] == [2, 3]
    assert "recorded twice" in result.problems[0][1] and "truncated" in result.problems[1][1]
