"""What the per-worker measurements cost: the C kernels built as usual and built with them compiled
out (-DSB_WORKER_TIMES=0, into build/perf-worker-times-off/), run alternately, trial by trial, on
repetitions of about 0.1 s; prints the median wall time per repetition of each and the overhead in %
against the aim (at most 1 % of a 0.1 s repetition), also for --batch 1 pi with a coarse lock
(every batch takes the one mutex), and the quartiles of the per-trial overheads (each trial's median
on / median off - 1): where they straddle the aim the machine is too noisy to tell. The same pi case
on one worker shows the lock mechanism's own cost (the lock is never contended); on two workers its
time also depends on how often the lock's hand-off goes through the kernel (futex sleeps), which
swings between trials of either build: the voluntary context switches per repetition (median) of
each build are printed beside it. The workers are pinned to CPUs 0..threads-1 (SB_PIN_CPUS) so both
builds run on the same placement. --kernel-arg and --env pass options and variables to every run of
both builds (e.g. a wait policy). Prints, asserts nothing; run it on a quiet machine.

Run: .venv/bin/python perf/perf_worker_times.py [--trials N] [--reps K] [--kernel-arg=--opt=value]
     [--env NAME=VALUE]   (or `make perf`)
"""

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ON = ROOT / "build" / "bin"
OFF_DIR = ROOT / "build" / "perf-worker-times-off"
AIM = 0.01
MANDELBROT = ["--preset", "asymmetric", "--width", "384", "--height", "384", "--max-iter", "1000"]
PI_COARSE_BLOCK = ["--samples", "4000000", "--sync", "coarse", "--schedule", "block", "--batch", "1"]
# (binary, options, workers: None = --threads)
CASES = [
    ("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static"], None),
    ("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static,1"], None),
    ("mandelbrot-c-pthreads", [*MANDELBROT, "--schedule", "cyclic", "--sync", "none"], None),
    ("mandelbrot-c-pthreads", [*MANDELBROT, "--schedule", "queue", "--sync", "coarse"], None),
    ("mcpi-c-omp", ["--samples", "4000000", "--sync", "critical", "--batch", "1"], None),
    ("mcpi-c-pthreads", PI_COARSE_BLOCK, 1),
    ("mcpi-c-pthreads", PI_COARSE_BLOCK, None),
    (
        "mcpi-c-pthreads",
        ["--samples", "4000000", "--sync", "coarse", "--schedule", "queue", "--batch", "1"],
        None,
    ),
]


def build_off() -> Path:
    """The C kernels with the per-worker measurements compiled out (make's own rules, other dirs)."""
    flags = "-std=c11 -O2 -ffp-contract=off -g -Wall -Wextra -pthread -DSB_WORKER_TIMES=0"
    subprocess.run(
        [
            "make",
            "-s",
            "kernels",
            f"OBJ_DIR={OFF_DIR / 'obj'}",
            f"BIN_DIR={OFF_DIR / 'bin'}",
            f"CFLAGS_REF={flags}",
        ],
        cwd=ROOT,
        check=True,
    )
    return OFF_DIR / "bin"


def env_pair(text: str) -> tuple[str, str]:
    """--env NAME=VALUE."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--env {text!r}: expected NAME=VALUE")
    return name, value


def walls(binary: Path, args: list[str], threads: int, reps: int, env: dict[str, str]) -> list[dict]:
    """The measured repetitions' records (warm-ups left out)."""
    command = [str(binary), *args, "--threads", str(threads), "--warmup", "2", "--reps", str(reps)]
    pinned = {**os.environ, **env, "SB_PIN_CPUS": ",".join(str(c) for c in range(threads))}
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600, env=pinned).stdout
    return [record for record in map(json.loads, out.splitlines()) if not record["warmup"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=int, default=5, help="alternating trials of the two builds (default 5)"
    )
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--kernel-arg",
        action="append",
        default=[],
        help="an option for every kernel run of both builds (repeatable; write --kernel-arg=--opt=value)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=env_pair,
        help="NAME=VALUE set for every kernel run of both builds (repeatable)",
    )
    args = parser.parse_args()
    env = dict(args.env)
    off = build_off()
    print(f"load average before: {os.getloadavg()[0]:.2f} (quote figures only from a quiet machine)")
    if args.kernel_arg or env:
        print(f"every run: {' '.join(args.kernel_arg)} {' '.join(f'{k}={v}' for k, v in env.items())}")
    print(
        f"{'binary':24} {'options':50} {'p':>2} {'on s':>9} {'off s':>9} {'overhead':>9}"
        f" {'trials q1..q3':>17}"
        f" {'csw on/off':>11}"
    )
    for name, options, workers in CASES:
        threads = workers or args.threads
        records = {"on": [], "off": []}
        per_trial = []
        for _ in range(args.trials):  # alternating: drift in the machine's load hits both alike
            trial = {}
            for build, directory in (("on", ON), ("off", off)):
                trial[build] = walls(directory / name, [*options, *args.kernel_arg], threads, args.reps, env)
                records[build] += trial[build]
            per_trial.append(
                statistics.median(r["wall_s"] for r in trial["on"])
                / statistics.median(r["wall_s"] for r in trial["off"])
                - 1
            )
        on, cost = (statistics.median(r["wall_s"] for r in records[b]) for b in ("on", "off"))
        switches = "/".join(
            f"{statistics.median(r['ctx_voluntary'] for r in records[b]):.0f}" for b in ("on", "off")
        )
        overhead = on / cost - 1
        q1, _, q3 = statistics.quantiles(per_trial, n=4) if len(per_trial) > 1 else [overhead] * 3
        verdict = "ok" if overhead <= AIM else f"above the {AIM:.0%} aim"
        spread = f"{q1:+.1%}..{q3:+.1%}"
        shown = " ".join(options[-6:])
        print(
            f"{name:24} {shown:50} {threads:2} {on:9.4f} {cost:9.4f} {overhead:+8.2%} {spread:>17}"
            f" {switches:>11} {verdict}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
