"""`status --json`: the campaign's progress as the versioned document of sbcore/output_json.py."""

from pathlib import Path

from sbcore.layout import CASE_STATES
from sbcore.output_json import document


def status_document(campaign: Path, states: list[dict], queue: dict) -> dict:
    node_types = {}
    for node in dict.fromkeys(s["node_type"] for s in states):
        mine = [s for s in states if s["node_type"] == node]
        counts = {state: sum(s["state"] == state for s in mine) for state in CASE_STATES}
        node_types[node] = {
            **counts,
            "reps_done": sum(s["reps_done"] for s in mine),
            "reps": sum(s["reps"] for s in mine),
        }
    cases = [
        {
            "index": s["index"],
            "case_id": s["case_id"],
            "node_type": s["node_type"],
            "state": s["state"],
            "reps_done": s["reps_done"],
            "reps": s["reps"],
            "stop": s["stop"],
            "reason": s["reason"],
            "pin_violations": s["pin_violations"],
            "slurm_state": queue.get(s["index"]),
            "uncounted_lines": [f"{campaign}/{line}" for line in s["problems"]],
        }
        for s in states
    ]
    return document(
        "status",
        campaign=str(campaign),
        complete=all(s["state"] == "done" for s in states),
        node_types=node_types,
        cases=cases,
    )
