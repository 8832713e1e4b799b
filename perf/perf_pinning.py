"""Per-repetition overhead of the runner, pinned and unpinned, against the bare kernel.

Overhead = wall time around one kernel process (runner: `runner_wall_s` of the record; bare: timed
subprocess) minus the kernel's own wall time of its measured and warm-up repetitions. Measured in this
process through the runner's own function (no Python start-up of `scalebench run-case` in it), for:
the bare kernel; pin none; pinning by the harness itself (default, `pin_tool = "harness"`) and through
likwid's environment (`pin_tool = "preload"`) for a serial, an OpenMP, a pthreads and a Fortran OpenMP
kernel; and the real `likwid-pin` front end (fewer samples: it pauses about a second per start on some
VMs). Also the start-up of `likwid-perfctr`, which
counted runs still pay. Interleaved, medians; asserts nothing.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobs.campaign import create_campaign, load_cases  # noqa: E402
from jobs.runcase import Context, run_invocation  # noqa: E402

SAMPLES = 15
LIKWID_PIN_SAMPLES = 3
PARAMS = "params = { width = [64], height = [64], max_iter = [200] }"
EXPERIMENT = f"""
description = "pinning overhead"
repetitions = {SAMPLES}
warmup = 1
[[sweep]]
binary = ["mandelbrot-c-serial"]
pin = ["none", "compact"]
{PARAMS}
[[sweep]]
binary = ["mandelbrot-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp"]
threads = [2]
pin = ["compact"]
{PARAMS}
[[sweep]]
binary = ["mandelbrot-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp"]
threads = [2]
pin = ["compact"]
pin_tool = "preload"
{PARAMS}
[[sweep]]
binary = ["mandelbrot-c-omp"]
threads = [2]
pin = ["compact"]
pin_tool = "likwid-pin"
repetitions = {LIKWID_PIN_SAMPLES}
{PARAMS}
"""


def kernel_walls(record: dict) -> float:
    return record["wall_s"] + sum(w or 0 for w in record.get("warmup_wall_s") or [])


def bare(binary: Path) -> float:
    start = time.perf_counter()
    out = subprocess.run(
        [str(binary), "--width", "64", "--height", "64", "--max-iter", "200", "--reps", "1", "--warmup", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.perf_counter() - start
    records = [json.loads(line) for line in out.stdout.splitlines()]
    return elapsed - sum(r["wall_s"] for r in records)


def perfctr_startup() -> str:
    start = time.perf_counter()
    try:
        out = subprocess.run(
            ["likwid-perfctr", "-C", "0", "-g", "CLOCK", "true"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"not measured ({err})"
    took = (time.perf_counter() - start) * 1e3
    verdict = "ran" if out.returncode == 0 else f"exit {out.returncode}: no counters here"
    return f"{took:8.1f} ms  (likwid-perfctr -C 0 -g CLOCK true; {verdict})"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        experiment = Path(tmp) / "pin.toml"
        experiment.write_text(EXPERIMENT)
        campaign = create_campaign(experiment, results_dir=Path(tmp))
        cases = load_cases(campaign)
        ctx = Context.for_campaign(campaign)
        label = {}
        for c in cases:
            tool = c.get("pin_tool", "harness") if c["pin"] != "none" else "none"
            label[c["case_id"]] = f"{c['binary']:<22} threads={c['threads']} pin={c['pin']:<8} tool={tool}"
        overhead = {c["case_id"]: [] for c in cases}
        bare_overhead = []
        binary = ROOT / "build" / "bin" / "mandelbrot-c-serial"
        for p in range(SAMPLES):
            bare_overhead.append(bare(binary))
            for c in cases:
                if p >= c["reps"]:
                    continue
                result = run_invocation(ctx, c, p, env=os.environ)
                if result["outcome"] == "ok":
                    r = result["record"]
                    overhead[c["case_id"]].append(r["runner_wall_s"] - kernel_walls(r))
    med = statistics.median
    print(
        f"{'bare kernel (subprocess)':<60} overhead median {med(bare_overhead) * 1e3:7.1f} ms (n={SAMPLES})"
    )
    for case_id, values in overhead.items():
        if values:
            print(f"{label[case_id]:<60} overhead median {med(values) * 1e3:7.1f} ms (n={len(values)})")
    print(f"likwid-perfctr start-up (counted runs)                       {perfctr_startup()}")


if __name__ == "__main__":
    main()
