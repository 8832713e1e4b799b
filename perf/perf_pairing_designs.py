"""Which pairing of a 2-worker case with its serial baseline can reach +-2 % on a host with real slow
phases: the designs side by side on the simulated host that replays the shared noise traces.

The host is tests/jobs/sampling_fake/trace_host.py (each vCPU's speed over time, from a trace of
back-to-back repetitions on both CPUs of a shared 2-vCPU guest: the shared `noise/` directory beside
the clone, or --trace-dir). No process runs: a repetition of work T takes T times the CPU's mean
slowdown over it, so every figure is deterministic (seeded) and does not depend on this machine.

A comparison is `--trials` trials, one every `--trial-gap-s` seconds (what a comparison family's trial
takes); in each, the baseline (work T on one CPU, or on each of the case's CPUs at once) and then the
2-worker case (T/2 per CPU), `gap` seconds later. The case splits its work statically (it waits for
the slower CPU) or dynamically (the faster CPU takes more). The baseline's time is
- `cpu0`: the serial process on the case's first CPU (what the trials measure today);
- `slower`: a serial process on each of the case's CPUs at once, the slower of the two;
- `capacity`: the same two, combined as the time the two CPUs' summed speed gives (2T / (1/t0 + 1/t1)).
The paired speedup is the median over trials of baseline / case time with the analysis's percentile
bootstrap over trials (analysis/stats/paired.py); a comparison is within +-2 % when that CI's half-width
is. Printed per trace, case, baseline and gap: the share of `--comparisons` comparisons (each at a
random moment of the trace) within +-2 %, the median half-width, and the median and 5-95 % range of the
estimates (a baseline that does not fit the case's schedule is biased: a perfect case is not at 2).

Run: .venv/bin/python perf/perf_pairing_designs.py [--trials 24] [--comparisons 120]
[--gaps 0.015,1.5] [--trace-dir DIR]   (or `make perf`; skipped with a line where the traces are absent)
"""

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.paired import bootstrap_over_trials  # noqa: E402
from tests.jobs.sampling_fake.trace_host import TraceHost  # noqa: E402

PRECISE = 0.02
TRUE_S = 0.1  # the serial repetition's time at the median speed, as make bench's ~0.1 s repetitions
RESAMPLES = 400


def case_time(host: TraceHost, schedule: str, t: float) -> float:
    """The 2-worker case started at t: work T/2 per CPU (static: the slower CPU ends it) or shared by
    speed (dynamic)."""
    half = TRUE_S / 2
    f0, f1 = host.mean_factor(0, t, half), host.mean_factor(1, t, half)
    return half * max(f0, f1) if schedule == "static" else TRUE_S / (1 / f0 + 1 / f1)


def baseline_time(host: TraceHost, baseline: str, t: float) -> float:
    t0 = TRUE_S * host.mean_factor(0, t, TRUE_S)
    if baseline == "cpu0":
        return t0
    t1 = TRUE_S * host.mean_factor(1, t, TRUE_S)
    return max(t0, t1) if baseline == "slower" else 2 / (1 / t0 + 1 / t1)


def comparison(host, schedule, baseline, gap, start, trials, trial_gap, rng) -> tuple[float, float]:
    """(median paired speedup, CI half-width over it) of one comparison starting at `start`."""
    ratios = []
    for i in range(trials):
        t = start + i * trial_gap
        ratios.append(baseline_time(host, baseline, t) / case_time(host, schedule, t + TRUE_S + gap))
    ratios = np.asarray(ratios)
    median = float(np.median(ratios))
    low, high = bootstrap_over_trials(ratios, rng, RESAMPLES)
    return median, max(median - low, high - median) / median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace-dir", type=Path, default=ROOT.parent / "shared" / "noise")
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--comparisons", type=int, default=120)
    parser.add_argument("--trial-gap-s", type=float, default=2.0)
    parser.add_argument(
        "--gaps", default="0.015,1.5", help="seconds between baseline and case, comma-separated"
    )
    args = parser.parse_args()
    traces = sorted(args.trace_dir.glob("*.csv")) if args.trace_dir.is_dir() else []
    if not traces:
        print(f"perf_pairing_designs: skipped: no noise traces in {args.trace_dir}")
        return 0
    gaps = [float(g) for g in args.gaps.split(",")]
    print(
        f"perf_pairing_designs: {len(traces)} traces, {args.comparisons} comparisons of {args.trials} trials "
        f"{args.trial_gap_s:g} s apart, repetitions of {TRUE_S:g} s (simulated: no process runs)"
    )
    print(
        f"{'trace':40s} {'case':8s} {'baseline':9s} {'gap s':>6s}  within +-2 %  median hw  estimate [5-95 %]"
    )
    for path in traces:
        host = TraceHost(path)
        for schedule in ("static", "dynamic"):
            for baseline in ("cpu0", "slower", "capacity"):
                for gap in gaps:
                    rng = np.random.default_rng(7)  # the same moments for every design
                    starts = rng.uniform(0, host.length, args.comparisons)
                    found = [
                        comparison(host, schedule, baseline, gap, s, args.trials, args.trial_gap_s, rng)
                        for s in starts
                    ]
                    medians = np.array([m for m, _ in found])
                    widths = np.array([w for _, w in found])
                    within = float(np.mean(widths <= PRECISE))
                    low, high = np.percentile(medians, [5, 95])
                    print(
                        f"{path.stem:40s} {schedule:8s} {baseline:9s} {gap:6.3f}  {within:11.0%}  "
                        f"{np.median(widths):8.1%}  {np.median(medians):.3f} [{low:.3f}-{high:.3f}]"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
