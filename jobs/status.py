"""Campaign progress from files alone: which repetitions have a complete record, which failed and why.

A repetition is done when the case's stored records (sbcore/stored_records.py: reps.csv rows, or in older
campaigns records.jsonl lines and raw/<case_id>/rep-<k>.json)
holds a record of it that counts (sbcore/record_lines.py, the rule `analyze` applies too); the state of a case
(done/failed/partial/missing) is sbcore.layout.case_progress — its sampling rule (sbcore.sampling: a fixed
count, or a precision target) satisfied or not — the rule `analyze` uses too.
"""

import json
from pathlib import Path

from sbcore import campaign_access, layout, sampling


def read_record(path: Path) -> dict | None:
    try:
        record = json.loads(campaign_access.read_path(Path(path)))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, campaign_access.UnsafeFile):
        return None
    return record if isinstance(record, dict) else None


def ok_records(campaign_dir: Path, case: dict) -> dict[int, dict]:
    """Repetition index -> complete record, for the case's planned repetitions."""
    return layout.ok_records(campaign_dir, case)


def case_state(campaign_dir: Path, case: dict) -> dict:
    counted, problems = layout.case_lines(campaign_dir, case["case_id"], case)
    required = layout.required_reps(case)
    records = {k: r for k, r in counted.items() if k in required}
    violations = sum(bool((r.get("pin") or {}).get("violations")) for r in records.values())
    failures = {
        k: p for k, p in layout.failed_attempts(campaign_dir, case["case_id"]).items() if k not in records
    }
    progress = layout.case_progress(case, records, failures)
    reason = None
    newest = layout.newest_failure(failures)
    if newest:
        k, path = newest
        attempt = read_record(path) or {}
        reason = f"rep {k}: {attempt.get('reason', 'unreadable failed-attempt file ' + path.name)}"
    return {
        "index": case["index"],
        "case_id": case["case_id"],
        "node_type": case["node_type"],
        "state": progress.state,
        "reps_done": progress.reps_done,
        "reps": progress.reps_required,
        "stop": progress.stop,
        "ci_rel": progress.ci_rel,
        "target_ci": (case.get("sampling") or {}).get("target_ci"),
        "reason": reason,
        "failed_reps": progress.reps_failed,
        "pin_violations": violations,
        "problems": problems,  # lines not counted, '<file>:<line>: <why>' (sbcore/record_lines.py)
    }


def case_states(campaign_dir) -> list[dict]:
    from jobs.campaign import load_cases

    return [case_state(Path(campaign_dir), case) for case in load_cases(campaign_dir)]


def next_invocations(campaign_dir: Path, case: dict) -> list[int]:
    """The invocations (blocks of repetitions) the case's sampling rule asks for next."""
    return sampling.next_invocations(sampling.case_rule(case), ok_records(campaign_dir, case))


def note_uncounted(campaign_dir: Path, cases: list[dict], out) -> None:
    """One 'note:' line per record line the rule does not count (it is measured again), as file:line."""
    for case in cases:
        for problem in layout.case_lines(campaign_dir, case["case_id"], case)[1]:
            print(f"note: {Path(campaign_dir) / problem} (not counted: measured again)", file=out)
