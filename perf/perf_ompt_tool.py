"""What scalebench's OMPT tool costs an OpenMP program: the same GCC-built program on LLVM's libomp
(the stand-in for libgomp), with and without the tool loaded, run alternately, whole process timed.

The program is tests/programs/imbalanced_omp.c built with gcc -fopenmp: --regions parallel-for regions
of N iterations whose work grows with the index (a static schedule on 2 threads), sized so that one run
takes about --seconds. Each pair runs the bare program and the measured one back to back, in an order
that alternates between pairs; the ratio measured / bare is taken within each pair, so a slow phase
of the host cancels. Prints the median wall time of each and the median and quartiles of the ratio,
with the load average before and after. Asserts nothing: tests/programs/test_ompt_tool.py tests the
tool.

Run: .venv/bin/python perf/perf_ompt_tool.py [--pairs 10] [--seconds 1] [--regions 200]
(or `make perf`; skipped with a line where the tool or the stand-in was not built)
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernels.programs.ompt_report import OmptUnavailable, ompt_env, read_ompt_report  # noqa: E402

PROGRAM = ROOT / "tests" / "programs" / "imbalanced_omp.c"
N = 200


def timed(argv: list[str], env: dict) -> float:
    began = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=1.0, help="one run's length (default 1 s)")
    parser.add_argument("--regions", type=int, default=200, help="parallel regions per run (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perf_ompt_tool-") as tmp_name:
        tmp = Path(tmp_name)
        program = tmp / "imbalanced_omp"
        subprocess.run(["gcc", "-O2", "-fopenmp", str(PROGRAM), "-o", str(program)], check=True)
        report = tmp / "ompt.json"
        base = dict(os.environ, OMP_NUM_THREADS="2", OMP_SCHEDULE="static")
        try:
            measured_env = base | ompt_env("libomp", report, program)
        except OmptUnavailable as err:
            print(f"perf_ompt_tool: skipped: {err}")
            return
        # both on libomp: the only difference is the tool
        bare_env = base | {"LD_LIBRARY_PATH": measured_env["LD_LIBRARY_PATH"]}
        # size the work: one run of about --seconds
        unit = 2000
        probe = timed([str(program), str(N), str(unit), str(args.regions)], bare_env)
        unit = max(1, int(unit * args.seconds / probe))
        argv = [str(program), str(N), str(unit), str(args.regions)]
        load = os.getloadavg()[0]
        bare, measured, ratios = [], [], []
        for i in range(args.pairs):
            order = [("bare", bare_env), ("measured", measured_env)]
            times = {}
            for name, env in order if i % 2 == 0 else order[::-1]:
                times[name] = timed(argv, env)
            bare.append(times["bare"])
            measured.append(times["measured"])
            ratios.append(times["measured"] / times["bare"])
        fields = read_ompt_report(report)
        q1, q2, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"perf_ompt_tool: {args.pairs} pairs, {args.regions} regions of {N} iterations on 2 threads "
            f"(libomp standing in for libgomp), load {load:.2f} before"
        )
        print(f"  bare program        median {statistics.median(bare):.3f} s")
        print(
            f"  with the OMPT tool  median {statistics.median(measured):.3f} s  "
            f"(its report: {fields['ompt_regions']} regions, load balance "
            f"{fields['worker_useful_mean_s'] / fields['worker_useful_max_s']:.3f})"
        )
        print(f"  ratio measured/bare median {q2:.4f} (quartiles {q1:.4f}-{q3:.4f}); aim: below 1.02")
        print(f"  load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
