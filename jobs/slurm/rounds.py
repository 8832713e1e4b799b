"""One submission round: plan the arrays -> write the scripts -> sbatch them -> log them.

`submit` (round 1) and `resume` (rounds 2..) both call submit_round, so what a round writes, checks and
records is the same for both. Order inside a round, so that nothing is half-submitted: write every script,
`sbatch --test-only` each exact array, then the real sbatch calls, cancelling the arrays already queued
if a later one still fails; the analysis job depends on every array of the round.
"""

import shlex
import sys
from collections import defaultdict
from pathlib import Path

from jobs.config import NodeType
from jobs.slurm import client
from jobs.slurm.arrayspec import format_array_spec, split_indices
from jobs.slurm.checks import test_only
from jobs.slurm.limits import Limits, submit_budget
from jobs.slurm.scripts import ArrayJob, render_analysis_script, render_array_script, write_script
from jobs.slurm.submissions import append_submission
from jobs.slurm.timelimit import default_time_limit
from sbcore.clock import utc_iso as utc_now
from sbcore.errors import ScalebenchError


def array_jobs(
    campaign_dir: Path, cases: list[dict], indices, nodes: dict[str, NodeType], prefix: str, limits: Limits
) -> list[ArrayJob]:
    """The arrays for these campaign indices: per node type, as many as the array size limit needs."""
    by_node: dict[str, list[int]] = defaultdict(list)
    for index in sorted(indices):
        by_node[cases[index]["node_type"]].append(index)
    jobs_dir = campaign_dir / "jobs"
    jobs = []
    for name, node_indices in by_node.items():
        parts = split_indices(node_indices, limits.max_array_size, limits.max_array_tasks)
        for part, (offset, chunk) in enumerate(parts, 1):
            mine = [cases[i] for i in chunk]
            suffix = f"-{part}" if len(parts) > 1 else ""
            jobs.append(
                ArrayJob(
                    nodes[name],
                    tuple(chunk),
                    max(int(case.get("ranks", 1)) for case in mine),
                    jobs_dir / f"{prefix}array-{name}{suffix}.sbatch",
                    offset=offset,
                    time_limit=nodes[name].site.time_limit or default_time_limit(mine),
                )
            )
    return jobs


def round_prefix(round_no: int) -> str:
    """Script name prefix of a round: none for the submission, resume<N>- for the N-th resume."""
    return "" if round_no == 1 else f"resume{round_no - 1}-"


def take_batch(indices: list[int], budget: int | None) -> tuple[list[int], list[int]]:
    """(submit now, leave for a later resume): as many cases as the submit limit leaves room for, plus
    the analysis job; nothing to submit now if there is no room for one case and the analysis job."""
    indices = sorted(indices)
    if budget is None or budget > len(indices):
        return indices, []
    if budget < 2:
        return [], indices
    return indices[: budget - 1], indices[budget - 1 :]


