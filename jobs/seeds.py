"""`make seeds`: the seed studies measured on this machine and written into docs/seed-reproductions.md.

For each study's experiments in turn: the quiet gate (jobs/quiet_gate.py: load average and CPU busy
share below their bounds, waiting up to a stated time, else exit 3 with one line), then `scalebench
run`, then what the gate saw and the load after the run into the campaign's quiet_gate.json, then
`scalebench analyze --seed-doc`, which writes the study's tables with those conditions beside them.
The platform facts (CPU model and flags, kernel, OpenMP runtime, stress-ng and likwid versions:
jobs/seed_platform.py) go into quiet_gate.json too. At the end the campaigns the document rests on are
exported as one archive (jobs/seed_archive.py) under the results directory.
`--render-only` measures nothing: it rewrites the document from the newest existing campaign of each
experiment (`<experiment>-seeds-<stamp>`) and exports those.
Study 004 (SMT) is not measured here: its figures need real SMT (config/reference/seed-004-smt.toml).

    python -m jobs.seeds [--studies 000,001,003] [--load-below 1.5] [--max-wait 600] [--no-wait-for-quiet]
                         [--render-only] [--archive PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from jobs import quiet_gate
from jobs.seed_archive import export
from jobs.seed_platform import platform_facts
from sbcore import layout
from sbcore.atomic import write_atomic
from sbcore.errors import ScalebenchError, UsageError

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "config" / "experiments"
DOC = ROOT / "docs" / "seed-reproductions.md"
STUDIES = {
    "000": sorted(p.name for p in EXPERIMENTS.glob("seed-000-tc*.toml")),
    "001": ["seed-001-osbench.toml"],
    "003": ["seed-003-timing.toml"],
}
DEFAULT_STUDIES = "000,001,003"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m jobs.seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("--studies", default=DEFAULT_STUDIES, help=f"comma list of {', '.join(STUDIES)}")
    p.add_argument(
        "--experiment",
        action="append",
        type=Path,
        help="run this experiment file instead of the studies' (repeatable; tests use small ones)",
    )
    p.add_argument(
        "--load-below",
        type=float,
        default=quiet_gate.LOAD_BELOW,
        help="1-minute load average the machine must be below before each study (default %(default)s, "
        "for a 2-CPU machine: scale it with the CPU count)",
    )
    p.add_argument(
        "--busy-below",
        type=float,
        default=quiet_gate.BUSY_BELOW,
        help="CPU busy share (all CPUs, over 2 s) it must be below (default %(default)s)",
    )
    p.add_argument(
        "--max-wait",
        type=float,
        default=quiet_gate.MAX_WAIT_S,
        help="seconds to wait for a quiet machine before stopping with exit 3 (default %(default)s)",
    )
    p.add_argument(
        "--no-wait-for-quiet",
        action="store_true",
        help="measure whatever the load (the tables still state it); for tests",
    )
    p.add_argument(
        "--render-only",
        action="store_true",
        help="measure nothing: rewrite the document from the newest seed campaign of each experiment",
    )
    p.add_argument(
        "--archive",
        type=Path,
        help="the archive of the campaigns to write (default: seed-campaigns-<stamp>.tar.gz in the results "
        "directory; never overwritten)",
    )
    p.add_argument("--doc", type=Path, default=DOC, help="the document to write (default %(default)s)")
    p.add_argument("--results-dir", type=Path, help="where campaigns go (default: scalebench's)")
    args = p.parse_args(argv)
    unknown = set(args.studies.split(",")) - set(STUDIES)
    if unknown:
        raise UsageError(
            f"--studies: unknown study {', '.join(sorted(unknown))} (known: {', '.join(STUDIES)})"
        )
    if args.load_below <= 0 or not 0 < args.busy_below <= 1 or args.max_wait < 0:
        raise UsageError("--load-below must be > 0, --busy-below in (0, 1], --max-wait >= 0")
    return args


def experiments(args: argparse.Namespace) -> list[Path]:
    if args.experiment:
        return list(args.experiment)
    return [EXPERIMENTS / name for study in args.studies.split(",") for name in STUDIES[study]]


def scalebench(args: argparse.Namespace, *command) -> int:
    extra = ["--results-dir", str(args.results_dir)] if args.results_dir else []
    return subprocess.run([sys.executable, str(ROOT / "scalebench"), *extra, *map(str, command)]).returncode


def gate(args: argparse.Namespace) -> quiet_gate.QuietCheck:
    if args.no_wait_for_quiet:
        return quiet_gate.skipped()
    return quiet_gate.wait_for_quiet(
        args.load_below, args.busy_below, args.max_wait, say=lambda line: print(f"seeds: {line}", flush=True)
    )


def stamp_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")


def results_dir(args: argparse.Namespace) -> Path:
    return args.results_dir if args.results_dir else layout.results_root()


def newest_campaign(args: argparse.Namespace, experiment: Path) -> Path:
    """The newest `<experiment>-seeds-<stamp>` campaign directory (the stamp sorts by time)."""
    prefix = f"{experiment.stem}-seeds-"
    root = results_dir(args)
    found = sorted(
        p
        for p in root.glob(f"{prefix}*")
        if p.is_dir() and not p.is_symlink() and (p / "cases.jsonl").is_file()
    )
    if not found:
        raise UsageError(f"--render-only: no campaign {prefix}<stamp> under {root}: run `make seeds` first")
    return found[-1]


def analyze_into_doc(args: argparse.Namespace, campaign: Path) -> None:
    if scalebench(args, "analyze", campaign, "--seed-doc", args.doc) != 0:
        raise ScalebenchError(f"analyze {campaign} --seed-doc {args.doc} failed")


def run_one(args: argparse.Namespace, experiment: Path) -> Path:
    before = gate(args)
    name = f"{experiment.stem}-seeds-{stamp_now()}"
    start = time.monotonic()
    if scalebench(args, "run", experiment, "--name", name, "--no-progress") != 0:
        print(
            f"seeds: {experiment.name}: some repetitions failed (see `scalebench status {shlex.quote(name)}`)"
        )
    campaign = layout.resolve_campaign(name, args.results_dir)
    conditions = {
        "before": before.as_dict(),
        "load_after_1min": round(os.getloadavg()[0], 2),
        "finished": quiet_gate.now_utc(),
        "duration_s": round(time.monotonic() - start, 1),
        "root": os.geteuid() == 0,
        "platform": platform_facts(),
    }
    write_atomic(layout.quiet_gate_path(campaign), json.dumps(conditions, indent=1) + "\n")
    analyze_into_doc(args, campaign)
    return campaign


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        campaigns = []
        for experiment in experiments(args):
            if args.render_only:
                campaigns.append(newest_campaign(args, experiment))
                analyze_into_doc(args, campaigns[-1])
            else:
                campaigns.append(run_one(args, experiment))
        archive = export(
            campaigns, args.archive or results_dir(args) / f"seed-campaigns-{stamp_now()}.tar.gz"
        )
        print(f"seeds: the campaigns behind {args.doc}: {archive} ({archive.stat().st_size / 1e6:.1f} MB)")
    except ScalebenchError as err:
        print(f"seeds: error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
