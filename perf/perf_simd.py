"""--inner simd against the scalar loop, in cycles (prints, asserts nothing).

Per round, interleaved so drift in the machine's load hits all alike: Mandelbrot (asymmetric preset
at the kernel's default size, 1024 x 1024, max-iter 1000) and π, each as serial scalar, serial simd,
and OpenMP simd on 1 and 2 threads with a dynamic schedule. Every run warms up in-process first; its
record carries the core clock measured just before and after the compute region, so every figure is
per core cycle (the higher of the two probes: a probe can be slowed by other load, never sped up):

  per cycle (wall)  work / (wall_s x clock x workers): what the run achieved
  per cycle (cpu)   work / (cpu seconds x clock): the same per cycle the process was on a core; on a
                    shared machine this shows the kernel's own speed, wall time shows the contention
  % of bound        per cycle / the bound of the path that ran (analysis/simd_bounds.csv)

Then the aims: Mandelbrot SIMD >= 1.2 iterations per cycle per core, >= 75 % of bound and >= 8x the
scalar loop; π SIMD >= 0.2 samples per cycle per core; 2-core scaling of the SIMD kernels. The 2-core
speedup is against the serial SIMD run of the same round (the fastest one-core code, so OpenMP's own
cost counts against the speedup), the median of the per-round ratios; with it, OpenMP on 1 thread
against serial (the runtime's cost) and the per-cycle CPU-time figure on 2 threads against 1 (below 1
when the two cores slow each other down, e.g. vCPUs that are hyperthreads of one physical core).

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


def table(runs: dict[str, list[dict]]) -> pd.DataFrame:
    bounds = load_bounds().set_index(["kernel", "inner_path", "uarch"])["bound_per_cycle"]
    rows = []
    for label, kernel, _model, _inner, threads in CASES:
        recs = runs[label]
        if not recs:
            continue
        figures = [per_cycle(r, threads) for r in recs]
        bound = bounds.get((kernel, recs[0]["inner_path"], recs[0]["uarch"]), float("nan"))
        wall = statistics.median(f[0] for f in figures)
        cpu = statistics.median(f[1] for f in figures)
        rows.append(
            {
                "case": label,
                "path": recs[0]["inner_path"],
                "median wall_s": statistics.median(r["wall_s"] for r in recs),
                "clock GHz": statistics.median(clock_ghz(r) for r in recs),
                "per cycle (wall)": wall,
                "per cycle (cpu)": cpu,
                "bound": bound,
                "% of bound (wall)": 100 * wall / bound,
                "% of bound (cpu)": 100 * cpu / bound,
                "checksum": recs[0]["checksum"][-8:],
            }
        )
    return pd.DataFrame(rows).set_index("case")


def round_ratio(runs: dict[str, list[dict]], num: str, den: str) -> float:
    """Median over rounds of wall(num) / wall(den), each pair from the same round."""
    return statistics.median(a["wall_s"] / b["wall_s"] for a, b in zip(runs[num], runs[den], strict=True))


def verdicts(t: pd.DataFrame, runs: dict[str, list[dict]]) -> list[str]:
    lines = []
    met = {}
    for kernel, unit in (("mandelbrot", "iterations"), ("mcpi", "samples")):
        simd, scalar = t.loc[f"{kernel} serial simd x1"], t.loc[f"{kernel} serial scalar x1"]
        one, two = t.loc[f"{kernel} omp simd x1"], t.loc[f"{kernel} omp simd x2"]
        for col in ("per cycle (wall)", "per cycle (cpu)"):
            lines.append(
                f"{kernel}: SIMD {simd[col]:.3f} {unit}/cycle/core by {col.split('(')[1][:-1]} time "
                f"({simd[col] / simd['bound'] * 100:.0f} % of bound {simd['bound']:.3g}), "
                f"{simd[col] / scalar[col]:.1f}x scalar"
            )
        serial = f"{kernel} serial simd x1"
        speedup = round_ratio(runs, serial, f"{kernel} omp simd x2")
        omp_cost = round_ratio(runs, f"{kernel} omp simd x1", serial)
        note = " -- above the core count: measurement noise, not a result" if speedup > 2.02 else ""
        lines.append(
            f"{kernel}: 2-thread SIMD speedup {speedup:.2f} over serial SIMD (efficiency "
            f"{speedup / 2 * 100:.0f} %){note}; OpenMP on 1 thread takes {omp_cost:.2f}x serial; "
            f"per cycle of CPU time on 2 threads {two['per cycle (cpu)'] / one['per cycle (cpu)']:.2f}x "
            "that on 1 (below 1: the two cores slow each other down)"
        )
        met[kernel] = simd
    mb, pi = met["mandelbrot"], met["mcpi"]
    mb_scalar = t.loc["mandelbrot serial scalar x1"]
    lines.append(
        "aims: Mandelbrot >= {mandelbrot_per_cycle} per cycle, >= {mandelbrot_pct:.0f} % of bound, >= "
        "{mandelbrot_x_scalar:.0f}x scalar; pi >= {mcpi_per_cycle} per cycle".format(**AIMS)
    )
    for col in ("per cycle (wall)", "per cycle (cpu)"):
        mb_ok = (
            mb[col] >= AIMS["mandelbrot_per_cycle"]
            and mb[col] / mb["bound"] * 100 >= AIMS["mandelbrot_pct"]
            and mb[col] / mb_scalar[col] >= AIMS["mandelbrot_x_scalar"]
        )
        pi_ok = pi[col] >= AIMS["mcpi_per_cycle"]
        lines.append(
            f"  by {col.split('(')[1][:-1]} time: Mandelbrot {'met' if mb_ok else 'SHORT'}, "
            f"pi {'met' if pi_ok else 'SHORT'}"
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
    runs = measure(args.rounds)
    t = table(runs)
    with pd.option_context(
        "display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format
    ):
        print(t)
    for line in verdicts(t, runs):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
