"""scalebench — plan, run, submit and analyse scaling campaigns of multithreaded kernels.

The command's entry point (the `scalebench` console script of a pip install; the clone's ./scalebench
script calls it too). Each subcommand lives in the package that owns its stage of the data flow
(config -> cases -> records -> tables -> report); this module only gathers them and handles the global
options: --results-dir (every command; the same as $SCALEBENCH_RESULTS_DIR) and --version.
"""

import argparse
import contextlib
import importlib
import os
import sys
from pathlib import Path

from sbcore.child import stop_on_signals

# Which module registers which subcommands, in the order --help lists them. Only the module owning the
# command being run is imported: `run-case` starts once per Slurm array task and must not pay for pandas.
COMMAND_MODULES = {
    "jobs.cli": ["plan", "run", "run-case", "status", "probe", "build"],
    "jobs.slurm.cli": ["submit", "resume", "nodes"],
    "analysis.cli": ["analyze", "compare"],
    "analysis.gate_cli": ["check", "history"],
}
RESULTS_DIR_HELP = (
    "where campaigns live, for every command (default: $SCALEBENCH_RESULTS_DIR, else ./results of the "
    "current directory)"
)


def modules_for(argv: list[str]) -> list[str]:
    """The modules needed to parse argv: the owner of its command, or all of them (for --help, typos).
    The command is the first word that is neither an option nor the value of the global --results-dir."""
    words = iter(argv)
    command = None
    for word in words:
        if word == "--results-dir":
            next(words, None)
        elif not word.startswith("-"):
            command = word
            break
    owners = [m for m, commands in COMMAND_MODULES.items() if command in commands]
    return owners or list(COMMAND_MODULES)


class VersionAction(argparse.Action):
    """--version: the version and git commit, computed only when asked (git runs)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from sbcore.install import version_line

        print(version_line())
        parser.exit()


def build_parser(modules: list[str] | None = None) -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="scalebench",
        description="Plan, run (locally or as Slurm job arrays) and analyse scaling campaigns.",
        epilog="Run 'scalebench COMMAND --help' for the options of one command. Exit status: 0 ok, "
        "1 a finding (e.g. an incomplete campaign), 2 bad input or usage, 3 the environment or a tool "
        "failed (docs/exit-codes.md).",
    )
    parser.add_argument("--version", action=VersionAction, help="print the version and git commit")
    parser.add_argument(
        "--results-dir", dest="global_results_dir", type=Path, metavar="DIR", help=RESULTS_DIR_HELP
    )
    parser.add_argument(
        "--trust-group",
        action="store_true",
        help="accept results and campaign directories writable by their group: a team directory on a "
        "shared file system (the same as SCALEBENCH_TRUST_GROUP=1; docs/trust.md)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in modules or list(COMMAND_MODULES):
        importlib.import_module(name).register(sub)
    # Also accepted after the command; commands with their own --results-dir keep it (same meaning).
    for command_parser in sub.choices.values():
        with contextlib.suppress(argparse.ArgumentError):
            command_parser.add_argument(
                "--results-dir",
                dest="global_results_dir",
                type=Path,
                metavar="DIR",
                default=argparse.SUPPRESS,
                help=RESULTS_DIR_HELP,
            )
    return parser


def apply_results_dir(args: argparse.Namespace) -> None:
    """--results-dir, wherever given, becomes $SCALEBENCH_RESULTS_DIR (absolute) for this process and
    what it starts, and the command's own results_dir argument."""
    from sbcore.layout import RESULTS_ENV

    chosen = getattr(args, "global_results_dir", None) or getattr(args, "results_dir", None)
    if chosen is None:
        return
    from sbcore.errors import UsageError
    from sbcore.names import has_control

    if has_control(str(chosen)):
        raise UsageError(f"--results-dir {str(chosen)!r}: contains a control character (newline, tab, ...)")
    chosen = Path(chosen).absolute()
    os.environ[RESULTS_ENV] = str(chosen)
    if hasattr(args, "results_dir"):
        args.results_dir = chosen


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (docs/exit-codes.md): what is wrong and where to look, exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    # SIGTERM and SIGHUP end every command like Ctrl-C, from its first instruction on: one line, 130.
    stop_on_signals()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("scalebench: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] in ("jobs", "analysis", "sbcore"):
            raise  # our own code: a bug, keep the traceback
        # A fresh clone before `make setup`: no .venv, and the system python lacks the packages.
        print(
            f"scalebench: Python package '{err.name}' is missing: run `make setup` first "
            "(checks the tools and installs the project's .venv), or `pip install .`",
            file=sys.stderr,
        )
        return 3  # the environment (exit codes: docs/exit-codes.md)


def _main(argv: list[str] | None) -> int:
    from sbcore.errors import EXIT_ENVIRONMENT, ScalebenchError

    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(modules_for(argv)).parse_args(argv)
    try:
        apply_results_dir(args)
        if args.trust_group:
            from sbcore.campaign_access import TRUST_GROUP_ENV

            os.environ[TRUST_GROUP_ENV] = "1"  # for this process and what it starts
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except ScalebenchError as err:
        print(f"scalebench {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"scalebench {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`plan | head -3`): say so once; nothing more may go to the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"scalebench {args.command}: error: output closed by its reader (broken pipe)", file=sys.stderr)
        return EXIT_ENVIRONMENT
    except OSError as err:
        # The file system failed under a command (a read-only or full disk, a file that vanished):
        # one line naming the file, exit 3. Temporary files are removed where they are written.
        where = err.filename or "a file"
        print(f"scalebench {args.command}: error: {where}: {err.strerror or err}", file=sys.stderr)
        return EXIT_ENVIRONMENT


if __name__ == "__main__":
    sys.exit(main())
