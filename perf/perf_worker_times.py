"""What the per-worker measurements cost: the C kernels built as usual and built with them compiled
out (-DSB_WORKER_TIMES=0, into build/perf-worker-times-off/), run alternately, trial by trial, on
repetitions of about 0.1 s; prints the median wall time per repetition of each and the overhead in %
against the aim (at most 1 % of a 0.1 s repetition), also for --batch 1 pi with a coarse lock
(every batch takes the one mutex), and the quartiles of the per-trial overheads (each trial's median
on / median off - 1): where they straddle the aim the machine is too noisy to tell. The workers are
pinned to CPUs 0..threads-1 (SB_PIN_CPUS) so both builds run on the same placement. Prints, asserts
nothing; run it on a quiet machine.

Run: .venv/bin/python perf/perf_worker_times.py [--trials N] [--reps K]   (or `make perf`)
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
CASES = [
    ("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static"]),
    ("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static,1"]),
    ("mandelbrot-c-pthreads", [*MANDELBROT, "--schedule", "cyclic", "--sync", "none"]),
    ("mandelbrot-c-pthreads", [*MANDELBROT, "--schedule", "queue", "--sync", "coarse"]),
    ("mcpi-c-omp", ["--samples", "4000000", "--sync", "critical", "--batch", "1"]),
    ("mcpi-c-pthreads", ["--samples", "4000000", "--sync", "coarse", "--schedule", "block", "--batch", "1"]),
    ("mcpi-c-pthreads", ["--samples", "4000000", "--sync", "coarse", "--schedule", "queue", "--batch", "1"]),
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


def walls(binary: Path, args: list[str], threads: int, reps: int) -> list[float]:
    command = [str(binary), *args, "--threads", str(threads), "--warmup", "2", "--reps", str(reps)]
    pinned = {**os.environ, "SB_PIN_CPUS": ",".join(str(c) for c in range(threads))}
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600, env=pinned).stdout
    return [json.loads(line)["wall_s"] for line in out.splitlines() if '"warmup":false' in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=int, default=5, help="alternating trials of the two builds (default 5)"
    )
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    off = build_off()
    print(f"load average before: {os.getloadavg()[0]:.2f} (quote figures only from a quiet machine)")
    print(f"{'binary':24} {'options':52} {'on s':>9} {'off s':>9} {'overhead':>9} {'trials q1..q3':>17}")
    for name, options in CASES:
        times = {"on": [], "off": []}
        per_trial = []
        for _ in range(args.trials):  # alternating: drift in the machine's load hits both alike
            on_trial = walls(ON / name, options, args.threads, args.reps)
            off_trial = walls(off / name, options, args.threads, args.reps)
            times["on"] += on_trial
            times["off"] += off_trial
            per_trial.append(statistics.median(on_trial) / statistics.median(off_trial) - 1)
        on, cost = statistics.median(times["on"]), statistics.median(times["off"])
        overhead = on / cost - 1
        q1, _, q3 = statistics.quantiles(per_trial, n=4) if len(per_trial) > 1 else [overhead] * 3
        verdict = "ok" if overhead <= AIM else f"above the {AIM:.0%} aim"
        spread = f"{q1:+.1%}..{q3:+.1%}"
        shown = " ".join(options[-6:])
        print(f"{name:24} {shown:52} {on:9.4f} {cost:9.4f} {overhead:+8.2%} {spread:>17} {verdict}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
