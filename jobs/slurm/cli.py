"""`scalebench submit` and `scalebench resume`: campaigns as Slurm job arrays (see README, section Slurm)."""

import argparse
from pathlib import Path

from jobs.argtypes import int_at_least
from jobs.slurm.submit import DEFAULT_THROTTLE

SHAPE_NOTE = (
    "One array per node type; each task gets a whole node (--exclusive) and run-case starts "
    "`srun -n RANKS -c THREADS` for MPI cases."
)


def _node_types(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r}: give node type names separated by commas")
    return names


def _array_options(parser, dry_run_help: str) -> None:
    """--throttle and --dry-run: what submit and resume share about the arrays they write."""
    parser.add_argument(
        "--throttle",
        type=int_at_least(1),
        default=DEFAULT_THROTTLE,
        metavar="N",
        help=f"at most N tasks of each array run at once (%%N in --array; default {DEFAULT_THROTTLE})",
    )
    parser.add_argument("--dry-run", action="store_true", help=dry_run_help)


def register(subparsers) -> None:
    submit = subparsers.add_parser(
        "submit",
        help="plan a campaign and submit it as Slurm job arrays plus an analysis job",
        description=(
            "Plan a campaign from EXPERIMENT, write one sbatch array script per node type under "
            "results/<campaign>/jobs/, submit each (array task id = campaign case index), then one analysis "
            "job that runs `scalebench analyze` after every array task has ended. Everything is validated "
            "(node types, sbatch, controller, partitions/constraints, sbatch --test-only) before the first "
            f"real sbatch. {SHAPE_NOTE}"
        ),
    )
    submit.add_argument("experiment", type=Path, help="experiment TOML, e.g. config/experiments/smoke.toml")
    submit.add_argument(
        "--node-types",
        type=_node_types,
        metavar="A,B",
        help="node types from config/nodes.toml to run on (default: the experiment's node_types)",
    )
    _array_options(submit, "plan and write the scripts, print the sbatch commands, submit nothing")
    submit.add_argument("--name", help="campaign name (default <experiment>-<UTC timestamp>)")
    submit.add_argument(
        "--results-dir", type=Path, help="where campaigns live (default results/, or $SCALEBENCH_RESULTS_DIR)"
    )
    submit.set_defaults(func=run_submit)

    resume = subparsers.add_parser(
        "resume",
        help="resubmit a campaign's missing and failed cases as new job arrays",
        description=(
            "Resubmit only the cases of CAMPAIGN that have no complete record (missing or failed, from the "
            "files), as one new array per node type with an explicit index list, followed by a new analysis "
            "job. Refuses while any of those cases is still pending or running in the Slurm queue. "
            "Repetitions already recorded are not rerun."
        ),
    )
    resume.add_argument("campaign", help="campaign directory, name under results/, or 'latest'")
    _array_options(resume, "write the scripts and print the sbatch commands, submit nothing")
    resume.set_defaults(func=run_resume)


def run_submit(args) -> int:
    from jobs.slurm.submit import submit_experiment

    submit_experiment(
        args.experiment, args.node_types, args.throttle, args.dry_run, args.name, args.results_dir
    )
    return 0


def run_resume(args) -> int:
    from jobs.campaign import resolve_campaign
    from jobs.slurm.resume import resume_campaign

    resume_campaign(resolve_campaign(args.campaign), args.throttle, args.dry_run)
    return 0
