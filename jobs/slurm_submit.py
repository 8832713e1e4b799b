"""Submitting a campaign to Slurm: one job array per node type, then one dependent analysis job.

Resource shape: one array per node type (not per shape). Every task asks for a whole node
(--nodes=1 --exclusive): a scaling measurement must not share its node with another job, and with the
node to itself a case can use any ranks x threads that fit, so `run-case` starts `srun -n R -c T` with
exactly what its case needs. --ntasks is the largest rank count among the node type's cases, so Slurm
rejects (at validation, before anything is queued) a node type that cannot hold its biggest case.

Order of work, so that nothing is half-submitted: validate node types, Slurm clients, the controller and
each partition/constraint; plan and write the scripts; `sbatch --test-only` each exact array; then the
real sbatch calls, cancelling the arrays already queued if a later one still fails.
"""

import shlex
import sys
from collections import defaultdict
from pathlib import Path

from jobs import slurm
from jobs.config import NODES_TOML, NodeType, load_node_types
from jobs.slurm_arrayspec import format_array_spec
from jobs.slurm_scripts import (
    ArrayJob,
    placement_lines,
    render_analysis_script,
    render_array_script,
    write_script,
)
from jobs.slurm_submissions import append_submission
from sbcore.clock import utc_iso as utc_now
from sbcore.errors import ScalebenchError, UsageError

DEFAULT_THROTTLE = 4
CLIENTS = ("sbatch", "scancel", "squeue", "scontrol")


def slurm_node_types(names, nodes_path: Path = NODES_TOML) -> dict[str, NodeType]:
    """The named node types from nodes.toml, each of which must say where Slurm runs it."""
    known = load_node_types(nodes_path)
    selected = {}
    for name in names:
        if name not in known:
            raise UsageError(f"--node-types: {name!r} is not in {nodes_path} (known: {', '.join(known)})")
        node = known[name]
        if not (node.partition or node.constraint):
            raise UsageError(
                f"{nodes_path}: node_types.{name} has no partition or constraint: it cannot run under Slurm"
            )
        selected[name] = node
    return selected


def check_controller() -> None:
    """Client commands on PATH and slurmctld answering."""
    slurm.require_clients(*CLIENTS)
    slurm.ping_controller()


def test_only(node: NodeType, options: list[str], script: Path | None = None, out=sys.stdout) -> None:
    """`sbatch --test-only`: fail on anything Slurm would reject, except that every node is drained/down.

    Slurm answers "Requested node configuration is not available" both for a shape no node can hold and
    for a node type whose nodes are all drained right now; only the first is an error (a drained
    node type's jobs pend until it returns, which is what a real sbatch would do).
    """
    try:
        slurm.sbatch(options, script, test_only=True)
    except ScalebenchError as err:
        if "node configuration is not available" in str(err):
            usable, total = slurm.available_nodes(node.partition, node.constraint)
            if total and not usable:
                print(
                    f"warning: node type {node.name}: all {total} node(s) are drained or down now; "
                    "its jobs will pend until one returns",
                    file=out,
                )
                return
            if not total:
                where = " ".join(placement_lines(node))
                raise ScalebenchError(
                    f"node type {node.name}: no Slurm node matches {where} ({err})"
                ) from None
        raise ScalebenchError(f"node type {node.name}: Slurm rejects it: {err}") from None


def check_placements(nodes: dict[str, NodeType], out=sys.stdout) -> None:
    """Every partition/constraint is known to Slurm (nothing is queued by this)."""
    for node in nodes.values():
        test_only(node, [*placement_lines(node), "--nodes=1", "--exclusive", "--wrap=true"], out=out)


