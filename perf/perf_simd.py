"""--inner simd against the scalar loop, in cycles (prints, asserts nothing).

Per trial, interleaved so drift in the machine's load hits all alike: Mandelbrot (asymmetric preset
at the kernel's default size, 1024 x 1024, max-iter 1000) and π, each as serial scalar, serial simd,
and OpenMP simd on 1 and 2 threads with a dynamic schedule. Every run warms up in-process first; its
record carries the core clock measured just before and after the compute region, so every figure is
per core cycle (the higher of the two probes: a probe can be slowed by other load, never sped up):

  per cycle (wall)  work / (wall_s x clock x workers): what the run achieved
  per cycle (cpu)   work / (cpu seconds x clock): the same per cycle the process was on a core; on a
                    shared machine this shows the kernel's own speed, wall time shows the contention
  % of bound        per cycle / the bound of the path that ran, derived from what build/bin/simd-bounds
                    measures on this host before the trials (sbcore/simd_bounds.py); "table bound"
                    is config/reference/simd_bounds.csv's for the core design, a cross-check

The host has phases: for seconds to minutes at a time another tenant's thread shares the FP pipes of
the physical core under a vCPU, and the vector kernels run up to a third slower (the latency-bound
scalar loop barely notices). Each run's record carries the machine-state probe's FP-throughput block,
timed on the run's CPUs right before and after it; analysis/stats/disturbance.py classifies the run from it
(not from the kernel's own speed): `fast` (the block ran within FAST_RATIO of the host's fast reference,
before and after), `slow` (only the block was slow, > 1.3x: shared pipes), `between` (neither: the phase
changed during the run) or `disturbed` (a latency chain was slow or the run waited for a CPU).
Every figure is printed per phase, with how many runs fell in it. Runs are pinned (SB_PIN_CPUS): one
thread on CPU 0, two on CPUs 0 and 1.

Then the aims, per phase: Mandelbrot SIMD >= 1.2 iterations per cycle per core, >= 75 % of bound and
>= 8x the scalar loop; π SIMD >= 0.2 samples per cycle per core; 2-core scaling of the SIMD kernels.
Ratios are medians over trials of pairs from the same trial: x scalar pairs a SIMD run of the phase
with the scalar run of its trial (the scalar loop is latency-bound; its phase is shown beside); the
2-core speedup is against the serial SIMD run of the same trial with both runs in the phase (the
fastest one-core code, so OpenMP's own cost counts against the speedup); with it, OpenMP on 1 thread
against serial (the runtime's cost) and the per-cycle CPU-time figure on 2 threads against 1 (below 1
when the two cores slow each other down).

Run: .venv/bin/python perf/perf_simd.py [--trials N]   (or `make perf`)
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.records.machine_state import probe_columns  # noqa: E402
from analysis.reference_data import load_bounds  # noqa: E402
from analysis.stats.disturbance import PIPES_REASON, flag_disturbed  # noqa: E402
from jobs.simd_bounds import measure as measure_bounds  # noqa: E402
from sbcore import simd_bounds  # noqa: E402

BIN_DIR = ROOT / "build" / "bin"
PROBLEM = {
    "mandelbrot": ["--preset", "asymmetric", "--width", "1024", "--height", "1024", "--max-iter", "1000"],
    "mcpi": ["--samples", "200000000", "--seed", "1"],
}
OMP_ARGS = {
    "mandelbrot": ["--schedule", "dynamic,1"],
    "mcpi": ["--schedule", "dynamic,16", "--sync", "reduction"],
}
# (label, kernel, model, inner, threads)
CASES = [
    (f"{k} {m} {inner} x{t}", k, m, inner, t)
    for k in ("mandelbrot", "mcpi")
    for m, inner, t in [
        ("serial", "scalar", 1),
        ("serial", "simd", 1),
        ("omp", "simd", 1),
        ("omp", "simd", 2),
    ]
]
AIMS = {
    "mandelbrot_per_cycle": 1.2,
    "mandelbrot_pct": 75.0,
    "mandelbrot_x_scalar": 8.0,
    "mcpi_per_cycle": 0.2,
}


PHASES = ("fast", "between", "slow", "disturbed")
# A run counts as fast only if the throughput block around it ran within this of the fastest: on our
# VM the block time shows a continuum between 1x and 2x where the phase changed during the run.
FAST_RATIO = 1.15


def run_once(kernel: str, model: str, inner: str, threads: int) -> dict:
    command = [str(BIN_DIR / f"{kernel}-c-{model}"), *PROBLEM[kernel], "--inner", inner]
    if model != "serial":
        command += ["--threads", str(threads), *OMP_ARGS[kernel]]
    command += ["--warmup", "1", "--reps", "1"]
    env = os.environ | {"SB_PIN_CPUS": ",".join(str(c) for c in range(threads))}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def measure(trials: int) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {label: [] for label, *_ in CASES}
    for r in range(trials):
        print(f"  trial {r + 1}/{trials} ...", file=sys.stderr, flush=True)
        for label, kernel, model, inner, threads in CASES:
            runs[label].append(run_once(kernel, model, inner, threads) | {"trial": r})
    return runs


def phases(runs: dict[str, list[dict]]) -> None:
    """Sets each run's `phase` (PHASES) from its probe, all runs judged together as one campaign."""
    flat = [(label, k) for label, recs in runs.items() for k in range(len(recs))]
    rows = []
    for label, k in flat:
        rec = runs[label][k]
        rows.append(
            {key: rec.get(key) for key in ("hostname", "kernel", "wall_s", "threads")}
            | {"case_id": label, "setup_s": rec.get("setup_s") or 0.0}
            | probe_columns(rec.get("probe"))
        )
    flagged = flag_disturbed(pd.DataFrame(rows))
    for (label, k), disturbed, reason, tput in zip(
        flat, flagged["disturbed"], flagged["disturbed_reason"], flagged["probe_tput_slowdown"], strict=True
    ):
        if disturbed:
            phase = "slow" if reason == PIPES_REASON else "disturbed"
        else:
            phase = "fast" if tput <= FAST_RATIO else "between"
        runs[label][k] |= {"phase": phase, "tput_slowdown": tput}


