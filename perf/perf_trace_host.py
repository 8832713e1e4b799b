"""The paired trials on a simulated host that replays real noise traces: how many of a family's paired
comparisons reach +-2 % where the host's slow phases are those of a traced guest, not this machine's.

The host: tests/jobs/sampling_fake/trace_host.py replays a trace of back-to-back repetitions on each
CPU of a shared 2-vCPU guest (the shared `noise/` directory beside the clone, or --trace-dir); the
kernels are the stand-in tests/jobs/sampling_fake/fake_kernel_trace.py, whose repetitions take their
true time times the trace's slowdown at the moment they run (a virtual clock: deterministic, and the
figures do not depend on this machine's load). The campaign goes through the real runner and the
real analysis: one comparison family shaped like `make bench`'s pi family (a serial baseline; OpenMP
static and dynamic at 1 and 2 threads; pthreads block and cyclic at 1 and 2 threads: 8 speedups and
4 variant ratios), `--trials` processes per case, each 1 warm-up and 1 repetition of --true-s.

Prints per trace and design the comparisons within +-2 % (the precision target `make bench` counts),
the median CI half-width of the paired estimate, the same two from the same records with no ratio
left out as taken across a change of the host's phase (sbcore/slow_phase.py: what that rule buys),
the trials it left out, and the simulated and the real campaign time.
Designs: `today` (baseline_every 8, the experiments' default) and with --designs also `adjacent`
(baseline_every 1: the baseline beside every member). Asserts nothing: tests/jobs/test_trace_host.py
tests the host.

Run: .venv/bin/python perf/perf_trace_host.py [--trials 24] [--designs today,adjacent]
[--trace-dir DIR] [--true-s 0.1]   (or `make perf`; skipped with a line where the traces are absent)
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sbcore.slow_phase  # noqa: E402
from analysis.pipeline import Options, analyze  # noqa: E402

FAKE = ROOT / "tests" / "jobs" / "sampling_fake" / "fake_kernel_trace.py"
BINARIES = ("tracehost-py-serial", "tracehost-py-omp", "tracehost-py-pthreads")
DESIGNS = {"today": 8, "adjacent": 1}
PRECISE = 0.02

EXPERIMENT = """
description = "perf_trace_host: {design} on {trace_name}"
interleave = "family"
baseline_every = {every}
repetitions = {trials}
reps_per_process = 1
warmup = 1
seed = 11

[[sweep]]
binary = ["tracehost-py-serial"]
params = {{ trace = ["{trace}"], timeline = ["{timeline}"], true_s = [{true_s}], start_s = [{start_s}] }}

"""
PARALLEL = """
[[sweep]]
binary = ["tracehost-py-{model}"]
threads = [1, 2]
[sweep.params]
trace = ["{trace}"]
timeline = ["{timeline}"]
true_s = [{true_s}]
start_s = [{start_s}]
schedule = [{schedules}]
"""
SCHEDULES = {"omp": ("static", "dynamic"), "pthreads": ("block", "cyclic")}


def experiment(**fields) -> str:
    """The family: the serial baseline and each parallel model at 1 and 2 threads in two schedules."""
    text = EXPERIMENT.format(**fields)
    for model, schedules in SCHEDULES.items():
        listed = ", ".join(f'"{s}"' for s in schedules)
        text += PARALLEL.format(model=model, schedules=listed, **fields)
    return text


def run(tmp: Path, bin_dir: Path, name: str, text: str) -> Path:
    experiment = tmp / f"{name}.toml"
    experiment.write_text(text)
    subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), "run", str(experiment), "--results-dir", str(tmp)]
        + ["--name", name, "--no-progress"],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        # its own measurement lock: the simulated host's time is virtual, another measurer changes nothing
        env=os.environ | {"SCALEBENCH_BIN_DIR": str(bin_dir), "SCALEBENCH_MEASURE_LOCK": str(tmp / "lock")},
    )
    return tmp / name


def simulated_span(timeline: Path) -> float:
    return float(timeline.read_text().split()[1])


def figures(campaign: Path) -> dict:
    result = analyze(campaign, Options(n_resamples=400, seed=1))
    tables = (result.paired_speedup, result.paired_variant_ratio)
    half = np.concatenate([t["paired_together_halfwidth_rel"].to_numpy() for t in tables])
    return {
        "comparisons": len(half),
        "precise": int((half <= PRECISE).sum()),
        "median_halfwidth": float(np.nanmedian(half)) if len(half) else float("nan"),
        "across": int(sum(t["left_out_across_phase"].sum() for t in tables)),
    }


def figures_without_the_phase_rule(campaign: Path) -> dict:
    """figures() with no ratio left out as taken across a change of phase (the tolerance infinite)."""
    tolerance = sbcore.slow_phase.TOLERANCE
    sbcore.slow_phase.TOLERANCE = float("inf")
    try:
        return figures(campaign)
    finally:
        sbcore.slow_phase.TOLERANCE = tolerance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=int, default=24, help="processes per case (default 24, make bench's max)"
    )
    parser.add_argument("--designs", default="today", help="comma-separated: today, adjacent (default today)")
    parser.add_argument("--trace-dir", type=Path, default=ROOT.parent / "shared" / "noise")
    parser.add_argument("--true-s", type=float, default=0.1, help="a repetition's true time (default 0.1 s)")
    parser.add_argument("--start-s", type=float, default=0.0, help="where in the traces the campaign begins")
    args = parser.parse_args()
    traces = sorted(args.trace_dir.glob("*.csv")) if args.trace_dir.is_dir() else []
    if not traces:
        print(f"perf_trace_host: skipped: no noise traces in {args.trace_dir}")
        return
    designs = [d.strip() for d in args.designs.split(",") if d.strip()]
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise SystemExit(
            f"perf_trace_host: --designs {','.join(unknown)}: expected some of {', '.join(DESIGNS)}"
        )
    load = os.getloadavg()[0]
    print(
        f"perf_trace_host: {len(traces)} traces, {args.trials} trials of 1 warm-up + 1 repetition of "
        f"{args.true_s} s, load {load:.2f} (the figures do not depend on it: virtual clock)"
    )
    print(
        f"{'trace':36} {'design':9} {'within +-2 %':>13} {'median hw':>10} {'across':>7} "
        f"{'without the rule':>17} {'its hw':>7} {'sim. s':>7} {'real s':>7}"
    )
    with tempfile.TemporaryDirectory(prefix="perf_trace_host-") as tmp_name:
        tmp = Path(tmp_name)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name in BINARIES:
            (bin_dir / name).symlink_to(FAKE)
        for trace in traces:
            for design in designs:
                name = f"{trace.stem}-{design}"
                timeline = tmp / f"{name}.timeline"
                text = experiment(
                    design=design,
                    trace_name=trace.stem,
                    every=DESIGNS[design],
                    trials=args.trials,
                    trace=trace,
                    timeline=timeline,
                    true_s=args.true_s,
                    start_s=args.start_s,
                )
                began = time.monotonic()
                campaign = run(tmp, bin_dir, name, text)
                f, plain = figures(campaign), figures_without_the_phase_rule(campaign)
                print(
                    f"{trace.stem.removeprefix('intel-xeon-model207-'):36} {design:9} "
                    f"{f['precise']:>5} of {f['comparisons']:<5} {f['median_halfwidth']:>9.1%} "
                    f"{f['across']:>7} {plain['precise']:>9} of {plain['comparisons']:<5} "
                    f"{plain['median_halfwidth']:>7.1%} {simulated_span(timeline):>7.1f} "
                    f"{time.monotonic() - began:>7.1f}"
                )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
