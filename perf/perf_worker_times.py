"""What the per-worker measurements cost: the C kernels built as usual and built with them compiled
out (-DSB_WORKER_TIMES=0, into build/perf-worker-times-off/), run alternately, trial by trial, on
repetitions of about 0.1 s; prints the median wall time per repetition of each and the overhead in %
against the aim (at most 1 % of a 0.1 s repetition), also for --batch 1 pi with a coarse lock
(every batch takes the one mutex), and the quartiles of the per-trial overheads (each trial's median
on / median off - 1): where they straddle the aim the machine is too noisy to tell. The same pi case
on one worker shows the lock mechanism's own cost (the lock is never contended); on two workers its
time also depends on how often the lock's hand-off goes through the kernel (futex sleeps), which
swings between trials of either build: the voluntary context switches per repetition (median) of
each build are printed beside it. With the fine lock (each worker its own) the sampled path runs on
every acquisition at two workers without such a regime: the direct figure of its cost where nothing
hides it. The workers are pinned to CPUs 0..threads-1 (SB_PIN_CPUS) so both
builds run on the same placement. --kernel-arg and --env pass options and variables to every run of
both builds (e.g. a wait policy).

Where workers take a lock per sample, two figures bound the measurements' cost independently of the
hand-off regime. "matched": on against off compared only between repetitions of the same regime (the same
state of the host's placement of the CPUs, near or apart as the probe's cache-line round trip tells,
and their voluntary context switches in the same octave: 0, 1, 2-3, 4-7, ...), the median ratio of each
regime both builds reached at least 3 times, weighted by the smaller count. "bound": the sampled lock
path's own cost, measured on one thread where it is stable (build/perf/lock-path-cost,
perf/lock_path_cost.c) per acquisition of a kernel's lock and per range of the queue (its fetch under
the coarse lock and the range's one kernel lock), times the case's acquisitions and ranges, plus two
clock reads per timed acquisition (the one before the wait and the one inside the critical section,
which lengthens what the other workers wait for), over the build without measurements' repetition
time:

    bound = ((A - 2 R) x max(0, sampled - plain) + R x max(0, queue sampled - queue plain)
             + T x 2 x clock) / W_off,  T = p x first + A / every

with A the acquisitions per repetition over all workers, R the ranges taken from the queue under its
lock, p the workers, first and every the sampling's constants (sb_lock_sample.h). It counts every
added nanosecond as if it lay on the critical path (the lock serialising everything) and every timed
acquisition as contended: an upper bound on the direct cost, not on a change of hand-off regime that
the added nanoseconds may trigger. Prints, asserts nothing; run it on a quiet machine.

Run: .venv/bin/python perf/perf_worker_times.py [--trials N] [--reps K] [--kernel-arg=--opt=value]
     [--env NAME=VALUE] [--only TEXT]   (or `make perf`)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.disturbance import TRANSFER_SLOW_RATIO  # noqa: E402

ON = ROOT / "build" / "bin"
OFF_DIR = ROOT / "build" / "perf-worker-times-off"
LOCK_PATH_COST = Path("build") / "perf" / "lock-path-cost"
AIM = 0.01
MANDELBROT = ["--preset", "asymmetric", "--width", "384", "--height", "384", "--max-iter", "1000"]
PI_SAMPLES = 4_000_000
# ~0.1 s per repetition on two workers, as the others (each worker takes its own lock: faster)
PI_FINE_SAMPLES = 14_000_000


def pi(samples: int, sync: str, schedule: str | None = None) -> list[str]:
    """The options of --batch 1 pi (one lock per sample with a lock)."""
    return [
        "--samples",
        str(samples),
        "--sync",
        sync,
        *(["--schedule", schedule] if schedule else []),
        "--batch",
        "1",
    ]


MANDELBROT_PIXELS, MANDELBROT_ROWS = 384 * 384, 384


class Case(NamedTuple):
    binary: str
    options: list[str]
    workers: int | None  # None = --threads
    locks: int  # acquisitions through the sampled lock path per repetition, all workers; 0 = none
    ranges: int = 0  # of them, ranges fetched under the queue's lock (each with one kernel lock)
    contended: bool = True  # workers share the locks: the bound applies (timed ones read the clock)


CASES = [
    Case("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static"], None, 0),
    Case("mandelbrot-c-omp", [*MANDELBROT, "--schedule", "static,1"], None, 0),
    Case("mandelbrot-c-pthreads", [*MANDELBROT, "--schedule", "cyclic", "--sync", "none"], None, 0),
    # a lock per pixel, and one per row taken from the queue
    Case(
        "mandelbrot-c-pthreads",
        [*MANDELBROT, "--schedule", "queue", "--sync", "coarse"],
        None,
        MANDELBROT_PIXELS + MANDELBROT_ROWS,
        MANDELBROT_ROWS,
    ),
    Case("mcpi-c-omp", pi(PI_SAMPLES, "critical"), None, 0),
    Case("mcpi-c-pthreads", pi(PI_SAMPLES, "coarse", "block"), 1, PI_SAMPLES),
    Case("mcpi-c-pthreads", pi(PI_SAMPLES, "coarse", "block"), None, PI_SAMPLES),
    # a lock per batch taken from the queue, one per batch's hits
    Case("mcpi-c-pthreads", pi(PI_SAMPLES, "coarse", "queue"), None, 2 * PI_SAMPLES, PI_SAMPLES),
    # a lock per sample that nobody else takes (each worker its own slot's): the sampled path on
    # every acquisition, at two workers, without a hand-off regime to swing between; its timed
    # acquisitions' trylocks succeed and read no clock, so the direct figure is the measure
    Case("mcpi-c-pthreads", pi(PI_FINE_SAMPLES, "fine", "block"), None, PI_FINE_SAMPLES, contended=False),
]
MATCHED_MIN = 3  # repetitions of each build a regime needs to be compared


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


def lock_path_cost() -> dict:
    """build/perf/lock-path-cost's figures: ns per plain and per sampled acquisition, per plain and
    per sampled queue range, and per clock read."""
    subprocess.run(["make", "-s", str(LOCK_PATH_COST)], cwd=ROOT, check=True)
    out = subprocess.run(
        [str(ROOT / LOCK_PATH_COST)], capture_output=True, text=True, check=True, timeout=600
    )
    return json.loads(out.stdout)


def lock_bound(cost: dict, case: Case, workers: int, wall_off: float) -> tuple[float, str]:
    """The upper bound on the sampled lock's direct cost per repetition, as a fraction of wall_off,
    and its terms (the module's docstring derives it)."""
    per_lock_s = max(0.0, cost["sampled_ns"] - cost["plain_ns"]) * 1e-9
    per_range_s = max(0.0, cost["queue_sampled_ns"] - cost["queue_plain_ns"]) * 1e-9
    kernel_locks = case.locks - 2 * case.ranges
    timed = workers * cost["timed_first"] + case.locks / cost["sample_every"]
    clock_s = 2 * cost["clock_ns"] * 1e-9
    added = kernel_locks * per_lock_s + case.ranges * per_range_s + timed * clock_s
    terms = (
        f"({kernel_locks} x {per_lock_s * 1e9:.2f} ns + {case.ranges} x {per_range_s * 1e9:.2f} ns"
        f" + {timed:.0f} x {clock_s * 1e9:.1f} ns) / {wall_off:.4f} s"
    )
    return added / wall_off, terms


def round_trip(record: dict) -> float | None:
    """The slower of the cache-line round trips the probe timed before and after the repetition
    (between worker 0's CPU and each other's), None where none was timed."""
    probe = record.get("probe") or {}
    timed = [
        x
        for side in ("before", "after")
        for x in ((probe.get(side) or {}).get("xfer_s") or [])
        if x is not None
    ]
    return max(timed) if timed else None


def regime(switches: int, apart: bool = False) -> tuple[bool, int]:
    """A repetition's hand-off regime: whether the host had its CPUs apart (a slow cache-line
    transfer, analysis/stats/disturbance.py's rule) and the octave of its voluntary context switches
    (0, 1, 2-3, 4-7, ... -> 0, 1, 2, 3, ...)."""
    return apart, switches.bit_length()


def matched_overhead(on: list[dict], off: list[dict]) -> tuple[float, int] | None:
    """on/off - 1 within the hand-off regimes both builds reached MATCHED_MIN times: each regime's
    median ratio, weighted by its smaller count; and the repetitions compared. None: no such regime.
    A repetition is apart when its round trip exceeds TRANSFER_SLOW_RATIO times the least of both
    builds' (the CPUs' near state)."""
    trips = {id(record): round_trip(record) for record in on + off}
    timed = [t for t in trips.values() if t is not None]
    near = min(timed) if timed else None
    by_regime = {}
    for build, records in (("on", on), ("off", off)):
        for record in records:
            trip = trips[id(record)]
            apart = near is not None and trip is not None and trip > TRANSFER_SLOW_RATIO * near
            key = regime(record["ctx_voluntary"], apart)
            by_regime.setdefault(key, {"on": [], "off": []})[build].append(record["wall_s"])
    ratios, weights = [], []
    for walls_of in by_regime.values():
        weight = min(len(walls_of["on"]), len(walls_of["off"]))
        if weight >= MATCHED_MIN:
            ratios.append(statistics.median(walls_of["on"]) / statistics.median(walls_of["off"]) - 1)
            weights.append(weight)
    if not weights:
        return None
    return sum(r * w for r, w in zip(ratios, weights, strict=True)) / sum(weights), 2 * sum(weights)


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
    parser.add_argument(
        "--only",
        default="",
        help="run only the cases whose binary and options contain this text (e.g. 'mcpi-c-pthreads')",
    )
    args = parser.parse_args()
    env = dict(args.env)
    cases = [case for case in CASES if args.only in " ".join([case.binary, *case.options])]
    if not cases:
        parser.error(f"--only {args.only!r}: no case's binary and options contain it")
    off = build_off()
    lock_cost = lock_path_cost()
    print(f"load average before: {os.getloadavg()[0]:.2f} (quote figures only from a quiet machine)")
    if args.kernel_arg or env:
        print(f"every run: {' '.join(args.kernel_arg)} {' '.join(f'{k}={v}' for k, v in env.items())}")
    print(
        f"{'binary':24} {'options':50} {'p':>2} {'on s':>9} {'off s':>9} {'overhead':>9}"
        f" {'trials q1..q3':>17} {'csw on/off':>11} {'matched':>15}"
    )
    bounds = []
    for case in cases:
        threads = case.workers or args.threads
        records = {"on": [], "off": []}
        per_trial = []
        for _ in range(args.trials):  # alternating: drift in the machine's load hits both alike
            trial = {}
            for build, directory in (("on", ON), ("off", off)):
                command = [*case.options, *args.kernel_arg]
                trial[build] = walls(directory / case.binary, command, threads, args.reps, env)
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
        matched = matched_overhead(records["on"], records["off"])
        matched_text = f"{matched[0]:+.2%} ({matched[1]})" if matched else "no common"
        shown = " ".join(case.options[-6:])
        print(
            f"{case.binary:24} {shown:50} {threads:2} {on:9.4f} {cost:9.4f} {overhead:+8.2%} {spread:>17}"
            f" {switches:>11} {matched_text:>15} {verdict}"
        )
        if case.locks and case.contended and threads > 1:
            bounds.append((case, threads, *lock_bound(lock_cost, case, threads, cost)))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if bounds:
        print(
            f"sampled lock path on one thread: {lock_cost['sampled_ns']:.2f} ns per acquisition against"
            f" {lock_cost['plain_ns']:.2f} ns plain, {lock_cost['queue_sampled_ns']:.2f} ns per queue"
            f" range against {lock_cost['queue_plain_ns']:.2f} ns, clock read {lock_cost['clock_ns']:.2f}"
            f" ns (least of {lock_cost['rounds']} rounds of {lock_cost['acquisitions']})"
        )
        print(
            "bound = ((A - 2R) x (sampled - plain) + R x (queue sampled - queue plain) + T x 2 x clock)"
            " / W_off, T = p x first + A / every, differences below 0 counted as 0:"
        )
        for case, threads, bound, terms in bounds:
            verdict = "ok" if bound <= AIM else f"above the {AIM:.0%} aim"
            shown = " ".join(case.options[-6:])
            print(f"{case.binary:24} {shown:50} {threads:2} {bound:+8.2%} = {terms} {verdict}")


if __name__ == "__main__":
    main()
