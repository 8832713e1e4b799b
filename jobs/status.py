"""Campaign progress from files alone: which repetitions have a complete record, which failed and why.

A repetition is done when raw/<case_id>/rep-<k>.json parses with status ok; the state of a case
(done/failed/partial/missing) is sbcore.layout.case_progress, the rule `analyze` uses too.
"""

import json
from pathlib import Path

from sbcore import layout


def read_record(path: Path) -> dict | None:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def rep_done(path: Path) -> bool:
    record = read_record(path)
    return record is not None and record.get("status") == "ok"


def case_state(campaign_dir: Path, case: dict) -> dict:
    done, violations = set(), 0
    for k in layout.required_reps(case):
        record = read_record(layout.rep_path(campaign_dir, case["case_id"], k))
        if record is not None and record.get("status") == "ok":
            done.add(k)
            violations += bool((record.get("pin") or {}).get("violations"))
    failures = {
        k: p for k, p in layout.failed_attempts(campaign_dir, case["case_id"]).items() if k not in done
    }
    progress = layout.case_progress(case, done, failures)
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
        "reason": reason,
        "failed_reps": progress.reps_failed,
        "pin_violations": violations,
    }


def case_states(campaign_dir) -> list[dict]:
    from jobs.campaign import load_cases

    return [case_state(Path(campaign_dir), case) for case in load_cases(campaign_dir)]


def missing_reps(campaign_dir: Path, case: dict) -> list[int]:
    return [
        k
        for k in layout.required_reps(case)
        if not rep_done(layout.rep_path(campaign_dir, case["case_id"], k))
    ]
