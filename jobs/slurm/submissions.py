"""`<campaign>/jobs/submissions.jsonl`: one JSON line per real sbatch, the campaign's link to its jobs.

Fields: node_type (null for the analysis job), job_id, kind ("array" | "analysis"), indices (the campaign
indices the array runs), array (the --array spec of task ids, with throttle), task_offset (case index =
array task id + task_offset; absent in older lines = 0), time_limit (--time of its tasks), max_array_size
(the limit it was cut for), script, submitted (UTC), round (1 = submit, 2.. = resumes), depends_on
(analysis: the array job ids). Lines are only ever added.
"""

import json
import shlex
from pathlib import Path

from sbcore import campaign_access
from sbcore.atomic import write_atomic
from sbcore.errors import UsageError


def submissions_path(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / "jobs" / "submissions.jsonl"


def read_submissions(campaign_dir: Path) -> list[dict]:
    path = submissions_path(campaign_dir)
    if not path.exists():
        return []
    entries = []
    text = campaign_access.read_bytes(Path(campaign_dir), "jobs/submissions.jsonl").decode(errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise UsageError(f"{path}:{number}: not valid JSON ({err}): {line[:80]!r}") from None
        if not isinstance(entry, dict) or "job_id" not in entry or "kind" not in entry:
            raise UsageError(f"{path}:{number}: not a submission record (needs job_id, kind): {line[:80]!r}")
        entries.append(entry)
    return entries


def unsubmitted(campaign_dir: Path, indices) -> list[int]:
    """Those of the indices no array job has ever been submitted for (held back by a submit limit)."""
    sent = {i for e in read_submissions(campaign_dir) if e["kind"] == "array" for i in e.get("indices", [])}
    return [i for i in indices if i not in sent]


def append_submission(campaign_dir: Path, entry: dict) -> None:
    """Add one line, rewriting the file atomically so a reader never sees half a line."""
    path = submissions_path(campaign_dir)
    old = campaign_access.read_bytes(Path(campaign_dir), "jobs/submissions.jsonl", missing=b"").decode()
    write_atomic(path, old + json.dumps(entry, separators=(", ", ": ")) + "\n")


def unsubmitted_note(campaign_dir: Path, states: list[dict]) -> str | None:
    """For `status`: the unfinished cases a submit limit held back, if the campaign went to Slurm at all."""
    if not submissions_path(campaign_dir).exists():
        return None
    waiting = unsubmitted(campaign_dir, [s["index"] for s in states if s["state"] != "done"])
    if not waiting:
        return None
    return (
        f"not submitted yet (submit limit): {len(waiting)} case(s); "
        f"`./scalebench resume {shlex.quote(str(campaign_dir))}` submits them once the queue has room"
    )
