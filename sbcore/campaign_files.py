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
        if not isinstance(case["case_id"], str) or not layout.CASE_ID.fullmatch(case["case_id"]):
            raise UsageError(
                f"{path}:{lineno}: case_id {str(case['case_id'])[:40]!r} is not a planned case id"
            )
        cases.append(case)
    return cases


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
