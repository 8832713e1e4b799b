"""`scalebench submit` and `scalebench resume`: campaigns as Slurm job arrays (see README, section Slurm)."""

import argparse
import sys
from pathlib import Path

from jobs.slurm.submit import DEFAULT_THROTTLE
from sbcore.argtypes import int_at_least

SHAPE_NOTE = (
    "One array per node type; each task gets a whole node (--exclusive) and run-case starts "
    "`srun -n RANKS -c THREADS` for MPI cases."
)


def _node_types(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r}: give node type names separated by commas")
    return names


def _matching(pattern, expected: str):
    def parse(text: str) -> str:
        if not pattern.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {expected}")
        return text

    return parse


def _sbatch_option(text: str) -> str:
    from jobs.site_options import option_problem

    problem = option_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text


def _site_options(parser) -> None:
    """Site options for every node type of the round; they override config/nodes.toml."""
    from jobs import site_options as site

    group = parser.add_argument_group(
        "site options (override the node type's keys in config/nodes.toml; shell-quoted in the scripts)"
    )
    group.add_argument(
        "--account", type=_matching(site.NAME, "a Slurm account name"), help="sbatch --account"
    )
    group.add_argument("--qos", type=_matching(site.NAME, "a QOS name"), help="sbatch --qos")
    group.add_argument(
        "--time-limit",
        type=_matching(site.TIME, "a Slurm time: MINUTES, H:MM:SS or D-HH:MM:SS"),
        metavar="TIME",
        help="sbatch --time of every array task (default: reps x timeout_s of the longest case of the "
        "array, x1.25 + 2 min)",
    )
    group.add_argument(
        "--mem", type=_matching(site.MEM, "memory as Slurm reads it: 0, 4000, 64G"), help="sbatch --mem"
    )
    group.add_argument(
        "--reservation", type=_matching(site.NAME, "a reservation name"), help="sbatch --reservation"
    )
    group.add_argument(
        "--sbatch-option",
        dest="sbatch_options",
        action="append",
        default=[],
        type=_sbatch_option,
        metavar="--NAME[=VALUE]",
        help="one more sbatch option for every job (repeatable), e.g. --sbatch-option=--gres=gpu:1",
    )
    group.add_argument(
        "--max-array-size",
        type=int_at_least(1),
        metavar="N",
        help="task ids stay below N: lowers the controller's MaxArraySize; for --dry-run without a "
        "controller it replaces the assumed default 1001",
    )


def site_from_args(args):
    from jobs.site_options import SiteOptions

    return SiteOptions(
        account=args.account,
        qos=args.qos,
        time_limit=args.time_limit,
        mem=args.mem,
        reservation=args.reservation,
        sbatch_options=tuple(args.sbatch_options),
    )


def _array_options(parser, dry_run_help: str) -> None:
    """--throttle, --dry-run and the site options: what submit and resume share about their arrays."""
    parser.add_argument(
        "--throttle",
        type=int_at_least(1),
        default=DEFAULT_THROTTLE,
        metavar="N",
        help=f"at most N tasks of each array run at once (%%N in --array; default {DEFAULT_THROTTLE})",
    )
    parser.add_argument("--dry-run", action="store_true", help=dry_run_help)
    _site_options(parser)


def register(subparsers) -> None:
    submit = subparsers.add_parser(
        "submit",
        help="plan a campaign and submit it as Slurm job arrays plus an analysis job",
        description=(
            "Plan a campaign from EXPERIMENT, write sbatch array scripts per node type under "
            "results/<campaign>/jobs/, submit each, then one analysis job that runs `scalebench analyze` "
            "after every array task has ended. The controller's limits decide the cut: every task id stays "
            "below MaxArraySize (case index = task id + the array's offset, one array per window of cases), "
            "and when MaxSubmitJobs/MaxJobCount leave no room for all cases, only a first batch is submitted "
            "and `resume` submits the rest. Everything is validated (node types, sbatch, controller, "
            "partitions/constraints, sbatch --test-only) before the first real sbatch. "
            f"{SHAPE_NOTE}"
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
            "files), as new arrays per node type with explicit task lists, followed by a new analysis "
            "job. Refuses while any of those cases is still pending or running in the Slurm queue, unless "
            "some cases were held back by a submit limit: those are submitted (the next batch). "
            "Repetitions already recorded are not rerun."
        ),
    )
    resume.add_argument("campaign", help="campaign directory, name under results/, or 'latest'")
    _array_options(resume, "write the scripts and print the sbatch commands, submit nothing")
    resume.set_defaults(func=run_resume)

    nodes = subparsers.add_parser(
        "nodes",
        help="print config/nodes.toml blocks for the node configurations Slurm knows",
        description=(
            "With --from-slurm: ask the controller (scontrol show node, sinfo) for every node and print one "
            "[node_types.<name>] block per distinct configuration (partition, features, sockets, cores per "
            "socket, threads per core, memory), for you to review, name and paste into config/nodes.toml."
        ),
    )
    nodes.add_argument(
        "--from-slurm", action="store_true", required=True, help="read the node types from Slurm"
    )
    nodes.add_argument("--partition", metavar="P", help="only nodes of partition P")
    nodes.set_defaults(func=run_nodes)


def run_submit(args) -> int:
    from jobs.slurm.shared_fs import shared_fs_warning
    from jobs.slurm.submit import submit_experiment
    from sbcore.layout import results_root

    submit_experiment(
        args.experiment,
        args.node_types,
        args.throttle,
        args.dry_run,
        args.name,
        args.results_dir,
        site=site_from_args(args),
        max_array_size=args.max_array_size,
    )
    warning = shared_fs_warning(args.results_dir or results_root())
    if warning:
        print(warning, file=sys.stderr)
    return 0


def run_resume(args) -> int:
    from jobs.campaign import verified_cases
    from jobs.slurm.resume import resume_campaign
    from sbcore.layout import trusted_campaign

    campaign = trusted_campaign(args.campaign)
    verified_cases(campaign)  # nothing is submitted unless cases.jsonl is what its experiment plans
    resume_campaign(
        campaign,
        args.throttle,
        args.dry_run,
        site=site_from_args(args),
        max_array_size=args.max_array_size,
    )
    return 0


def run_nodes(args) -> int:
    from jobs.slurm.discover import discovered_blocks

    print(discovered_blocks(args.partition), end="")
    return 0
