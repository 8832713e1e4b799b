"""Kernel throughput on one core and on all cores, measured side by side (prints, asserts nothing).

Every binary in build/bin matching `*-*-*` is run, so Fortran (`-f-`) and MPI (`*-mpi`) kernels
appear once they are built. Single-worker and all-core runs alternate within each trial, so drift
in the machine's load hits both alike; the table shows medians over the trials of Mandelbrot
iterations/s or π samples/s, the all-core speedup (median single-worker wall time / median
all-core wall time), the same from the fastest runs, and the CPU-time ratio (parallel overhead).
MPI binaries run under `mpirun --oversubscribe` as ranks x threads. Every run does two in-process
warm-up repetitions first (a fresh process runs slowly for its first half second on our VMs) and the
measured repetition's record is used.

Run: .venv/bin/python perf/perf_kernels.py [--trials N] [--binaries GLOB]   (or `make perf`)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = ROOT / "build" / "bin"
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

# The reference workload: dynamic schedule on the asymmetric preset (the load-imbalanced case).
MANDELBROT_ARGS = ["--preset", "asymmetric", "--width", "512", "--height", "512", "--max-iter", "1000"]
PI_ARGS = ["--samples", "100000000", "--seed", "1"]
# Per model, the schedule/sync that balances load best; others keep their defaults.
MODEL_ARGS = {
    ("mandelbrot", "omp"): ["--schedule", "dynamic,1"],
    ("mandelbrot", "mpi"): ["--schedule", "cyclic"],  # block is unbalanced on the asymmetric preset
    ("mandelbrot", "pthreads"): ["--schedule", "queue,1", "--sync", "atomic"],
    ("mcpi", "omp"): ["--schedule", "static", "--sync", "reduction"],
    ("mcpi", "pthreads"): ["--schedule", "block", "--sync", "none"],
}
SPEEDUP_AIM = 1.95
WARMUP = 2


def configurations(model: str, cores: int) -> list[tuple[str, int, int]]:
    """(label, ranks, threads) of the all-core runs; the baseline is always 1 x 1."""
    if model == "serial":
        return []
    if model.endswith("mpi"):
        configs = [(f"{cores}x1", cores, 1), (f"1x{cores}", 1, cores)]
        if cores >= 4:
            configs.append((f"{cores // 2}x2", cores // 2, 2))
        return configs
    return [(f"1x{cores}", 1, cores)]


def run_once(binary: Path, kernel: str, model: str, ranks: int, threads: int) -> dict:
    args = [*(MANDELBROT_ARGS if kernel == "mandelbrot" else PI_ARGS), *MODEL_ARGS.get((kernel, model), [])]
    if model != "serial":
        args += ["--threads", str(threads)]
    # The first ~0.5 s of a process run slow on our VMs (clock ramp-up): warm up in-process, measure after.
    args += ["--warmup", str(WARMUP), "--reps", "1"]
    command = [str(binary), *args]
    env = dict(os.environ)
    if model.endswith("mpi"):
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
        env.update(MPI_ENV)
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def measure(binaries: list[Path], trials: int, cores: int) -> list[dict]:
    """Trials outermost: within a trial every binary and configuration runs once, so drift in the
    machine's load hits the baseline, the all-core runs and the C and Fortran twins alike."""
    plans = {}
    for binary in binaries:
        kernel, _lang, model = binary.name.split("-", 2)
        plans[binary] = (kernel, model, [("1x1", 1, 1), *configurations(model, cores)])
    walls: dict[tuple, list[float]] = {}
    cpu: dict[tuple, list[float]] = {}
    work: dict[tuple, int] = {}
    for r in range(trials):
        print(f"  trial {r + 1}/{trials} ...", file=sys.stderr, flush=True)
        for binary, (kernel, model, configs) in plans.items():
            for label, ranks, threads in configs:
                key = (binary.name, label)
                try:
                    record = run_once(binary, kernel, model, ranks, threads)
                except (RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as err:
                    print(f"perf_kernels: {binary.name} {label}: {err}", file=sys.stderr)
                    continue
                walls.setdefault(key, []).append(record["wall_s"])
                cpu.setdefault(key, []).append(record["cpu_user_s"] + record["cpu_sys_s"])
                work[key] = record["work"]
    rows = []
    for binary, (kernel, _model, configs) in plans.items():
        base_key = (binary.name, "1x1")
        if base_key not in walls:
            continue
        base = statistics.median(walls[base_key])
        base_best = min(walls[base_key])
        base_cpu = statistics.median(cpu[base_key])
        for label, _, _ in configs:
            key = (binary.name, label)
            if key not in walls:
                continue
            median = statistics.median(walls[key])
            rows.append(
                {
                    "binary": binary.name,
                    "ranks x threads": label,
                    "unit": "iter/s" if kernel == "mandelbrot" else "samples/s",
                    "median rate": work[key] / median,
                    "median wall_s": median,
                    "spread": (max(walls[key]) - min(walls[key])) / median,
                    "speedup": base / median,
                    # least-disturbed runs: on a busy machine shows what the kernel can do
                    "speedup (best)": base_best / min(walls[key]),
                    # CPU seconds relative to one worker: >1 = parallel overhead (spinning, locks);
                    # unlike wall time it hardly depends on other load (MPI: rank 0's process only)
                    "cpu ratio": statistics.median(cpu[key]) / base_cpu if base_cpu > 0 else float("nan"),
                }
            )
    return rows


def language_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """C rate / Fortran rate of the same kernel and model, single worker and all cores."""
    parts = table["binary"].str.split("-", n=2, expand=True)
    table = table.assign(kernel=parts[0], lang=parts[1], model=parts[2])
    wide = table.pivot_table(
        index=["kernel", "model", "ranks x threads"], columns="lang", values="median rate"
    )
    if not {"c", "f"} <= set(wide.columns):
        return pd.DataFrame()
    wide = wide.dropna(subset=["c", "f"])
    return (wide["c"] / wide["f"]).rename("C/Fortran rate").reset_index()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5, help="interleaved trials per binary (default 5)")
    parser.add_argument(
        "--binaries", default="*-*-*", help="glob of binaries in build/bin to measure (default '*-*-*')"
    )
    args = parser.parse_args()
    if args.trials < 1:
        parser.error(f"--trials: '{args.trials}' must be at least 1")
    binaries = sorted(p for p in BIN_DIR.glob(args.binaries) if p.is_file() and os.access(p, os.X_OK))
    if not binaries:
        print(f"perf_kernels: no kernel binaries in {BIN_DIR}: run `make kernels`", file=sys.stderr)
        return 1
    if any(b.name.endswith("mpi") for b in binaries) and not shutil.which("mpirun"):
        print("perf_kernels: mpirun missing: MPI binaries skipped", file=sys.stderr)
        binaries = [b for b in binaries if not b.name.endswith("mpi")]
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; trials: {args.trials}; load average before: {os.getloadavg()[0]:.2f}")
    table = pd.DataFrame(measure(binaries, args.trials, cores))
    print(
        table.to_string(
            index=False,
            formatters={
                "median rate": "{:.3e}".format,
                "median wall_s": "{:.4f}".format,
                "spread": "{:.1%}".format,
                "speedup": "{:.2f}".format,
                "speedup (best)": "{:.2f}".format,
                "cpu ratio": "{:.2f}".format,
            },
        )
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    ratios = language_ratios(table)
    if not ratios.empty:
        print("C vs Fortran (same trial, same machine state): median rate ratio")
        print(ratios.to_string(index=False, float_format="{:.3f}".format))
    aims = table[(table["ranks x threads"] == f"1x{cores}") & table["binary"].str.contains("-omp|-pthreads")]
    for _, row in aims.iterrows():
        verdict = "met" if row["speedup"] >= SPEEDUP_AIM else "NOT met"
        print(
            f"aim speedup >= {SPEEDUP_AIM} on {cores} cores: {row['binary']}: median {row['speedup']:.2f}"
            f" ({verdict}), best {row['speedup (best)']:.2f}, cpu ratio {row['cpu ratio']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
