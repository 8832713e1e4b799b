"""Competing load on one CPU, for real: Mandelbrot OpenMP on 2 workers pinned to CPUs 0 and 1, each
schedule once on a quiet CPU 1 and once with `stress-ng --cpu 1 --taskset 1` competing there. Prints,
per schedule and load, the median over repetitions of the work balance (mean / largest work per
worker, counted) and the time balance (mean / largest useful time, timed) from the records' worker_*
fields: a static schedule (`static,1`) should keep its work balance and lose time balance, a dynamic
one absorb the load (work balance drops, time balance stays near 1). The deterministic version of this
is tests/analysis/test_pop_truth.py; this one shows the real host. Prints, asserts nothing; needs
stress-ng and 2 CPUs, and nothing else running for figures worth quoting.

Run: .venv/bin/python perf/perf_competing_load.py [--reps K]   (or `make perf`)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "build" / "bin" / "mandelbrot-c-omp"
IMAGE = ["--preset", "asymmetric", "--width", "384", "--height", "384", "--max-iter", "1000"]
SCHEDULES = ["static,1", "dynamic,1"]


def balances(schedule: str, reps: int) -> tuple[float, float, float]:
    """Median (work balance, time balance, wall s) over the repetitions of one run."""
    command = [str(BINARY), *IMAGE, "--schedule", schedule, "--threads", "2", "--warmup", "1"]
    pinned = {**os.environ, "SB_PIN_CPUS": "0,1"}
    out = subprocess.run(
        [*command, "--reps", str(reps)], capture_output=True, text=True, check=True, timeout=600, env=pinned
    ).stdout
    records = [json.loads(line) for line in out.splitlines() if '"warmup":false' in line]
    work = statistics.median(r["worker_work_mean"] / r["worker_work_max"] for r in records)
    time = statistics.median(r["worker_useful_mean_s"] / r["worker_useful_max_s"] for r in records)
    return work, time, statistics.median(r["wall_s"] for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="repetitions per run (default 10)")
    args = parser.parse_args()
    if shutil.which("stress-ng") is None or (os.cpu_count() or 1) < 2:
        print("skipped: needs stress-ng and at least 2 CPUs")
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} (quote figures only from a quiet machine)")
    print(f"{'schedule':10} {'CPU 1':8} {'work balance':>13} {'time balance':>13} {'wall s':>8}")
    for schedule in SCHEDULES:
        for loaded in (False, True):
            stress = None
            if loaded:
                stress = subprocess.Popen(
                    ["stress-ng", "--cpu", "1", "--taskset", "1", "--timeout", "600s", "--quiet"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            try:
                work, time, wall = balances(schedule, args.reps)
            finally:
                if stress is not None:
                    stress.terminate()
                    stress.wait(timeout=30)
            state = "loaded" if loaded else "quiet"
            print(f"{schedule:10} {state:8} {work:13.3f} {time:13.3f} {wall:8.4f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
