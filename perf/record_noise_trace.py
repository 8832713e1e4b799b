"""Records a noise trace of this machine and prints how well each probe rule tells its slow repetitions.

A trace: one kernel run back to back on each CPU at once (each process pinned with taskset to its CPU,
--reps repetitions per process, new processes until --seconds have passed), one CSV row per measured
repetition, copied from the kernel's own records, in the columns of the shared noise traces (`cpu`,
`seq` (order on that CPU), `started`, `wall_s`, `cpu_user_s`, `ctx_involuntary`, `clock_ghz`, the
probe's block times before and after the repetition, `probe_{before,after}_{fp_tput,fp_lat,int_mul}_s`)
and after them the integer-ALU block's (`probe_{before,after}_int_alu_s`) and the repetition's
run-queue wait (`probe_runq_wait_s`: on a loaded machine the slow repetitions are mostly waits for a
CPU, not a sibling hardware thread).

Then, for that trace or one given with --judge (any file in these columns, e.g. a shared trace), the
judge of analysis/stats/probe_judge.py per CPU: the share of the repetitions slower than 1.15x their
CPU's median each rule flags and the share of the others it flags, for each block over 1.10x its median
(the after side) and for the analysis's own flags, with the repetitions' wall time, with their user CPU
time (which leaves out the waits for a CPU that dominate on a loaded machine), and on the repetitions
that hardly waited for a CPU alone; and what one probe costs per CPU (the median sum of its blocks'
times, with and without the integer-ALU block). Prints figures, asserts nothing
(tests/analysis/test_probe_judge.py tests the judge).

    .venv/bin/python perf/record_noise_trace.py --out trace.csv [--binary mcpi-c-serial]
        [--seconds 60] [--reps 20] [--cpus 0,1] [-- --samples 4000000 --inner scalar]
    .venv/bin/python perf/record_noise_trace.py --judge trace.csv

Exit status: 0, 2 for bad input (an existing --out: a trace is never overwritten), 3 when the kernel
is not built or taskset is missing.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.stats.disturbance import ALU_REASON, PIPES_REASON  # noqa: E402
from analysis.stats.probe_judge import (  # noqa: E402
    analysis_rule,
    block_over_median,
    blocks_of,
    judge_per_cpu,
    slow_repetitions,
)

# The shared traces' columns: the record's own values, then the probe's blocks (theirs, then ours).
COPIED = ("started", "wall_s", "cpu_user_s", "ctx_involuntary", "clock_ghz")
BLOCKS = ("fp_tput", "fp_lat", "int_mul", "int_alu")
SIDES = ("before", "after")
COLUMNS = (
    "cpu",
    "seq",
    *COPIED,
    *(f"probe_{side}_{b}_s" for b in BLOCKS for side in SIDES),
    "probe_runq_wait_s",
)
# wall_s as the criterion counts; cpu_user_s leaves out the waits for a CPU of a loaded machine
TIMES = ("wall_s", "cpu_user_s")
# and the repetitions that waited less than this share of their time for a CPU, judged alone
QUIET_WAIT = 0.01
BLOCK_RATIO = 1.10  # a block over this much its median "sees" the repetition (the shared traces' notes)
DEFAULT_ARGS = ["--samples", "4000000", "--inner", "scalar"]
ANALYSIS_RULES = {
    "analysis: slow probe": ["slow probe"],
    f"analysis: {PIPES_REASON}": [PIPES_REASON],
    f"analysis: {ALU_REASON}": [ALU_REASON],
    "analysis: run-queue wait": ["run-queue wait"],
    "analysis: any probe flag": ["slow probe", PIPES_REASON, ALU_REASON],
}


def row_of(cpu: int, seq: int, record: dict) -> dict:
    """A trace row from a measured record of a process pinned to one CPU (its probe's first entry)."""
    probe = record.get("probe") or {}
    row = {"cpu": cpu, "seq": seq} | {key: record.get(key) for key in COPIED}
    for block in BLOCKS:
        for side in SIDES:
            times = (probe.get(side) or {}).get(f"{block}_s") or [None]
            row[f"probe_{side}_{block}_s"] = times[0]
    row["probe_runq_wait_s"] = probe.get("runq_wait_s")
    return row


def record_on(cpu: int, command: list[str], deadline: float, writer, lock: threading.Lock) -> None:
    """Runs `command` pinned to `cpu` again and again until `deadline`, each measured record a row."""
    seq = 0
    while time.monotonic() < deadline:
        proc = subprocess.run(
            ["taskset", "-c", str(cpu), *command], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            print(
                f"cpu {cpu}: {command[0]} exited {proc.returncode}: {proc.stderr.strip()[-300:]}",
                file=sys.stderr,
            )
            return
        for line in proc.stdout.splitlines():
            record = json.loads(line)
            if record.get("warmup"):
                continue
            with lock:
                writer.writerow(row_of(cpu, seq, record))
            seq += 1


def record_trace(
    out: Path, binary: Path, args: list[str], cpus: list[int], seconds: float, reps: int
) -> None:
    command = [str(binary), *args, "--reps", str(reps)]
    lock = threading.Lock()
    with open(out, "x", newline="") as f:  # "x": an existing trace is never overwritten
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        deadline = time.monotonic() + seconds
        threads = [
            threading.Thread(target=record_on, args=(c, command, deadline, writer, lock)) for c in cpus
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def print_judgement(trace: pd.DataFrame) -> None:
    rules = {
        f"{block} (after) > {BLOCK_RATIO:g}x its median": block_over_median(block, BLOCK_RATIO)
        for block in blocks_of(trace)
    }
    rules |= {name: analysis_rule(reasons) for name, reasons in ANALYSIS_RULES.items()}
    views = [
        (f"{len(trace)} repetitions", trace, time_column) for time_column in TIMES if time_column in trace
    ]
    if "probe_runq_wait_s" in trace and trace["probe_runq_wait_s"].notna().any():
        wait = pd.to_numeric(trace["probe_runq_wait_s"], errors="coerce")
        quiet = trace[wait < QUIET_WAIT * trace["wall_s"]].drop(columns="probe_runq_wait_s")
        name = f"{len(quiet)} repetitions that waited < {100 * QUIET_WAIT:g} % of their time for a CPU"
        views.append((name, quiet, "wall_s"))
    for name, rows, time_column in views:
        print(
            f"{name}, slow by {time_column} (> 1.15x its CPU's median); per CPU: "
            "the slow repetitions a rule flags / the others it flags"
        )
        for rule_name, rule in rules.items():
            shares = judge_per_cpu(rows, rule, time=time_column)
            cells = [
                f"cpu {c}: {100 * s.caught:5.1f} % of {s.n_slow} / {100 * s.false_alarms:4.1f} %"
                for c, s in shares.items()
            ]
            print(f"  {rule_name:44s} " + "; ".join(cells))
    if "probe_runq_wait_s" in trace and trace["probe_runq_wait_s"].notna().any():
        waited = pd.to_numeric(trace["probe_runq_wait_s"], errors="coerce") > 0.05 * trace["wall_s"]
        share = 100 * waited[slow_repetitions(trace)].mean()
        print(
            f"  slow repetitions that waited > 5 % of their time for a CPU (a loaded machine): {share:.1f} %"
        )
    blocks = blocks_of(trace)
    for side in SIDES:
        cost = sum(pd.to_numeric(trace[f"probe_{side}_{b}_s"], errors="coerce") for b in blocks)
        alu = f"probe_{side}_int_alu_s"
        without = cost - (pd.to_numeric(trace[alu], errors="coerce").fillna(0) if alu in trace else 0)
        print(
            f"  probe cost per CPU ({side}), median: {1e3 * cost.median():.3f} ms with every block, "
            f"{1e3 * without.median():.3f} ms without int_alu"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the trace to record (CSV; must not exist)")
    parser.add_argument("--judge", type=Path, help="only judge this trace (CSV in the columns above)")
    parser.add_argument(
        "--binary", default="mcpi-c-serial", help="kernel in build/bin (default mcpi-c-serial)"
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--reps", type=int, default=20, help="repetitions per process")
    parser.add_argument("--cpus", default="0,1", help="comma list of CPUs (default 0,1)")
    parser.add_argument(
        "kernel_args", nargs="*", help=f"kernel options after -- (default {' '.join(DEFAULT_ARGS)})"
    )
    a = parser.parse_args()
    if a.judge:
        if not a.judge.is_file():
            print(f"--judge {a.judge}: no such file", file=sys.stderr)
            return 2
        print_judgement(pd.read_csv(a.judge))
        return 0
    if a.out is None or a.out.exists():
        print(f"--out {a.out}: give a file that does not exist yet", file=sys.stderr)
        return 2
    try:
        cpus = [int(c) for c in a.cpus.split(",")]
    except ValueError:
        print(f"--cpus {a.cpus!r}: not a comma list of CPU numbers", file=sys.stderr)
        return 2
    if a.seconds <= 0 or a.reps < 1 or not set(cpus) <= os.sched_getaffinity(0):
        print(
            f"--seconds {a.seconds} / --reps {a.reps} / --cpus {a.cpus}: out of range for this process",
            file=sys.stderr,
        )
        return 2
    binary = ROOT / "build" / "bin" / Path(a.binary).name
    if not os.access(binary, os.X_OK) or shutil.which("taskset") is None:
        print(f"{binary} not built (make kernels) or taskset missing", file=sys.stderr)
        return 3
    record_trace(a.out, binary, a.kernel_args or DEFAULT_ARGS, cpus, a.seconds, a.reps)
    print(f"trace: {a.out}")
    print_judgement(pd.read_csv(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
