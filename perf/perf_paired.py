"""Paired (trials) against unpaired (one shuffled order) speedups, side by side on this machine.

The same cases in the same number of kernel processes, run as two campaigns back to back, in
alternating order, `--repeats` times so that both meet the host's phases: one with
`interleave = "family"` (analyze pairs each speedup within trials: paired_speedup.csv), one without
(the speedup is a ratio of two medians measured at any time in the campaign: speedup.csv). The cases:
Monte-Carlo pi and Mandelbrot, serial against OpenMP at 1 and 2 threads, and per kernel an A/A pair (the
serial binary with the same options planted twice, told apart only by an environment variable it
ignores). Each process measures 1 repetition after 1 warm-up, as `make bench` does.
With `--stress` (default when stress-ng is installed) a competing `stress-ng --cpu 1` is switched on and
off at random intervals of 2-20 s for the whole benchmark: planted slow phases of a real load.

Prints per method (paired over every trial measured together — what `analyze` counts —, paired over
clean trials only, unpaired): the median 95 % CI half-width of the speedups, the share of speedups
within +-2 %, and the A/A false-difference rate (the CI of the A/A ratio excluding 1) over all repeats,
with the load average beside. Asserts nothing (the tests do: tests/analysis/test_paired_speedup.py).

Budget: 8 cases x 12 processes x (2 kernel runs of ~30 ms + ~27 ms of runner overhead) = ~9 s of runs
and ~5 s of analysis per campaign, ~2.5 minutes for the default 5 repeats on a quiet 2-core VM; a
repeat is not started once --budget-s (default 600) would be passed, and the figures say how many ran.

With the default `baseline_every` (8) the paired campaigns run each family's serial baseline twice per
trial (before and after its 3 other members: 5 processes per trial against the unpaired campaign's
4); `--baseline-every 0` runs it once, in the same number of processes as the unpaired campaign.

Run: .venv/bin/python perf/perf_paired.py [--repeats N] [--processes P] [--budget-s S] [--no-stress]
[--baseline-every K]   (or `make perf`)
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline import Options, analyze  # noqa: E402

PRECISE = 0.02
trials_kept: list[pd.DataFrame] = []  # per paired campaign: trials kept and left out per speedup
SWEEPS = """
[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["compact"]
params = {{ samples = [8000000], seed = [1], batch = [64] }}
env = {{ SB_AA_COPY = "{copy}" }}

[[sweep]]
binary = ["mandelbrot-c-serial"]
pin = ["compact"]
params = {{ preset = ["asymmetric"], width = [192], height = [192], max_iter = [1000] }}
env = {{ SB_AA_COPY = "{copy}" }}
"""
PARALLEL = """
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [1, 2]
pin = ["compact"]
params = { samples = [8000000], seed = [1], batch = [64], schedule = ["static"], sync = ["reduction"] }

[[sweep]]
binary = ["mandelbrot-c-omp"]
threads = [1, 2]
pin = ["compact"]
[sweep.params]
preset = ["asymmetric"]
width = [192]
height = [192]
max_iter = [1000]
schedule = ["dynamic,4"]
"""


def experiment(interleave: str, processes: int, seed: int, baseline_every: int) -> str:
    every = f"baseline_every = {baseline_every}\n" if interleave == "family" else ""
    head = (
        f'description = "perf_paired: {interleave}"\ninterleave = "{interleave}"\nseed = {seed}\n{every}'
        f"repetitions = {processes}\nreps_per_process = 1\nwarmup = 1\n"
        '[env]\nOMP_PROC_BIND = "false"\n'
    )
    return head + "".join(SWEEPS.format(copy=c) for c in ("a", "b")) + PARALLEL


def stress_phases(stop: threading.Event, seed: int) -> None:
    """stress-ng --cpu 1 on and off at random intervals until `stop`."""
    rng = random.Random(seed)
    on = False
    while not stop.is_set():
        span = rng.uniform(2, 20)
        if on:
            subprocess.run(
                ["stress-ng", "--cpu", "1", "--timeout", f"{span:.1f}s", "--quiet"],
                check=False,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        else:
            stop.wait(span)
        on = not on


def run_campaign(tmp: Path, name: str, text: str) -> Path:
    exp = tmp / f"{name}.toml"
    exp.write_text(text)
    cmd = [
        sys.executable,
        str(ROOT / "scalebench"),
        "run",
        str(exp),
        "--results-dir",
        str(tmp),
        "--name",
        name,
    ]
    subprocess.run([*cmd, "--no-progress"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return tmp / name


def is_aa(table: pd.DataFrame, cases: pd.DataFrame) -> pd.Series:
    """Rows comparing the two copies of a serial binary with each other."""
    serial = set(cases.loc[cases["model"] == "serial", "case_id"])
    return table["case_id"].isin(serial) & table["baseline_case_id"].isin(serial)


def figures(result, paired: str | None) -> pd.DataFrame:
    """Per compared case: half-width (relative), and whether it is the A/A pair with 1 outside its CI.
    paired: the column prefix in paired_speedup.csv, or None for the unpaired speedups."""
    if paired is not None:
        t = result.paired_speedup.rename(
            columns={f"{paired}speedup": "s", f"{paired}ci_low": "lo", f"{paired}ci_high": "hi"}
        )
    else:
        unpaired = ("unpaired_speedup", "unpaired_speedup_ci_low", "unpaired_speedup_ci_high")
        t = result.speedup.rename(columns=dict(zip(unpaired, ("s", "lo", "hi"), strict=True)))
        t = t[t["baseline_case_id"].notna() & (t["case_id"] != t["baseline_case_id"])]
    cases = result.campaign.cases
    return pd.DataFrame(
        {
            "halfwidth": ((t["hi"] - t["lo"]) / 2 / t["s"]).to_numpy(),
            "aa": is_aa(t, cases).to_numpy(),
            "false_difference": ((t["lo"] > 1) | (t["hi"] < 1)).to_numpy(),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="pairs of campaigns (default 5)")
    parser.add_argument("--processes", type=int, default=12, help="kernel processes per case (default 12)")
    parser.add_argument("--budget-s", type=float, default=600, help="no repeat past this (default 600)")
    parser.add_argument("--no-stress", action="store_true", help="no planted stress-ng phases")
    parser.add_argument(
        "--baseline-every",
        type=int,
        default=8,
        help="the paired campaigns' baseline_every (default 8, the experiments' default; 0: once per trial)",
    )
    args = parser.parse_args()
    stress = not args.no_stress and shutil.which("stress-ng") is not None
    stop = threading.Event()
    if stress:
        threading.Thread(target=stress_phases, args=(stop, 7), daemon=True).start()
    methods = {"paired": "paired_together_", "paired, clean trials only": "paired_", "unpaired": None}
    rows = {method: [] for method in methods}
    started = time.monotonic()
    repeats_run = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.repeats):
                if r and (time.monotonic() - started) / r * (r + 1) > args.budget_s:
                    print(f"  budget: {args.budget_s:g} s reached after {r} repeats", file=sys.stderr)
                    break
                repeats_run = r + 1
                order = ["paired", "unpaired"] if r % 2 == 0 else ["unpaired", "paired"]
                for method in order:
                    print(f"  repeat {r + 1}/{args.repeats}: {method} ...", file=sys.stderr, flush=True)
                    interleave = "family" if method == "paired" else "none"
                    text = experiment(
                        interleave, args.processes, seed=100 + r, baseline_every=args.baseline_every
                    )
                    campaign = run_campaign(Path(tmp), f"{method}-{r}", text)
                    result = analyze(campaign, Options(n_resamples=2000, seed=1, use_cache=False))
                    if method == "paired":
                        kept = result.paired_speedup[["trials", "left_out_disturbed", "left_out_apart"]]
                        trials_kept.append(kept)
                    for name, prefix in methods.items():
                        if (prefix is None) == (method == "unpaired"):
                            rows[name].append(figures(result, prefix))
    finally:
        stop.set()
    load = os.getloadavg()
    print(
        f"perf_paired: {repeats_run} repeats x 2 campaigns, {args.processes} processes x 1 rep per case, "
        f"baseline_every {args.baseline_every}, "
        f"stress-ng phases {'on' if stress else 'off'}, {time.monotonic() - started:.0f} s, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    for method, tables in rows.items():
        t = pd.concat(tables, ignore_index=True)
        ratios, aa = t[~t["aa"]], t[t["aa"]]
        # A speedup without a CI (fewer than 3 paired trials kept) counts as wider than anything.
        width = ratios["halfwidth"].fillna(np.inf)
        print(
            f"  {method:25s}: median CI half-width {100 * np.median(width):.2f} %, "
            f"within +-{100 * PRECISE:g} %: {int((width <= PRECISE).sum())} of {len(ratios)} "
            f"({int(ratios['halfwidth'].isna().sum())} without a CI); "
            f"A/A false differences: {int(aa['false_difference'].sum())} of {len(aa)}"
        )
    kept = pd.concat(trials_kept, ignore_index=True)
    print(
        f"  paired trials kept {int(kept['trials'].sum())}, left out: "
        f"{int(kept['left_out_disturbed'].sum())} all repetitions of a member disturbed, "
        f"{int(kept['left_out_apart'].sum())} members more than 30 s apart (e.g. waiting for the host's "
        "measurement lock while another runner measured)"
    )


if __name__ == "__main__":
    main()
