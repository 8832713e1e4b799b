"""Pairs measured microseconds apart against pairs of processes: does alternating two kernels'
repetitions (the harness's --turns) buy the precision a paired ratio needs on this host?

Two comparisons, each measured by every design in the same rounds (one pair of each design per round,
the designs' order shuffled per round, so the host's phases reach them alike):
- one CPU: A = mcpi-c-serial, B = mcpi-f-serial (the same samples; the language ratio B/A), both on
  CPU 0;
- two CPUs: the serial baseline against mcpi-c-omp on 2 threads (`static` split, CPUs 0 and 1): the
  speedup.
Designs:
- `processes`: what the trials do today: each side a process of its own, 1 warm-up and 1 repetition,
  one after the other (the second's repetition starts a process start and a warm-up after the first's);
- `turns`: both sides are processes started once that take turns through --turns (kernels/common/
  sb_turns.h): the second's repetition starts microseconds after the first's ends; sides in a random
  order per pair;
- `turns, both CPUs` (two CPUs only): the serial baseline on CPU 0 and on CPU 1 at once, then the
  2-thread case; the baseline's time is the slower of the two (the static split waits for its slower
  CPU; perf/perf_pairing_designs.py shows why on the noise traces); and the same baseline before
  mcpi-c-omp `dynamic,16`, combined as the two CPUs' summed speed (2 / (1/t0 + 1/t1)): a dynamic
  schedule lets the faster CPU take more.
Printed per comparison and design: pairs, the median ratio with the analysis's bootstrap 95 % CI over
pairs (analysis/stats/paired.py), its half-width, and the median time from the end of the first
side's repetition to the start of the second's. Asserts nothing (tests/test_perf_alternating.py tests
the conductor). Run it on a quiet machine:

    .venv/bin/python perf/perf_alternating.py [--pairs 24] [--samples 40000000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.paired import bootstrap_over_trials  # noqa: E402
from jobs.seed_platform import cpu  # noqa: E402
from sbcore.install import bin_dir  # noqa: E402

# Passive: an OpenMP team spinning between its repetitions would take the CPUs from the other side's
# turn (libgomp's active policy spins without end).
DESIGNS = (
    "lang processes",
    "lang turns",
    "speedup processes",
    "speedup turns",
    "speedup both",
    "speedup both, dynamic",
)
OMP_ENV = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_WAIT_POLICY": "passive"}


class TurnTaker:
    """One kernel process taking turns: `go()` lets it measure one repetition, `done()` waits for it.
    Its records go to a file (a pipe could fill while it waits for its turn)."""

    def __init__(self, argv: list[str], cpus: str, env: dict | None, out_dir: Path, name: str):
        go_r, self._go = os.pipe()
        self._done, done_w = os.pipe()
        self.out = out_dir / f"{name}.jsonl"
        with open(self.out, "wb") as stdout:
            self.proc = subprocess.Popen(
                ["taskset", "-c", cpus, *argv, "--turns", f"{go_r},{done_w}"],
                stdout=stdout,
                pass_fds=(go_r, done_w),
                env={**os.environ, **(env or {})},
            )
        os.close(go_r)
        os.close(done_w)

    def go(self) -> float:
        os.write(self._go, b"g")
        return time.perf_counter()

    def done(self) -> float:
        if os.read(self._done, 1) != b"d":
            raise RuntimeError(f"{self.out.stem}: ended before its turn was done")
        return time.perf_counter()

    def close(self) -> list[dict]:
        """Its measured records, in order, once it exits."""
        os.close(self._go)
        os.close(self._done)
        if self.proc.wait(timeout=60) != 0:
            raise RuntimeError(f"{self.out.stem}: exit status {self.proc.returncode}")
        records = [json.loads(line) for line in self.out.read_text().splitlines() if line.strip()]
        return [r for r in records if not r.get("warmup")]


def one_process(argv: list[str], cpus: str, env: dict | None) -> dict:
    """One process of 1 warm-up and 1 repetition: its measured record."""
    out = subprocess.run(
        ["taskset", "-c", cpus, *argv, "--warmup", "1", "--reps", "1"],
        capture_output=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()][-1]


def interval(ratios: list[float], rng: np.random.Generator) -> tuple[float, float, float]:
    values = np.asarray(ratios)
    median = float(np.median(values))
    low, high = bootstrap_over_trials(values, rng, 2000)
    return median, low, high


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--samples", type=int, default=40_000_000, help="π samples of a repetition")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    if (os.cpu_count() or 1) < 2:
        print("perf_alternating: skipped: needs 2 CPUs")
        return 0
    binaries = bin_dir()
    work = ["--samples", str(args.samples), "--seed", "7"]
    serial_c = [str(binaries / "mcpi-c-serial"), *work]
    serial_f = [str(binaries / "mcpi-f-serial"), *work]
    parallel = [str(binaries / "mcpi-c-omp"), *work, "--threads", "2", "--schedule", "static"]
    dynamic = [str(binaries / "mcpi-c-omp"), *work, "--threads", "2", "--schedule", "dynamic,16"]
    shuffle = random.Random(args.seed)
    load_before = os.getloadavg()[0]
    ratios: dict[str, list[float]] = {}
    gaps: dict[str, list[float]] = {}

    def add(design: str, ratio: float, gap: float) -> None:
        ratios.setdefault(design, []).append(ratio)
        gaps.setdefault(design, []).append(gap)

    with tempfile.TemporaryDirectory(prefix="perf_alternating-") as tmp:
        out = Path(tmp)
        reps = ["--warmup", "1", "--reps", str(args.pairs)]
        lang_a = TurnTaker([*serial_c, *reps], "0", None, out, "lang-c")
        lang_b = TurnTaker([*serial_f, *reps], "0", None, out, "lang-f")
        base0 = TurnTaker([*serial_c, *reps], "0", None, out, "base-cpu0")
        twice = ["--warmup", "1", "--reps", str(2 * args.pairs)]  # before the static and the dynamic case
        base0_both = TurnTaker([*serial_c, *twice], "0", None, out, "both-cpu0")
        base1_both = TurnTaker([*serial_c, *twice], "1", None, out, "both-cpu1")
        member = TurnTaker(
            [*parallel, "--warmup", "1", "--reps", str(2 * args.pairs)], "0,1", OMP_ENV, out, "omp"
        )
        member_dynamic = TurnTaker([*dynamic, *reps], "0,1", OMP_ENV, out, "omp-dynamic")
        takers = [lang_a, lang_b, base0, base0_both, base1_both, member, member_dynamic]
        for taker in takers:  # the warm-ups, one at a time
            taker.go()
            taker.done()
        member_order: list[str] = []  # the design each of the member's repetitions was measured for

        both_order: list[str] = []  # the design each of the both-CPU baseline's repetitions was for

        def speedup_turn(design: str, baselines: list[TurnTaker], case: TurnTaker) -> None:
            for taker in baselines:
                taker.go()
            end = max(taker.done() for taker in baselines)
            gaps.setdefault(design, []).append(case.go() - end)
            if case is member:
                member_order.append(design)
            if len(baselines) > 1:
                both_order.append(design)
            case.done()

        for _ in range(args.pairs):
            designs = list(DESIGNS)
            shuffle.shuffle(designs)
            for design in designs:
                if design == "lang processes":
                    fortran_first = shuffle.random() < 0.5
                    first = one_process(serial_f if fortran_first else serial_c, "0", None)
                    second = one_process(serial_c if fortran_first else serial_f, "0", None)
                    f_rec, c_rec = (first, second) if fortran_first else (second, first)
                    add(design, f_rec["wall_s"] / c_rec["wall_s"], float("nan"))
                elif design == "lang turns":
                    first, second = shuffle.sample([lang_a, lang_b], 2)
                    first.go()
                    end = first.done()
                    gaps.setdefault(design, []).append(second.go() - end)
                    second.done()
                elif design == "speedup processes":
                    base = one_process(serial_c, "0", None)
                    case = one_process(parallel, "0,1", OMP_ENV)
                    add(design, base["wall_s"] / case["wall_s"], float("nan"))
                elif design == "speedup turns":
                    speedup_turn(design, [base0], member)
                elif design == "speedup both":
                    speedup_turn(design, [base0_both, base1_both], member)
                else:
                    speedup_turn(design, [base0_both, base1_both], member_dynamic)
        records = {t.out.stem: t.close() for t in takers}

    # Turns: the k-th repetitions of the two sides form the k-th pair (each side measures once a round).
    c, f = records["lang-c"], records["lang-f"]
    ratios["lang turns"] = [rf["wall_s"] / rc["wall_s"] for rc, rf in zip(c, f, strict=True)]
    by_design = {
        d: [r["wall_s"] for r, o in zip(records["omp"], member_order, strict=True) if o == d]
        for d in set(member_order)
    }
    base = [r["wall_s"] for r in records["base-cpu0"]]
    ratios["speedup turns"] = [b / m for b, m in zip(base, by_design["speedup turns"], strict=True)]
    both = list(zip(records["both-cpu0"], records["both-cpu1"], strict=True))
    # the static split waits for the slower CPU; the dynamic schedule gets the two CPUs' summed speed
    slower = [
        max(a["wall_s"], b["wall_s"])
        for (a, b), o in zip(both, both_order, strict=True)
        if o == "speedup both"
    ]
    ratios["speedup both"] = [b / m for b, m in zip(slower, by_design["speedup both"], strict=True)]
    capacity = [
        2 / (1 / a["wall_s"] + 1 / b["wall_s"])
        for (a, b), o in zip(both, both_order, strict=True)
        if o == "speedup both, dynamic"
    ]
    dynamic_times = [r["wall_s"] for r in records["omp-dynamic"]]
    ratios["speedup both, dynamic"] = [b / m for b, m in zip(capacity, dynamic_times, strict=True)]

    facts = cpu(Path("/proc/cpuinfo").read_text())
    host = f"{facts['model']}, {facts['family_model']}"
    print(
        f"perf_alternating: {args.pairs} pairs per design, π {args.samples} samples per repetition; {host}; "
        f"load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    rng = np.random.default_rng(args.seed)
    labels = {
        "lang processes": "one CPU, Fortran/C: processes (today)",
        "lang turns": "one CPU, Fortran/C: turns",
        "speedup processes": "two CPUs, speedup: processes (today)",
        "speedup turns": "two CPUs, speedup: turns, baseline on CPU 0",
        "speedup both": "two CPUs, speedup: turns, baseline on both CPUs",
        "speedup both, dynamic": "two CPUs, dynamic,16: turns, baseline on both",
    }
    for design, label in labels.items():
        median, low, high = interval(ratios[design], rng)
        halfwidth = max(median - low, high - median) / median
        gap = np.nanmedian(gaps[design]) if not np.all(np.isnan(gaps[design])) else float("nan")
        gap_text = f"{gap * 1e6:8.0f} us" if np.isfinite(gap) else "  process start + warm-up"
        print(f"  {label:48s} {median:.4f} [{low:.4f}-{high:.4f}]  +-{halfwidth:5.1%}  gap {gap_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