def array_jobs(campaign_dir: Path, cases: list[dict], indices, nodes: dict[str, NodeType], prefix: str):
    """Group the given campaign indices by node type, in campaign order."""
    by_node: dict[str, list[int]] = defaultdict(list)
    ranks: dict[str, int] = defaultdict(lambda: 1)
    for index in sorted(indices):
        case = cases[index]
        by_node[case["node_type"]].append(index)
        ranks[case["node_type"]] = max(ranks[case["node_type"]], int(case.get("ranks", 1)))
    jobs_dir = campaign_dir / "jobs"
    return [
        ArrayJob(nodes[name], tuple(idx), ranks[name], jobs_dir / f"{prefix}array-{name}.sbatch")
        for name, idx in by_node.items()
    ]


def check_throttle(throttle: int) -> int:
    if throttle < 1:
        raise UsageError(f"--throttle {throttle}: must be >= 1 (tasks running at once per node type)")
    return throttle


def submit_round(
    campaign_dir: Path,
    jobs: list[ArrayJob],
    throttle: int,
    round_no: int,
    command: str,
    prefix: str,
    dry_run: bool,
    out=sys.stdout,
) -> list[str]:
    """Write the scripts, then (unless dry_run) validate and submit them; returns the job ids."""
    created = utc_now()
    specs = {job.script: f"{format_array_spec(job.indices)}%{throttle}" for job in jobs}
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
            job_id = slurm.sbatch([f"--array={specs[job.script]}"], job.script)
            submitted.append(job_id)
            append_submission(
                campaign_dir,
                {
                    "node_type": job.node_type.name,
                    "job_id": job_id,
                    "kind": "array",
                    "indices": list(job.indices),
                    "array": specs[job.script],
                    "script": str(job.script),
                    "submitted": utc_now(),
                    "round": round_no,
                },
            )
            print(
                f"array job {job_id}: node type {job.node_type.name}, {len(job.indices)} case(s) "
                f"[{specs[job.script]}], script {job.script}",
                file=out,
            )
        dependency = "afterany:" + ":".join(submitted)
        analysis_id = slurm.sbatch([f"--dependency={dependency}"], analysis_script)
    except BaseException as err:
        # Ctrl-C or a failed sbatch half-way: take back what is queued, so a campaign is all or nothing.
        if not submitted:
            raise
        slurm.scancel(submitted)
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
    where = {
        "records": f"{campaign_dir / 'raw'}/<case_id>/rep-<k>.json",
        "logs": f"{campaign_dir / 'logs'}/<array job id>_<case index>.out",
        "report": f"{campaign_dir / 'analysis' / 'report.html'} (once the analysis job has run)",
        "follow": f"./scalebench status {campaign_dir}",
        "faults": f"./scalebench resume {campaign_dir}  (resubmits only missing and failed cases)",
    }
    for label, text in where.items():
        print(f"{label + ':':<9}{text}", file=out)
    return [*submitted, analysis_id]


def submit_experiment(
    experiment: Path,
    node_types: list[str] | None,
    throttle: int,
    dry_run: bool,
    name: str | None = None,
    results_dir: Path | None = None,
    out=sys.stdout,
) -> Path:
    """Plan a new campaign and submit it (or with dry_run only write its scripts); returns the campaign."""
    from jobs.campaign import create_campaign, load_cases
    from jobs.config import load_experiment

    check_throttle(throttle)
    if not node_types:
        node_types = load_experiment(Path(experiment), load_node_types(NODES_TOML)).node_types
    nodes = slurm_node_types(node_types)
    if not dry_run:
        check_controller()
        check_placements(nodes, out)
    campaign_dir = create_campaign(experiment, node_types=list(nodes), name=name, results_dir=results_dir)
    cases = load_cases(campaign_dir)
    print(f"campaign {campaign_dir.name}: {len(cases)} case(s) planned in {campaign_dir}", file=out)
    jobs = array_jobs(campaign_dir, cases, range(len(cases)), nodes, prefix="")
    command = "submit" + (" --dry-run" if dry_run else "")
    submit_round(campaign_dir, jobs, throttle, 1, command, "", dry_run, out)
    return campaign_dir
