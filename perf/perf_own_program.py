"""What measuring a user's program costs it: the same OpenMP program run bare and through
build/bin/program-run (placement from the pin list, the machine-state probe before and after, the
/proc sampler of its threads every 5 ms; optionally the OMPT tool), alternately, on 2 threads pinned
to CPUs 0 and 1 both times.

The program is tests/programs/imbalanced_omp.c built with gcc -fopenmp, sized so that its region takes
about --seconds; it prints its own region time. Three figures per pair, each within the pair
(a slow phase of the host cancels):
- perturbation: the program's own region time measured / bare (what the sampler's reads cost it);
- the recorded process: the measured program's wall time as its record gives it (process_wall_s,
  start to exit, the figure `wall` measures) / the bare process's, both timed from outside the same way;
- per-process cost: program-run's whole invocation minus the bare process, in seconds and as a share of
  a --seconds run (the probe before and after, the sampler's start and stop, the interpreter that runs
  program-run: campaign time, not in any figure).
Prints medians and quartiles with the load average before and after. Asserts nothing:
tests/programs/ test the measurement itself.

Run: .venv/bin/python perf/perf_own_program.py [--pairs 12] [--seconds 1] [--pop task-cpu|libomp]
(or `make perf`)
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sbcore.install import bin_dir  # noqa: E402

PROGRAM = ROOT / "tests" / "programs" / "imbalanced_omp.c"
N = 200


def region_s(text: str) -> float:
    return float(re.search(r"region_s ([0-9.]+)", text).group(1))


def run(argv: list[str], env: dict) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - began, done.stdout


def quartiles(values: list[float]) -> str:
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return f"median {q2:.4f} (quartiles {q1:.4f}-{q3:.4f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--pop", default="task-cpu", choices=["task-cpu", "libomp", "none"])
    args = parser.parse_args()
    runner = bin_dir() / "program-run"
    if not runner.is_file() or not (bin_dir() / "machine-probe").is_file():
        print(f"perf_own_program: skipped: {runner} or machine-probe not built (make kernels)")
        return
    if len(os.sched_getaffinity(0)) < 2:
        print("perf_own_program: skipped: needs 2 CPUs")
        return
    with tempfile.TemporaryDirectory(prefix="perf_own_program-") as tmp_name:
        tmp = Path(tmp_name)
        program = tmp / "imbalanced_omp"
        subprocess.run(["gcc", "-O2", "-fopenmp", str(PROGRAM), "-o", str(program)], check=True)
        base = dict(os.environ, OMP_NUM_THREADS="2", OMP_SCHEDULE="static", OMP_WAIT_POLICY="passive")
        bare_env = base | {"OMP_PLACES": "{0},{1}", "OMP_PROC_BIND": "close"}
        unit = 2000
        _, out = run(["taskset", "-c", "0,1", str(program), str(N), str(unit)], bare_env)
        unit = max(1, int(unit * args.seconds / region_s(out)))
        argv = [str(program), str(N), str(unit)]
        spec = {
            "name": "imb", "runtime": "openmp", "argv": argv, "env": {}, "cwd": None,
            "workers_env": "OMP_NUM_THREADS", "place": "openmp", "pop": args.pop,
            "figure": {"source": "regex", "regex": r"region_s ([0-9.]+)", "unit": "s", "better": "lower",
                       "stream": "both"},
            "result": None, "ranks": 1, "scaling": "strong", "params": {},
        }  # fmt: skip
        measured_argv = [str(runner), "--spec", json.dumps(spec), "--threads", "2", "--reps", "1"]
        measured_env = base | {"SB_PIN_CPUS": "0,1"}
        load = os.getloadavg()[0]
        figure, process, added = [], [], []
        bare_s, measured_s = [], []
        for i in range(args.pairs):
            order = ["bare", "measured"] if i % 2 == 0 else ["measured", "bare"]
            got = {}
            for name in order:
                if name == "bare":
                    wall, out = run(["taskset", "-c", "0,1", *argv], bare_env)
                    got[name] = (wall, region_s(out), wall)
                else:
                    wall, out = run(measured_argv, measured_env)
                    record = json.loads(out.splitlines()[-1])
                    got[name] = (wall, record["wall_s"], record["process_wall_s"])
            bare_s.append(got["bare"][1])
            measured_s.append(got["measured"][1])
            figure.append(got["measured"][1] / got["bare"][1])
            process.append(got["measured"][2] / got["bare"][2])
            added.append(got["measured"][0] - got["bare"][0])
        print(
            f"perf_own_program: {args.pairs} pairs, imbalanced_omp {N} iterations on 2 threads (CPUs 0,1), "
            f"pop {args.pop}, load {load:.2f} before"
        )
        print(f"  region time bare      median {statistics.median(bare_s):.3f} s")
        print(f"  region time measured  median {statistics.median(measured_s):.3f} s")
        print(f"  perturbation measured/bare {quartiles(figure)}; aim: below 1.02")
        print(f"  recorded process wall measured/bare {quartiles(process)}; aim: below 1.02")
        per = statistics.median(added)
        print(
            f"  per-process cost median {per * 1e3:.1f} ms = {per / args.seconds:.1%} of a "
            f"{args.seconds:g}-s run"
        )
        print(f"  load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