def in_phase(runs: dict[str, list[dict]], phase: str) -> dict[str, list[dict]]:
    return {label: [r for r in recs if r["phase"] == phase] for label, recs in runs.items()}


def clock_ghz(rec: dict) -> float:
    probe = rec.get("clock") or {}
    probes = [probe.get(k) for k in ("before_ghz", "after_ghz") if probe.get(k)]
    return max(probes) if probes else rec["clock_ghz"]


def per_cycle(rec: dict, threads: int) -> tuple[float, float]:
    """(work per cycle of wall time per worker, work per cycle of CPU time) of one record."""
    hz = clock_ghz(rec) * 1e9
    return (
        rec["work"] / (rec["wall_s"] * hz * threads),
        rec["work"] / ((rec["cpu_user_s"] + rec["cpu_sys_s"]) * hz),
    )


MEASURED_BOUNDS: dict[tuple[str, str], float] = {}  # (kernel, inner_path) -> bound, set by main()


def table(runs: dict[str, list[dict]]) -> pd.DataFrame:
    """Per case, the medians over the given runs (one phase)."""
    reference = load_bounds().set_index(["kernel", "inner_path", "uarch"])["bound_per_cycle"]
    rows = []
    for label, kernel, _model, _inner, threads in CASES:
        recs = runs[label]
        if not recs:
            continue
        figures = [per_cycle(r, threads) for r in recs]
        bound = MEASURED_BOUNDS.get((kernel, recs[0]["inner_path"]), float("nan"))
        table_bound = reference.get((kernel, recs[0]["inner_path"], recs[0]["uarch"]), float("nan"))
        wall = statistics.median(f[0] for f in figures)
        cpu = statistics.median(f[1] for f in figures)
        rows.append(
            {
                "case": label,
                "runs": len(recs),
                "path": recs[0]["inner_path"],
                "median wall_s": statistics.median(r["wall_s"] for r in recs),
                "clock GHz": statistics.median(clock_ghz(r) for r in recs),
                "per cycle (wall)": wall,
                "per cycle (cpu)": cpu,
                "bound": bound,
                "% of bound (wall)": 100 * wall / bound,
                "% of bound (cpu)": 100 * cpu / bound,
                "table bound": table_bound,
                "checksum": recs[0]["checksum"][-8:],
            }
        )
    return pd.DataFrame(rows).set_index("case") if rows else pd.DataFrame()


