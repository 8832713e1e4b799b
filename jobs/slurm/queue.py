"""What the Slurm queue says about a campaign: array index -> squeue state, for status and resume."""

from pathlib import Path

from jobs.slurm.client import queued_array_tasks
from jobs.slurm.scripts import job_name_prefix
from jobs.slurm.submissions import read_submissions
from sbcore.errors import ScalebenchError

# When a resubmitted index shows up twice, the more advanced state wins.
_RANK = {"RUNNING": 3, "COMPLETING": 2, "CONFIGURING": 2}


class QueueUnavailable(ScalebenchError):
    """squeue is missing or the controller does not answer: the files still tell what is done."""


def queue_states(campaign_dir: Path) -> dict[int, str]:
    """Campaign index -> squeue state (PENDING, RUNNING, ...) of its array tasks still in the queue.

    Job ids come from <campaign>/jobs/submissions.jsonl; finished tasks are absent (the files tell those).
    Raises QueueUnavailable if squeue is missing or the controller does not answer, and
    ScalebenchError if submissions.jsonl is corrupt.
    """
    arrays = [e for e in read_submissions(campaign_dir) if e["kind"] == "array"]
    array_ids = [str(e["job_id"]) for e in arrays]
    offsets = {str(e["job_id"]): int(e.get("task_offset", 0)) for e in arrays}
    # A controller started afresh hands out job ids again: only trust jobs that carry our name.
    prefix = job_name_prefix(Path(campaign_dir).name)
    states: dict[int, str] = {}
    try:
        queued = queued_array_tasks(array_ids)
    except ScalebenchError as err:
        raise QueueUnavailable(str(err)) from err
    for array_id, task, state, name in queued:
        if not name.startswith(prefix):
            continue
        index = task + offsets.get(array_id, 0)
        if _RANK.get(state, 1) >= _RANK.get(states.get(index, ""), 0):
            states[index] = state
    return states
