"""--inner simd against the scalar loop, in cycles (prints, asserts nothing).

Per round, interleaved so drift in the machine's load hits all alike: Mandelbrot (asymmetric preset)
and π, each as serial scalar, serial simd, and OpenMP simd on 1 and 2 threads with a dynamic
schedule. Every run warms up in-process first; its record carries the core clock measured just
before and after the compute region, so every figure is per core cycle:

  per cycle (wall)  work / (wall_s x clock x workers): what the run achieved
  per cycle (cpu)   work / (cpu seconds x clock): the same per cycle the process was on a core; on a
                    shared machine this shows the kernel's own speed, wall time shows the contention
  % of bound        per cycle (wall) / the bound of the path that ran (analysis/simd_bounds.csv)

Then the aims: Mandelbrot SIMD >= 1.2 iterations per cycle per core, >= 75 % of bound and >= 8x the
scalar loop; π SIMD >= 0.2 samples per cycle per core; 2-core scaling of the SIMD kernels.

Run: .venv/bin/python perf/perf_simd.py [--rounds N]   (or `make perf`)
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.efficiency import load_bounds  # noqa: E402

BIN_DIR = ROOT / "build" / "bin"
PROBLEM = {
    "mandelbrot": ["--preset", "asymmetric", "--width", "512", "--height", "512", "--max-iter", "1000"],
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


def run_once(kernel: str, model: str, inner: str, threads: int) -> dict:
    command = [str(BIN_DIR / f"{kernel}-c-{model}"), *PROBLEM[kernel], "--inner", inner]
    if model != "serial":
        command += ["--threads", str(threads), *OMP_ARGS[kernel]]
    command += ["--warmup", "1", "--reps", "1"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def measure(rounds: int) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {label: [] for label, *_ in CASES}
    for r in range(rounds):
        print(f"  round {r + 1}/{rounds} ...", file=sys.stderr, flush=True)
        for label, kernel, model, inner, threads in CASES:
            runs[label].append(run_once(kernel, model, inner, threads))
    return runs


def table(runs: dict[str, list[dict]]) -> pd.DataFrame:
    bounds = load_bounds().set_index(["kernel", "inner_path", "uarch"])["bound_per_cycle"]
    rows = []
    for label, kernel, _model, _inner, threads in CASES:
        recs = runs[label]
        if not recs:
            continue
        cycles = [r["wall_s"] * r["clock_ghz"] * 1e9 * threads for r in recs]
        cpu_cycles = [(r["cpu_user_s"] + r["cpu_sys_s"]) * r["clock_ghz"] * 1e9 for r in recs]
        key = (kernel, recs[0]["inner_path"], recs[0]["uarch"])
        bound = bounds.get(key, float("nan"))
        per_cycle = statistics.median(r["work"] / c for r, c in zip(recs, cycles, strict=True))
        rows.append(
            {
                "case": label,
                "path": recs[0]["inner_path"],
                "median wall_s": statistics.median(r["wall_s"] for r in recs),
                "clock GHz": statistics.median(r["clock_ghz"] for r in recs),
                "per cycle (wall)": per_cycle,
                "per cycle (cpu)": statistics.median(
                    r["work"] / c for r, c in zip(recs, cpu_cycles, strict=True)
                ),
                "bound": bound,
                "% of bound": 100 * per_cycle / bound,
                "checksum": recs[0]["checksum"][-8:],
            }
        )
    return pd.DataFrame(rows).set_index("case")


def verdicts(t: pd.DataFrame) -> list[str]:
    lines = []
    for kernel, unit in (("mandelbrot", "iterations"), ("mcpi", "samples")):
        simd, scalar = t.loc[f"{kernel} serial simd x1"], t.loc[f"{kernel} serial scalar x1"]
        one, two = t.loc[f"{kernel} omp simd x1"], t.loc[f"{kernel} omp simd x2"]
        for col in ("per cycle (wall)", "per cycle (cpu)"):
            lines.append(
                f"{kernel}: SIMD {simd[col]:.3f} {unit}/cycle/core by {col.split('(')[1][:-1]} time "
                f"({simd[col] / simd['bound'] * 100:.0f} % of bound {simd['bound']:.3g}), "
                f"{simd[col] / scalar[col]:.1f}x scalar"
            )
        speedup = one["median wall_s"] / two["median wall_s"]
        lines.append(
            f"{kernel}: 2-thread SIMD speedup {speedup:.2f} (efficiency {speedup / 2 * 100:.0f} %), "
            f"per cycle per core {two['per cycle (wall)']:.3f} vs {one['per cycle (wall)']:.3f} on 1 thread"
        )
    mb_ok = t.loc["mandelbrot serial simd x1", "per cycle (wall)"] >= AIMS["mandelbrot_per_cycle"]
    pi_ok = t.loc["mcpi serial simd x1", "per cycle (wall)"] >= AIMS["mcpi_per_cycle"]
    lines.append(
        "aims: Mandelbrot >= {mandelbrot_per_cycle} per cycle, >= {mandelbrot_pct:.0f} % of bound, >= "
        "{mandelbrot_x_scalar:.0f}x scalar; pi >= {mcpi_per_cycle} per cycle".format(**AIMS)
        + f" -> by wall time Mandelbrot {'met' if mb_ok else 'SHORT'}, pi {'met' if pi_ok else 'SHORT'}"
    )
    kernels = t.index.str.split().str[0]
    if (t["checksum"].groupby(kernels).nunique() != 1).any():
        lines.append("WARNING: checksums differ between scalar and SIMD runs of the same problem")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    args = parser.parse_args()
    missing = [label for label, k, m, *_ in CASES if not (BIN_DIR / f"{k}-c-{m}").is_file()]
    if missing:
        print(
            f"perf_simd: build the kernels first (make kernels): {missing[0]} has no binary", file=sys.stderr
        )
        return 1
    t = table(measure(args.rounds))
    with pd.option_context(
        "display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format
    ):
        print(t)
    for line in verdicts(t):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