def trial_ratio(runs: dict[str, list[dict]], num: str, den: str, phase: str, both: bool) -> tuple:
    """(median over trials of wall(num) / wall(den), pairs): each pair from the same trial, num's run
    in `phase`, and den's too if `both`."""
    by_trial = {r["trial"]: r for r in runs[den]}
    pairs = [
        (a, by_trial[a["trial"]])
        for a in runs[num]
        if a["phase"] == phase
        and a["trial"] in by_trial
        and (not both or by_trial[a["trial"]]["phase"] == phase)
    ]
    if not pairs:
        return float("nan"), 0
    return statistics.median(a["wall_s"] / b["wall_s"] for a, b in pairs), len(pairs)


def verdicts(t: pd.DataFrame, runs: dict[str, list[dict]], phase: str) -> list[str]:
    """The figures of one phase (t: its table) against the aims; what has no run in the phase is said."""
    lines = []
    met = {}
    every = table(runs)  # all phases: the scalar loop, if it has no run in this one
    for kernel, unit in (("mandelbrot", "iterations"), ("mcpi", "samples")):
        serial, scalar_label, one_label, two_label = (
            f"{kernel} {case}"
            for case in ("serial simd x1", "serial scalar x1", "omp simd x1", "omp simd x2")
        )
        if serial not in t.index:
            lines.append(f"{kernel}: no serial SIMD run in this phase")
            continue
        simd = t.loc[serial]
        scalar = t.loc[scalar_label] if scalar_label in t.index else every.loc[scalar_label]
        where = "" if scalar_label in t.index else " (over all phases)"
        x_scalar, n_scalar = trial_ratio(runs, scalar_label, serial, phase, both=False)
        scalar_phases = ", ".join(
            f"{p} {n}" for p in PHASES if (n := sum(r["phase"] == p for r in runs[scalar_label]))
        )
        for col in ("per cycle (wall)", "per cycle (cpu)"):
            lines.append(
                f"{kernel}: SIMD {simd[col]:.3f} {unit}/cycle/core by {col.split('(')[1][:-1]} time "
                f"({simd[col] / simd['bound'] * 100:.0f} % of bound {simd['bound']:.3g}), "
                f"{simd[col] / scalar[col]:.1f}x the scalar loop's per-cycle median{where}"
            )
        same_trial = f"{x_scalar:.1f}x" if n_scalar else "(no pair)"
        lines.append(
            f"{kernel}: SIMD {same_trial} the scalar run of the same trial (median of {n_scalar} pairs; "
            f"the scalar runs' own phases: {scalar_phases})"
        )
        speedup, n_pairs = trial_ratio(runs, two_label, serial, phase, both=True)
        omp_cost, n_omp = trial_ratio(runs, one_label, serial, phase, both=True)
        if n_pairs:
            speedup = 1 / speedup
            note = " -- above the core count: measurement noise, not a result" if speedup > 2.02 else ""
            text = (
                f"{kernel}: 2-thread SIMD speedup {speedup:.2f} over serial SIMD (efficiency "
                f"{speedup / 2 * 100:.0f} %, {n_pairs} pairs){note}"
            )
        else:
            text = f"{kernel}: 2-thread SIMD speedup: no trial with both runs in this phase"
        if n_omp:
            text += f"; OpenMP on 1 thread takes {omp_cost:.2f}x serial ({n_omp} pairs)"
        if one_label in t.index and two_label in t.index:
            ratio = t.loc[two_label, "per cycle (cpu)"] / t.loc[one_label, "per cycle (cpu)"]
            text += (
                f"; per cycle of CPU time on 2 threads {ratio:.2f}x that on 1 (below 1: the cores slow each "
                "other down)"
            )
        lines.append(text)
        met[kernel] = (simd, scalar, x_scalar)
    if len(met) < 2:
        return lines
    (mb, mb_scalar, mb_x), (pi, _, _) = met["mandelbrot"], met["mcpi"]
    lines.append(
        "aims: Mandelbrot >= {mandelbrot_per_cycle} per cycle, >= {mandelbrot_pct:.0f} % of bound, >= "
        "{mandelbrot_x_scalar:.0f}x scalar; pi >= {mcpi_per_cycle} per cycle".format(**AIMS)
    )
    for col in ("per cycle (wall)", "per cycle (cpu)"):
        x_scalar = mb[col] / mb_scalar[col] if math.isnan(mb_x) else min(mb[col] / mb_scalar[col], mb_x)
        mb_ok = (
            mb[col] >= AIMS["mandelbrot_per_cycle"]
            and mb[col] / mb["bound"] * 100 >= AIMS["mandelbrot_pct"]
            and x_scalar >= AIMS["mandelbrot_x_scalar"]
        )
        pi_ok = pi[col] >= AIMS["mcpi_per_cycle"]
        lines.append(
            f"  by {col.split('(')[1][:-1]} time: Mandelbrot {'met' if mb_ok else 'SHORT'}, "
            f"pi {'met' if pi_ok else 'SHORT'}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=12, help="interleaved trials (default 12)")
    args = parser.parse_args()
    missing = [label for label, k, m, *_ in CASES if not (BIN_DIR / f"{k}-c-{m}").is_file()]
    if missing:
        print(
            f"perf_simd: build the kernels first (make kernels): {missing[0]} has no binary", file=sys.stderr
        )
        return 1
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    doc = measure_bounds(BIN_DIR / "simd-bounds")
    if doc is None:
        print("perf_simd: build/bin/simd-bounds measured nothing: % of bound left empty", file=sys.stderr)
    else:
        MEASURED_BOUNDS.update({(b.kernel, b.inner_path): b.per_cycle for b in simd_bounds.bounds(doc)})
        figures = ", ".join(f"{k} {v:.3f}" for k, v in doc["figures"].items())
        print(f"measured bounds in {doc['cost_s']:.3f} s: {figures}")
        if "seconds" in doc:  # off x86-64 the tool measures nothing and says nothing of a run
            print(
                f"  the tool's own run: {doc['seconds']:.3f} s, {doc['rounds']} rounds, "
                f"{'settled' if doc['settled'] else 'not settled: ' + ', '.join(doc['unsettled'])} "
                "(its rule: 1.5 to 4.5 s, docs/simd-bounds.md)"
            )
        for b in simd_bounds.bounds(doc):
            print(f"  bound {b.kernel} {b.inner_path}: {b.per_cycle:.4g} per cycle ({b.limited_by})")
    runs = measure(args.trials)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    phases(runs)
    simd_runs = [r for label, recs in runs.items() if "simd" in label for r in recs]
    counts = {p: sum(r["phase"] == p for r in simd_runs) for p in PHASES}
    trials = {}
    for r in range(args.trials):
        seen = {recs[r]["phase"] for label, recs in runs.items() if "simd" in label}
        kind = seen.pop() if len(seen) == 1 else "mixed"
        trials[kind] = trials.get(kind, 0) + 1
    print(
        "host phase per SIMD run, from the probe's FP-throughput block: "
        + ", ".join(f"{p} {n}" for p, n in counts.items())
        + f" of {len(simd_runs)}; trials with every SIMD run in one phase: "
        + ", ".join(f"{p} {n}" for p, n in trials.items())
    )
    checksums = pd.Series({label: {r["checksum"] for r in recs} for label, recs in runs.items()})
    if (checksums.groupby(checksums.index.str.split().str[0]).agg(lambda s: len(set().union(*s))) != 1).any():
        print("WARNING: checksums differ between runs of the same problem (scalar, SIMD, threads)")
    for phase in PHASES:
        if not counts[phase] and phase != "fast":
            continue
        print(f"\n== {phase} phase ==")
        t = table(in_phase(runs, phase))
        if t.empty:
            print("no run in this phase")
            continue
        with pd.option_context(
            "display.width", 220, "display.max_columns", 20, "display.float_format", "{:.4g}".format
        ):
            print(t)
        for line in verdicts(t, runs, phase):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
