"""`python -m jobs.slurm.testcluster up|down|status` — the Makefile's slurm-up / slurm-down."""

import argparse
import shlex
import subprocess
import sys

from jobs.slurm.testcluster.cluster import DEFAULT_DIR, DEFAULT_PORT_BASE, NODES, Cluster, down, status, up
from sbcore.errors import ScalebenchError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jobs.slurm.testcluster",
        description=(
            "Start, stop or inspect a real Slurm cluster on this host: munged, slurmctld and one "
            f"`slurmd -N` per emulated node ({', '.join(f'{n}: partition {p}' for n, p in NODES.items())}). "
            "Works as root without systemd. Idempotent: `up` when up and `down` when down do nothing."
        ),
        epilog=(
            f"Environment: SB_SLURM_DIR (config, state, logs; default {DEFAULT_DIR}), SB_SLURM_PORT_BASE "
            f"(first of 4 consecutive TCP ports; default {DEFAULT_PORT_BASE}), SB_SLURM_MAX_ARRAY_SIZE "
            "(MaxArraySize; default 1001, Slurm's own). Clients need SLURM_CONF: "
            "source $SB_SLURM_DIR/env.sh."
        ),
    )
    parser.add_argument("action", choices=["up", "down", "status"], help="what to do with the cluster")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        cluster = Cluster.from_env()
        if args.action == "up":
            started = up(cluster)
            what = f"started {', '.join(started)}" if started else "already running"
            print(f"test cluster in {cluster.dir}: {what}; nodes ready.")
            print(f"Use it with:  . {shlex.quote(str(cluster.env_file))}   (sets SLURM_CONF)")
            print(
                "Then e.g.:    ./scalebench submit config/experiments/smoke.toml --node-types tc-core,tc-smt"
            )
        elif args.action == "down":
            stopped = down(cluster)
            print(
                f"test cluster in {cluster.dir}: "
                + (f"stopped {', '.join(stopped)}" if stopped else "not running")
            )
        else:
            for name, pid in status(cluster).items():
                print(f"{name:<20} {'running, pid ' + str(pid) if pid else 'not running'}")
            if status(cluster)["slurmctld"]:
                subprocess.run(["sinfo", "-N", "-o", "%N %P %f %c %z %t"], env=cluster.client_env())
    except ScalebenchError as err:
        print(f"testcluster {args.action}: error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
