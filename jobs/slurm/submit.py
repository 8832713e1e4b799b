"""Submitting a campaign to Slurm: job arrays per node type, then one dependent analysis job.

Resource shape: arrays per node type (not per shape), as many as the controller's MaxArraySize needs.
Every task asks for a whole node (--nodes=1 --exclusive): a scaling measurement must not share its node
with another job, and with the node to itself a case can use any ranks x threads that fit, so `run-case`
starts `srun -n R -c T` with exactly what its case needs. --ntasks is the largest rank count among the
array's cases, so Slurm rejects (at validation, before anything is queued) a node type that cannot
hold its biggest case.

Validation lives in jobs.slurm.checks, the round itself (scripts, sbatch, log) in jobs.slurm.rounds.
"""

import sys
from pathlib import Path

from jobs.config import NODES_TOML, load_node_types
from jobs.site_options import SiteOptions
from jobs.slurm.checks import check_controller, check_placements, check_throttle, slurm_node_types
from jobs.slurm.limits import assumed_limits, read_limits
from jobs.slurm.rounds import submit_round

DEFAULT_THROTTLE = 4


def submit_experiment(
    experiment: Path,
    node_types: list[str] | None,
    throttle: int,
    dry_run: bool,
    name: str | None = None,
    results_dir: Path | None = None,
    out=sys.stdout,
    site: SiteOptions | None = None,
    max_array_size: int | None = None,
) -> Path:
    """Plan a new campaign and submit it (or with dry_run only write its scripts); returns the campaign."""
    from jobs.campaign import create_campaign, load_cases
    from jobs.config import load_experiment

    check_throttle(throttle)
    if not node_types:
        node_types = load_experiment(Path(experiment), load_node_types(NODES_TOML)).node_types
    nodes = slurm_node_types(node_types, site=site)
    limits = assumed_limits(max_array_size)
    if not dry_run:
        check_controller()
        limits = read_limits(max_array_size)
        check_placements(nodes, out)
    campaign_dir = create_campaign(experiment, node_types=list(nodes), name=name, results_dir=results_dir)
    cases = load_cases(campaign_dir)
    print(f"campaign {campaign_dir.name}: {len(cases)} case(s) planned in {campaign_dir}", file=out)
    command = "submit" + (" --dry-run" if dry_run else "")
    submit_round(campaign_dir, cases, range(len(cases)), nodes, throttle, 1, command, dry_run, limits, out)
    return campaign_dir
