"""Duet against trials for single-threaded comparisons, side by side on this machine.

Duet benchmarking (Bulej et al., ICPE 2020) runs the two alternatives at the same time, one per CPU, so
that whatever slows the host slows both in the same instant; a trial runs them back to back on one CPU.
Our vCPUs share execution units with another tenant, and the two duet halves share the host's caches,
memory and clock with each other: a duet also measures that contention. This benchmark says which wins
here, for three single-threaded pairs of equal length: C against Fortran serial Mandelbrot, C serial
against OpenMP at one thread (Monte-Carlo pi), and an A/A pair (the C serial pi kernel against itself).

Per repeat (`--repeats`, alternating which mode goes first) and pair: `--trials` kernel processes of each
alternative as trials (back to back on CPU 0, in a random order) and as duets (both at once, on CPUs 0
and 1), one repetition after one warm-up each, pinned by the harness (SB_PIN_CPUS). The whole
benchmark is one measurement for the host's measurement lock (jobs/measure_lock.py).

Prints per mode and pair: the median over repeats of the ratio's median (b's time over a's within a
trial or duet) and of its 95 % CI half-width (bootstrap over trials), and for the A/A pair how many
repeats' CIs exclude 1 (false differences); the load average beside. Asserts nothing.

Budget: 3 pairs x 2 modes x 12 trials x 2 processes x (2 runs of ~80 ms + ~10 ms) = ~25 s per repeat,
~2 minutes for the default 5 repeats on a quiet 2-core VM.

Run: .venv/bin/python perf/perf_duet.py [--repeats N] [--trials T]   (or `make perf`)
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.paired import median_ci  # noqa: E402
from jobs.measure_lock import measuring  # noqa: E402
from jobs.pinning import HARNESS_ENV  # noqa: E402

BIN = ROOT / "build" / "bin"
MANDELBROT = ["--preset", "asymmetric", "--width", "256", "--height", "256", "--max-iter", "1000"]
PI = ["--samples", "40000000", "--seed", "1", "--batch", "64"]
PAIRS = {  # name: (a, b), each a command after build/bin/
    "mandelbrot C vs Fortran serial": (
        ["mandelbrot-c-serial", *MANDELBROT],
        ["mandelbrot-f-serial", *MANDELBROT],
    ),
    "pi C serial vs OpenMP 1 thread": (
        ["mcpi-c-serial", *PI],
        ["mcpi-c-omp", "--threads", "1", "--schedule", "static", "--sync", "reduction", *PI],
    ),
    "A/A: pi C serial twice": (["mcpi-c-serial", *PI], ["mcpi-c-serial", *PI]),
}


def start(command: list[str], cpu: int) -> subprocess.Popen:
    env = dict(os.environ, OMP_PROC_BIND="false", **{HARNESS_ENV: str(cpu)})
    argv = [str(BIN / command[0]), *command[1:], "--reps", "1", "--warmup", "1"]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def wall(process: subprocess.Popen) -> float:
    out, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"perf_duet: {process.args[0]} exited {process.returncode}")
    return next(r["wall_s"] for r in map(json.loads, out.splitlines()) if not r.get("warmup"))


def trial_ratio(a: list[str], b: list[str], rng: random.Random) -> float:
    """b's time over a's, back to back on CPU 0 in a random order."""
    order = [("a", a), ("b", b)]
    rng.shuffle(order)
    times = {name: wall(start(command, 0)) for name, command in order}
    return times["b"] / times["a"]


def duet_ratio(a: list[str], b: list[str], rng: random.Random) -> float:
    """b's time over a's, both at once on CPUs 0 and 1 (which on which at random)."""
    cpus = rng.sample([0, 1], 2)
    pa, pb = start(a, cpus[0]), start(b, cpus[1])
    return wall(pb) / wall(pa)


def summary(ratios: list[float], rng: np.random.Generator) -> tuple[float, float, float, float]:
    r = np.asarray(ratios)
    low, high = median_ci(r, rng, 2000)
    median = float(np.median(r))
    return median, low, high, (high - low) / 2 / median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeats of both modes (default 5)")
    parser.add_argument("--trials", type=int, default=12, help="trials (duets) per pair, mode (default 12)")
    args = parser.parse_args()
    rng, nrng = random.Random(11), np.random.default_rng(12)
    found: dict[tuple[str, str], list] = {}
    started = time.monotonic()
    with measuring():
        for r in range(args.repeats):
            modes = [("trials", trial_ratio), ("duet", duet_ratio)]
            if r % 2:
                modes.reverse()
            print(f"  repeat {r + 1}/{args.repeats}", file=sys.stderr, flush=True)
            for mode, ratio in modes:
                for name, (a, b) in PAIRS.items():
                    ratios = [ratio(a, b, rng) for _ in range(args.trials)]
                    found.setdefault((mode, name), []).append(summary(ratios, nrng))
    load = os.getloadavg()
    print(
        f"perf_duet: {args.repeats} repeats x {args.trials} trials/duets per pair and mode, "
        f"{time.monotonic() - started:.0f} s, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    for (mode, name), rows in found.items():
        medians, lows, highs, widths = (np.array(x) for x in zip(*rows, strict=True))
        false = int(((lows > 1) | (highs < 1)).sum())
        aa = f", CI excludes 1 in {false} of {len(rows)} repeats" if name.startswith("A/A") else ""
        print(
            f"  {mode:6s} {name:32s}: b/a {np.median(medians):.3f} (repeats {medians.min():.3f}-"
            f"{medians.max():.3f}), median CI half-width {100 * np.median(widths):.2f} %{aa}"
        )


if __name__ == "__main__":
    main()