def submit_round(
    campaign_dir: Path,
    cases: list[dict],
    indices,
    nodes: dict[str, NodeType],
    throttle: int,
    round_no: int,
    command: str,
    dry_run: bool,
    limits: Limits,
    out=sys.stdout,
) -> list[str]:
    """Plan the arrays for these case indices (within the controller's limits), write the scripts, then
    (unless dry_run) validate, submit and log them; returns the job ids."""
    prefix = round_prefix(round_no)
    print(f"Slurm limits: {limits.describe()}", file=out)
    budget = None if dry_run else submit_budget(limits)
    batch, later = take_batch(list(indices), budget)
    if not batch:
        raise ScalebenchError(
            f"the Slurm submit limit leaves room for {max(budget or 0, 0)} job(s) now (every array task "
            "counts, plus the analysis job): nothing submitted; "
            f"`./scalebench resume {shlex.quote(str(campaign_dir))}` "
            "once your jobs have left the queue"
        )
    jobs = array_jobs(campaign_dir, cases, batch, nodes, prefix, limits)
    created = utc_now()
    specs = {job.script: f"{format_array_spec(job.task_ids)}%{throttle}" for job in jobs}
    for job in jobs:
        write_script(job.script, render_array_script(campaign_dir, job, specs[job.script], command, created))
    analysis_node = jobs[0].node_type
    analysis_script = campaign_dir / "jobs" / f"{prefix}analysis.sbatch"
    write_script(
        analysis_script,
        render_analysis_script(campaign_dir, analysis_node, analysis_script, command, created),
    )

    if dry_run:
        print(f"dry run: scripts written to {campaign_dir / 'jobs'}; nothing submitted. Commands:", file=out)
        for job in jobs:
            print(
                shlex.join(["sbatch", "--parsable", f"--array={specs[job.script]}", str(job.script)]),
                file=out,
            )
        deps = ":".join(f"<job id of {job.script.name}>" for job in jobs)
        print(
            shlex.join(["sbatch", "--parsable", f"--dependency=afterany:{deps}", str(analysis_script)]),
            file=out,
        )
        return []

    for job in jobs:
        test_only(job.node_type, [f"--array={specs[job.script]}"], job.script, out)

    submitted: list[str] = []
    try:
        for job in jobs:
            job_id = client.sbatch([f"--array={specs[job.script]}"], job.script)
            submitted.append(job_id)
            append_submission(
                campaign_dir,
                {
                    "node_type": job.node_type.name,
                    "job_id": job_id,
                    "kind": "array",
                    "indices": list(job.indices),
                    "array": specs[job.script],
                    "task_offset": job.offset,
                    "time_limit": job.time_limit,
                    "max_array_size": limits.max_array_size,
                    "script": str(job.script),
                    "submitted": utc_now(),
                    "round": round_no,
                },
            )
            print(
                f"array job {job_id}: node type {job.node_type.name}, {len(job.indices)} case(s) "
                f"[{specs[job.script]}]"
                + (f", case index = task id + {job.offset}" if job.offset else "")
                + f", script {job.script}",
                file=out,
            )
        dependency = "afterany:" + ":".join(submitted)
        analysis_id = client.sbatch([f"--dependency={dependency}"], analysis_script)
    except BaseException as err:
        # Ctrl-C or a failed sbatch half-way: take back what is queued, so a campaign is all or nothing.
        if not submitted:
            raise
        client.scancel(submitted)
        if isinstance(err, ScalebenchError):
            raise ScalebenchError(
                f"{err}; cancelled the array jobs already submitted: {', '.join(submitted)}"
            ) from None
        print(f"cancelled the array jobs already submitted: {', '.join(submitted)}", file=sys.stderr)
        raise
    append_submission(
        campaign_dir,
        {
            "node_type": None,
            "job_id": analysis_id,
            "kind": "analysis",
            "indices": [],
            "depends_on": submitted,
            "script": str(analysis_script),
            "submitted": utc_now(),
            "round": round_no,
        },
    )
    print(f"analysis job {analysis_id}: runs `scalebench analyze` after {', '.join(submitted)} end", file=out)
    if later:
        print(
            f"submit limit: {len(later)} case(s) not submitted yet ({format_array_spec(later)}); "
            f"`./scalebench resume {shlex.quote(str(campaign_dir))}` submits them once the queue has room",
            file=out,
        )
    split = any(job.offset for job in jobs)
    where = {
        "records": f"{campaign_dir / 'raw'}/<case_id>/reps.csv (and facts.jsonl)",
        "logs": f"{campaign_dir / 'logs'}/<array job id>_<"
        + ("task id>.out (case index = task id + the array's task_offset)" if split else "case index>.out"),
        "report": f"{campaign_dir / 'analysis' / 'report.html'} (once the analysis job has run)",
        "follow": f"./scalebench status {shlex.quote(str(campaign_dir))}",
        "faults": f"./scalebench resume {shlex.quote(str(campaign_dir))}"
        "  (resubmits only missing and failed cases)",
    }
    for label, text in where.items():
        print(f"{label + ':':<9}{text}", file=out)
    return [*submitted, analysis_id]
