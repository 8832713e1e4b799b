"""Duet against trials for single-threaded comparisons, side by side on this machine, through the product.

Duet benchmarking (Bulej et al., ICPE 2020) runs the two alternatives at the same time, one per CPU, so
that whatever slows the host slows both in the same instant; a trial runs them back to back. Our vCPUs
share execution units with another tenant, and the two duet halves share the host's caches, memory and
clock with each other: a duet also measures that contention. This benchmark says which wins here, for
three single-threaded pairs: scalar against SIMD serial Monte-Carlo pi (`inner`), C against Fortran
serial Mandelbrot, and an A/A pair (the C serial pi kernel with the same options twice, told apart only
by an environment variable it ignores).

Per repeat (`--repeats`, alternating which mode goes first, so both meet the host's phases) one
campaign per mode, both run by `./scalebench run` on an experiment file this script writes (tomli-w,
in a temporary directory) and analysed by `./scalebench analyze`:
  trials: `interleave = "family"`, `baseline_every = 0`, `--trials` processes per case;
  duet:   `duet = true`, as many duets per pair as fit in the trials' wall-clock: twice `--trials` in
          the first repeat (two processes at once on two CPUs), then the trials' run time per trial
          over the duets' per duet, measured so far, times `--trials` (the runs' times are printed).
Each process measures 1 repetition after 1 warm-up. Ratios are b's time over a's, read from what
`analyze` writes: duets from paired_duet_ratio.csv, the A/A trials from paired_speedup.csv (both copies
are serial cases of one family: b over a is 1 / speedup), both over every trial or duet measured
together (the `paired_together_` columns, disturbed ones too). The runner's families hold one
language and inner loop (jobs/families.py), so it does not pair C against Fortran nor scalar against
SIMD in trials: for those the trials figure is what a user gets without duets, the ratio of the two
cases' medians with a bootstrap CI over their processes (from records.parquet), marked "unpaired".
The SIMD pi kernel is several times faster than the scalar one on the same problem, so in that duet
the SIMD half ends long before the scalar one: duets suit alternatives of about equal length.

Prints per mode and pair: the median over repeats of the ratio's median (b/a) and of its 95 % CI
half-width, and for the A/A pair in how many repeats the CI excludes 1 (false differences); the load
average beside. Asserts nothing (tests/jobs/test_perf_duet_experiments.py checks that the experiment
files plan and yield duets).

Budget: 6 cases x 10 processes (2 short kernel runs each, the probe and the runner's overhead) per
mode, the same wall-clock for the duets, and two analyses per repeat: under 3 minutes for the default 5
repeats on a 2-core VM (more when other work shares it).

Run: .venv/bin/python perf/perf_duet.py [--repeats N] [--trials T]   (or `make perf`)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import tomli_w
from scipy.stats import bootstrap

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.paired import MIN_TRIALS  # noqa: E402

MODES = ("trials", "duet")
PI = {"samples": [40000000], "batch": [64]}
MANDELBROT = {"preset": ["asymmetric"], "width": [192], "height": [192], "max_iter": [1000]}
PAIRS = {  # name: the sweeps of its two cases, a first
    "pi scalar vs SIMD serial": [
        {"binary": ["mcpi-c-serial"], "params": {**PI, "seed": [1], "inner": ["scalar", "simd"]}},
    ],
    "mandelbrot C vs Fortran serial": [
        {"binary": ["mandelbrot-c-serial", "mandelbrot-f-serial"], "params": MANDELBROT},
    ],
    "A/A: pi C serial twice": [  # seed 2: another problem than the scalar/SIMD pair's, another duet
        {"binary": ["mcpi-c-serial"], "params": {**PI, "seed": [2]}, "env": {"SB_AA_COPY": copy}}
        for copy in ("a", "b")
    ],
}


def experiment(mode: str, processes: int, seed: int) -> dict:
    """The experiment file (as a dict for tomli-w) of one mode's campaign over every pair, `processes`
    per case (in duets: the pair's duets)."""
    head = {"description": f"perf_duet: {mode}", "seed": seed, "reps_per_process": 1, "warmup": 1}
    head |= {"repetitions": processes}
    if mode == "duet":
        head |= {"duet": True}
    else:
        head |= {"interleave": "family", "baseline_every": 0}
    return head | {"sweep": [sweep for sweeps in PAIRS.values() for sweep in sweeps]}


def pair_of(case: dict) -> tuple[str, str]:
    """(pair name, "a" or "b") of a planned case (a line of cases.jsonl)."""
    params = case["params"]
    if case["kernel"] == "mandelbrot":
        return "mandelbrot C vs Fortran serial", "a" if case["lang"] == "c" else "b"
    if case["env"].get("SB_AA_COPY"):
        return "A/A: pi C serial twice", case["env"]["SB_AA_COPY"]
    return "pi scalar vs SIMD serial", "a" if params.get("inner", "scalar") == "scalar" else "b"


def run_and_analyze(tmp: Path, name: str, exp: dict) -> float:
    """Runs the experiment as campaign `name` under tmp and analyses it (tmp/name/analysis); returns
    how long the run took."""
    path = tmp / f"{name}.toml"
    path.write_bytes(tomli_w.dumps(exp).encode())
    scalebench = [sys.executable, str(ROOT / "scalebench")]
    run = [*scalebench, "run", str(path), "--results-dir", str(tmp), "--name", name, "--no-progress"]
    analyze = [*scalebench, "analyze", str(tmp / name), "--format", "csv", "--seed", "1"]
    seconds = []
    for command in (run, analyze):
        began = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(
                f"perf_duet: scalebench {command[2]} {name} exited {done.returncode}: {done.stderr}"
            )
        seconds.append(time.monotonic() - began)
    return seconds[0]


def row(ratio: float, low: float, high: float, paired: bool) -> dict:
    return {
        "ratio": ratio,
        "halfwidth": (high - low) / 2 / ratio,
        "excludes_1": low > 1 or high < 1,
        "paired": paired,
    }


def unpaired(records: pd.DataFrame, a: str, b: str, rng: np.random.Generator) -> dict:
    """b's median time over a's, with a percentile bootstrap CI resampling each case's processes."""
    ta, tb = (records.loc[records["case_id"] == c, "wall_s"].to_numpy() for c in (a, b))

    def ratio(b_times, a_times, axis):
        return np.median(b_times, axis=axis) / np.median(a_times, axis=axis)

    ci = bootstrap(
        (tb, ta), ratio, n_resamples=2000, method="percentile", random_state=rng
    ).confidence_interval
    return row(float(ratio(tb, ta, None)), float(ci.low), float(ci.high), paired=False)


def figures(mode: str, campaign: Path, analysis: Path, rng: np.random.Generator) -> dict[str, dict]:
    """Per pair: b/a, its CI's relative half-width, whether the CI excludes 1, whether it is paired."""
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines() if line]
    ids: dict[str, dict[str, str]] = {}
    for case in cases:
        pair, side = pair_of(case)
        ids.setdefault(pair, {})[side] = case["case_id"]
    p = "paired_together_"
    if mode == "duet":
        table = pd.read_csv(analysis / "paired_duet_ratio.csv")
        by_a = {r["case_a"]: r for r in table.to_dict("records")}
        out = {}
        for pair, side in ids.items():
            r = by_a[side["a"]] if side["a"] in by_a else by_a[side["b"]]
            flip = r["case_a"] != side["a"]  # the pair's first case in cases.jsonl is b
            ratio, low, high = (r[f"{p}ratio_b_over_a"], r[f"{p}ci_low"], r[f"{p}ci_high"])
            out[pair] = row(1 / ratio, 1 / high, 1 / low, True) if flip else row(ratio, low, high, True)
        return out
    speedup = pd.read_csv(analysis / "paired_speedup.csv")
    records = pd.read_parquet(analysis / "records.parquet", columns=["case_id", "wall_s"])
    out = {}
    for pair, side in ids.items():
        found = speedup[
            speedup["case_id"].isin(side.values()) & speedup["baseline_case_id"].isin(side.values())
        ]
        if found.empty:
            out[pair] = unpaired(records, side["a"], side["b"], rng)
            continue
        r = found.iloc[0]  # speedup = baseline's time / case's time
        s, low, high = r[f"{p}speedup"], r[f"{p}ci_low"], r[f"{p}ci_high"]
        b_is_case = r["case_id"] == side["b"]
        out[pair] = row(1 / s, 1 / high, 1 / low, True) if b_is_case else row(s, low, high, True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeats of both modes (default 5)")
    parser.add_argument("--trials", type=int, default=10, help="trials per repeat (default 10)")
    args = parser.parse_args()
    rng = np.random.default_rng(12)
    found: dict[tuple[str, str], list[dict]] = {}
    run_s = dict.fromkeys(MODES, 0.0)  # the runs' wall-clock, without the analyses
    measured = dict.fromkeys(MODES, 0)  # trials; duets per pair
    processes = {"trials": args.trials, "duet": 2 * args.trials}
    duets_used = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            modes = MODES if r % 2 == 0 else MODES[::-1]
            for mode in modes:
                print(f"  repeat {r + 1}/{args.repeats}: {mode} ...", file=sys.stderr, flush=True)
                name = f"{mode}-{r}"
                exp = experiment(mode, processes[mode], seed=100 + r)
                run_s[mode] += run_and_analyze(Path(tmp), name, exp)
                measured[mode] += processes[mode]
                if mode == "duet":
                    duets_used.append(processes[mode])
                for pair, figure in figures(
                    mode, Path(tmp) / name, Path(tmp) / name / "analysis", rng
                ).items():
                    found.setdefault((mode, pair), []).append(figure)
                if all(measured.values()):  # as many duets as fit in the trials' wall-clock so far
                    per_duet, per_trial = (run_s[m] / measured[m] for m in ("duet", "trials"))
                    processes["duet"] = max(MIN_TRIALS, round(args.trials * per_trial / per_duet))
    load = os.getloadavg()
    print(
        f"perf_duet: {args.repeats} repeats x {args.trials} trials / {min(duets_used)}-{max(duets_used)} "
        f"duets per pair (2 x trials at first, then as many as fit in the trials' time), "
        f"{time.monotonic() - started:.0f} s (runs: trials {run_s['trials']:.0f} s, duets "
        f"{run_s['duet']:.0f} s), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    for (mode, pair), rows in sorted(
        found.items(), key=lambda item: (list(PAIRS).index(item[0][1]), item[0][0])
    ):
        t = pd.DataFrame(rows)
        false = int(t["excludes_1"].sum())
        aa = f", CI excludes 1 in {false} of {len(t)} repeats" if pair.startswith("A/A") else ""
        how = "" if t["paired"].all() else " (unpaired)"
        print(
            f"  {mode:6s} {pair:31s}: b/a {t['ratio'].median():.3f} (repeats {t['ratio'].min():.3f}-"
            f"{t['ratio'].max():.3f}), median CI half-width {100 * t['halfwidth'].median():.2f} %{how}{aa}"
        )


if __name__ == "__main__":
    main()
