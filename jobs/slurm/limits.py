"""The job limits of the live Slurm controller that decide how a campaign is cut into job arrays.

- MaxArraySize: every array task id must be < MaxArraySize (Slurm's default is 1001). SchedulerParameters
  max_array_tasks may further cap the number of tasks in one array.
- MaxJobCount: jobs the controller holds at once, every array task counted (default 10000).
- MaxSubmitJobs of the user's association or QOS (sacctmgr; absent without an accounting database):
  jobs the user may have pending or running, again every array task counted.

A dry run without a controller assumes Slurm's defaults for the array size and no submit limit.
"""

import getpass
import re
from dataclasses import dataclass

from jobs.slurm import client
from sbcore.errors import ScalebenchError

DEFAULT_MAX_ARRAY_SIZE = 1001


@dataclass(frozen=True)
class Limits:
    max_array_size: int  # task ids 0 .. max_array_size - 1
    max_array_tasks: int  # tasks in one array
    max_job_count: int | None = None
    max_submit_jobs: int | None = None
    source: str = "controller"  # or "assumed" (dry run without a controller)

    def describe(self) -> str:
        parts = [f"MaxArraySize={self.max_array_size}"]
        if self.max_array_tasks < self.max_array_size:
            parts.append(f"max_array_tasks={self.max_array_tasks}")
        if self.max_job_count is not None:
            parts.append(f"MaxJobCount={self.max_job_count}")
        if self.max_submit_jobs is not None:
            parts.append(f"MaxSubmitJobs={self.max_submit_jobs}")
        return ", ".join(parts) + (" (assumed, no controller asked)" if self.source == "assumed" else "")


def assumed_limits(max_array_size: int | None) -> Limits:
    size = max_array_size or DEFAULT_MAX_ARRAY_SIZE
    return Limits(size, size, source="assumed")


def parse_config(text: str) -> dict[str, str]:
    """`scontrol show config` lines "Name = value" -> {Name: value}."""
    config = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() and " " not in name.strip():
            config[name.strip()] = value.strip()
    return config


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


def limits_from_config(config: dict[str, str]) -> Limits:
    size = _int_or_none(config.get("MaxArraySize"))
    if size is None:
        raise ScalebenchError(
            f"scontrol show config: MaxArraySize = {config.get('MaxArraySize')!r}: not a number"
        )
    if size < 1:
        raise ScalebenchError(f"scontrol show config: MaxArraySize = {size}: job arrays are disabled here")
    tasks = size
    match = re.search(r"(?:^|,)max_array_tasks=(\d+)", config.get("SchedulerParameters", ""))
    if match:
        tasks = min(size, int(match.group(1)))
    return Limits(size, tasks, max_job_count=_int_or_none(config.get("MaxJobCount")))


def parse_max_submit(text: str) -> int | None:
    """The smallest number in sacctmgr's parsable output (one column of limits; empty = no limit)."""
    values = [int(v) for line in text.splitlines() for v in line.strip().split("|") if v.strip().isdigit()]
    return min(values, default=None)


def max_submit_jobs(user: str) -> int | None:
    """MaxSubmitJobs of the user's associations and their QOS, or None without accounting (or sacctmgr)."""
    queries = [
        ["sacctmgr", "--noheader", "--parsable2", "show", "assoc", f"user={user}", "format=MaxSubmit"],
        ["sacctmgr", "--noheader", "--parsable2", "show", "qos", "format=MaxSubmitPU"],
    ]
    found = []
    for cmd in queries:
        text = client.query_optional(cmd)
        if text is None:
            # "accounting storage is disabled" or no sacctmgr: Slurm enforces no association limits then.
            return None
        value = parse_max_submit(text)
        if value is not None:
            found.append(value)
    return min(found, default=None)


def read_limits(max_array_size: int | None = None) -> Limits:
    """Limits of the live controller; --max-array-size may lower (never raise) MaxArraySize."""
    limits = limits_from_config(parse_config(client.show_config()))
    if max_array_size is not None:
        if max_array_size > limits.max_array_size:
            raise ScalebenchError(
                f"--max-array-size {max_array_size}: the controller allows only MaxArraySize="
                f"{limits.max_array_size}"
            )
        limits = Limits(
            max_array_size,
            min(limits.max_array_tasks, max_array_size),
            limits.max_job_count,
            limits.max_submit_jobs,
        )
    submit = max_submit_jobs(getpass.getuser())
    return Limits(limits.max_array_size, limits.max_array_tasks, limits.max_job_count, submit)


def submit_budget(limits: Limits) -> int | None:
    """Jobs (array tasks) this user may still submit now, or None if no limit applies."""
    budgets = []
    if limits.max_submit_jobs is not None:
        budgets.append(limits.max_submit_jobs - client.queued_job_count(user=getpass.getuser()))
    if limits.max_job_count is not None:
        budgets.append(limits.max_job_count - client.queued_job_count())
    return min(budgets, default=None)
