"""The default --time of an array: the longest case it may run, from the case's own limits, with a margin.

A case runs `reps` kernel processes one after the other, each killed after `timeout_s` (its warm-up
repetitions run inside the same process, so they are under that timeout too). The margin covers
start-up (pinning, srun) and a slow shared file system.
"""

import math

MARGIN_FACTOR = 1.25
MARGIN_S = 120


def case_time_bound_s(case: dict) -> float:
    """Upper bound of one case's wall time from cases.jsonl fields (reps, timeout_s)."""
    return int(case["reps"]) * float(case["timeout_s"])


def default_time_limit(cases: list[dict]) -> str:
    """--time for an array task: the largest case bound over the array, with margin, in whole minutes."""
    bound = max(case_time_bound_s(case) for case in cases)
    return format_minutes(math.ceil((bound * MARGIN_FACTOR + MARGIN_S) / 60))


def format_minutes(minutes: int) -> str:
    """Slurm's D-HH:MM:SS (or HH:MM:SS under a day)."""
    days, rest = divmod(minutes, 24 * 60)
    text = f"{rest // 60:02d}:{rest % 60:02d}:00"
    return f"{days}-{text}" if days else text
