"""A campaign's own files read without pandas, each problem one UsageError naming file (and line):
cases.jsonl (the plan every command starts from), manifest.json (the provenance) and whether anything
was measured at all.

`analyze` checks them before its pipeline starts: a campaign without a usable cases.jsonl or
manifest.json cannot be analysed, and one where nothing was measured (no case ran, or every repetition
failed) gets a report that says so and why instead of tables of nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from sbcore import campaign_access, layout
from sbcore.errors import UsageError


def read_cases(campaign_dir: Path) -> list[dict]:
    """The cases of cases.jsonl, in index order; a missing, unreadable or corrupt file is one error line.
    Each line is a JSON object with its index and a case id of the planner's form (layout.CASE_ID)."""
    path = layout.cases_path(campaign_dir)
    try:
        lines = campaign_access.read_bytes(Path(campaign_dir), layout.CASES_FILE).decode().splitlines()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror}") from None
    cases = []
    for lineno, line in enumerate(lines, 1):
        try:
            case = json.loads(line)
        except json.JSONDecodeError as err:
            raise UsageError(f"{path}:{lineno}: not valid JSON ({err.msg})") from None
        if not isinstance(case, dict) or case.get("index") != lineno - 1 or "case_id" not in case:
            raise UsageError(f"{path}:{lineno}: not a case (needs case_id and index {lineno - 1})")
        problem = case_problem(case)
        if problem:
            raise UsageError(f"{path}:{lineno}: {problem}")
        if not isinstance(case["case_id"], str) or not layout.CASE_ID.fullmatch(case["case_id"]):
            raise UsageError(
                f"{path}:{lineno}: case_id {str(case['case_id'])[:40]!r} is not a planned case id"
            )
        cases.append(case)
    return cases


MAX_REPS = 1_000_000  # as jobs/config.py allows
MAX_SECONDS = 7 * 24 * 3600
# field -> (types, minimum, maximum, required): what every reader of a case relies on
CASE_FIELDS: dict[str, tuple[tuple[type, ...], float | None, float | None, bool]] = {
    "node_type": ((str,), None, None, True),
    "binary": ((str,), None, None, True),
    "kernel": ((str,), None, None, True),
    "lang": ((str,), None, None, True),
    "model": ((str,), None, None, True),
    "threads": ((int,), 1, 1 << 20, True),
    "ranks": ((int,), 1, 1 << 20, True),
    "pin": ((str,), None, None, True),
    "reps": ((int,), 1, MAX_REPS, True),
    "warmup": ((int,), 0, MAX_REPS, True),
    "timeout_s": ((int, float), 0, MAX_SECONDS, True),
    "params": ((dict,), None, None, True),
    "env": ((dict,), None, None, True),
    "argv": ((list,), None, None, True),
    "reps_per_process": ((int,), 1, MAX_REPS, False),
    "sampling": ((dict,), None, None, False),
    "counter_group": ((str, type(None)), None, None, False),
}


def case_problem(case: dict) -> str | None:
    """Why a cases.jsonl line is not a case any reader can use (a field missing, of the wrong type or
    out of its range), or None. A resume also compares the whole case with its re-planned self."""
    for key, (types, low, high, required) in CASE_FIELDS.items():
        if key not in case:
            if required:
                return f"not a case: '{key}' is missing"
            continue
        value = case[key]
        if isinstance(value, bool) or not isinstance(value, types):
            kinds = "/".join(t.__name__ for t in types)
            return f"not a case: {key} = {str(value)[:40]!r} is not of type {kinds}"
        if isinstance(value, int | float) and not (
            (low is None or value >= low) and (high is None or value <= high) and value == value
        ):
            return f"not a case: {key} = {value!r} is out of its range ({low}..{high})"
    if key_problem := next((k for k, v in case["env"].items() if not isinstance(v, str) or "\0" in v), None):
        return f"not a case: env.{str(key_problem)[:40]} is not a string without NUL"
    if not all(isinstance(a, str) for a in case["argv"]):
        return "not a case: argv holds something other than strings"
    return None


def read_manifest(campaign_dir: Path) -> dict:
    """manifest.json (the provenance every report states): a readable JSON object."""
    path = Path(campaign_dir) / "manifest.json"
    try:
        manifest = json.loads(campaign_access.read_bytes(Path(campaign_dir), "manifest.json"))
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror}") from None
    except ValueError as err:  # not JSON, or not UTF-8
        raise UsageError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(manifest, dict):
        raise UsageError(f"{path}: not a JSON object")
    return manifest


def check_manifest(campaign_dir: Path) -> None:
    """manifest.json must be a readable JSON object."""
    read_manifest(campaign_dir)


def nothing_measured(campaign_dir: Path, cases: list[dict]) -> str | None:
    """Why no record of the campaign counts (a paragraph for the report), or None when one does."""
    failed, reasons = 0, {}
    for case in cases:
        if layout.ok_records(campaign_dir, case):
            return None
        attempts = layout.failed_attempts(campaign_dir, case["case_id"])
        newest = layout.newest_failure(attempts)
        if newest:
            failed += 1
            try:
                reason = json.loads(campaign_access.read_path(newest[1])).get("reason", "no reason recorded")
            except (OSError, ValueError, AttributeError, campaign_access.UnsafeFile):
                reason = f"unreadable {newest[1].name}"
            reasons.setdefault(str(reason), []).append(case["index"])
    lines = [f"Nothing was measured: none of the {len(cases)} cases has a repetition that counts."]
    if failed:
        lines.append(f"{failed} case(s) failed:")
        lines += [f"- {why} (case(s) {', '.join(map(str, idx[:10]))}{' ...' if len(idx) > 10 else ''})"
                  for why, idx in reasons.items()]  # fmt: skip
    if len(cases) - failed:
        lines.append(f"{len(cases) - failed} case(s) never ran: run `scalebench run --resume` or `resume`.")
    return "\n".join(lines)
