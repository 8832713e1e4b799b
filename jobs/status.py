"""Campaign progress from files alone: which repetitions have a complete record, which failed and why.

A repetition is done when raw/<case_id>/rep-<k>.json parses with status ok; a case is done when its
sampling rule (jobs.sampling: a fixed count, or a precision target) is satisfied; otherwise it is failed if
a failed-attempt file explains a missing rep, else missing.
"""

import json
import re
from pathlib import Path

from jobs import sampling

FAILED_NAME = re.compile(r"^rep-(\d+)\.failed-(.+)\.json$")


def read_record(path: Path) -> dict | None:
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def rep_done(path: Path) -> bool:
    record = read_record(path)
    return record is not None and record.get("status") == "ok"


def ok_records(campaign_dir: Path, case: dict) -> dict[int, dict]:
    """Repetition index -> complete record, for the case's planned repetitions."""
    directory = Path(campaign_dir) / "raw" / case["case_id"]
    records = {}
    for k in range(case["reps"]):
        record = read_record(directory / f"rep-{k}.json")
        if record is not None and record.get("status") == "ok":
            records[k] = record
    return records


def case_state(campaign_dir: Path, case: dict) -> dict:
    directory = Path(campaign_dir) / "raw" / case["case_id"]
    records = ok_records(campaign_dir, case)
    done = set(records)
    violations = sum(bool((r.get("pin") or {}).get("violations")) for r in records.values())
    progress = sampling.progress(sampling.case_rule(case), records)
    failures = {}  # rep -> newest failed attempt (file names sort by UTC time)
    if directory.is_dir():
        for path in sorted(directory.iterdir()):
            match = FAILED_NAME.match(path.name)
            if match and int(match.group(1)) not in done:
                failures[int(match.group(1))] = path
    reason = None
    if failures:
        k, path = max(failures.items(), key=lambda item: item[1].name.split(".failed-")[1])
        attempt = read_record(path) or {}
        reason = f"rep {k}: {attempt.get('reason', 'unreadable failed-attempt file ' + path.name)}"
    if progress.done:
        state = "done"
    elif failures:
        state = "failed"
    else:
        state = "missing"
    return {
        "index": case["index"],
        "case_id": case["case_id"],
        "node_type": case["node_type"],
        "state": state,
        "reps_done": len(done),
        "reps": case["reps"],
        "stop": progress.stop,
        "ci_rel": progress.ci_rel,
        "target_ci": (case.get("sampling") or {}).get("target_ci"),
        "reason": reason,
        "failed_reps": len(failures),
        "pin_violations": violations,
    }


def case_states(campaign_dir) -> list[dict]:
    from jobs.campaign import load_cases

    return [case_state(Path(campaign_dir), case) for case in load_cases(campaign_dir)]


def next_invocations(campaign_dir: Path, case: dict) -> list[int]:
    """The invocations (blocks of repetitions) the case's sampling rule asks for next."""
    return sampling.next_invocations(sampling.case_rule(case), ok_records(campaign_dir, case))
