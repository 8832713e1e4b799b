"""How waiting workers wait, side by side: Mandelbrot pthreads `block` and `cyclic` (chunks of one row,
sync none) on 2 threads under --wait-policy spin and sleep, and the OpenMP `static` / `static,1`
binary under OMP_WAIT_POLICY=active and passive as the reference, run alternately, trial by trial, in
one process per trial and variant (asymmetric 256², workers pinned to CPUs 0 and 1 via SB_PIN_CPUS).
Prints per variant the median wall time per repetition, its 10th and 90th percentiles, the share of
repetitions in the slow mode (more than 1.25x the variant's fastest: on a shared guest a sleeping vCPU
slows the busy one, docs/campaigns.md) and, per pair, sleep over spin (passive over active). Prints,
asserts nothing; run it on a quiet machine, the load average is printed before and after.

Run: .venv/bin/python perf/perf_wait_policy.py [--trials N] [--reps K]   (or `make perf`)
"""

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "build" / "bin"
THREADS = 2
IMAGE = ["--preset", "asymmetric", "--width", "256", "--height", "256", "--threads", str(THREADS)]
SLOW_MODE = 1.25


def variant(binary: str, schedule: str, wait: str) -> tuple[str, str, list[str], dict]:
    """(label, binary, options, environment) of one schedule under one wait: the pthreads kernels take
    --wait-policy spin|sleep, OpenMP reads OMP_WAIT_POLICY active|passive."""
    model = binary.rsplit("-", 1)[1]
    options, env = ["--schedule", schedule], {}
    if model == "pthreads":
        options += ["--wait-policy", wait]
    else:
        env = {"OMP_WAIT_POLICY": wait}
    return f"{model} {schedule} {wait}", binary, options, env


# (spinning, sleeping) per schedule
PAIRS = [
    (variant(binary, schedule, spinning), variant(binary, schedule, sleeping))
    for binary, spinning, sleeping, schedules in (
        ("mandelbrot-c-pthreads", "spin", "sleep", ["block", "cyclic"]),
        ("mandelbrot-c-omp", "active", "passive", ["static", "static,1"]),
    )
    for schedule in schedules
]


def walls(binary: str, options: list[str], env: dict, reps: int) -> list[float]:
    command = [str(BIN / binary), *IMAGE, *options, "--warmup", "2", "--reps", str(reps)]
    pinned = {**os.environ, **env, "SB_PIN_CPUS": ",".join(str(c) for c in range(THREADS))}
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600, env=pinned).stdout
    return [r["wall_s"] for r in map(json.loads, out.splitlines()) if not r["warmup"]]


def summary(times: list[float]) -> tuple[float, float, float, float]:
    """Median, 10th and 90th percentiles, and the share of repetitions in the slow mode."""
    deciles = statistics.quantiles(times, n=10)
    slow = sum(t > SLOW_MODE * min(times) for t in times) / len(times)
    return statistics.median(times), deciles[0], deciles[-1], slow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5, help="alternating trials (default 5)")
    parser.add_argument("--reps", type=int, default=15, help="repetitions per trial (default 15)")
    args = parser.parse_args()
    variants = [v for pair in PAIRS for v in pair]
    times: dict[str, list[float]] = {label: [] for label, *_ in variants}
    print(f"load average before: {os.getloadavg()[0]:.2f} (quote figures only from a quiet machine)")
    for _ in range(args.trials):  # alternating: drift in the machine's load hits every variant alike
        for label, binary, options, env in variants:
            times[label] += walls(binary, options, env, args.reps)
    print(f"{'variant':22} {'median s':>9} {'p10 s':>9} {'p90 s':>9} {'slow mode':>10}")
    for label, *_ in variants:
        median, p10, p90, slow = summary(times[label])
        print(f"{label:22} {median:9.4f} {p10:9.4f} {p90:9.4f} {slow:9.0%}")
    for spinning, sleeping in PAIRS:
        ratio = statistics.median(times[sleeping[0]]) / statistics.median(times[spinning[0]])
        print(f"{sleeping[0]} / {spinning[0]}: {ratio:.3f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
