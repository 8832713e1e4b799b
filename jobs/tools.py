"""Standard tools side by side with our microkernels: `perf bench sched pipe` and `stress-ng --switch`
(context switch) and `cyclictest` (wake-up latency), each run and parsed into a scalebench.run/1
record whose `result` uses our keys (op, mean_s, ...), so the analysis can put ours next to theirs.

What one "operation" is differs between the tools; each ToolSpec states how its figure is turned into
ours (`per_switch_divisor`): perf bench sched pipe reports one round trip (two switches) per op,
stress-ng's switch stressor reports nanoseconds per context switch of a one-way pipe stream.
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from sbcore.argtypes import int_at_least
from sbcore.atomic import write_new
from sbcore.errors import ScalebenchError

SCHEMA = "scalebench.run/1"


@dataclass(frozen=True)
class ToolResult:
    """What a tool reported, in seconds per operation as we define it."""

    op: str
    result: dict
    work: int


@dataclass(frozen=True)
class ToolSpec:
    kernel: str  # the record's `kernel`
    model: str  # the record's `model`: which benchmark of the tool
    executable: str
    compares_with: str  # our binary and its op, e.g. "osbench-c-serial ctxsw-process"
    definition: str  # why their number and ours are (or are not) the same quantity
    args: dict = field(default_factory=dict)


def _fnv1a64(text: str) -> str:
    # the record's checksum format; here over the tool's own output, to tell runs apart
    h = 0xCBF29CE484222325
    for b in hashlib.sha256(text.encode()).digest():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{h:016x}"


def parse_perf_pipe(text: str) -> ToolResult:
    """'  8.317000 usecs/op' of perf bench sched pipe: one op = one round trip = two switches."""
    m = re.search(r"([0-9.]+)\s+usecs/op", text)
    loops = re.search(r"Executed\s+(\d+)\s+pipe operations", text)
    if not m:
        raise ScalebenchError(f"perf bench sched pipe: no 'usecs/op' line in its output: {text[-300:]!r}")
    per_round_trip = float(m.group(1)) * 1e-6
    n = int(loops.group(1)) if loops else 0
    return ToolResult(
        "switch", {"op": "switch", "mean_s": per_round_trip / 2, "round_trip_s": per_round_trip}, n
    )


def parse_stress_switch(text: str) -> ToolResult:
    """'13574.12 nanosecs per context switch (pipe method)' of stress-ng --switch --metrics."""
    m = re.search(r"([0-9.]+)\s+nanosecs per context switch", text)
    ops = re.search(r"switch\s+(\d+)\s+[0-9.]+\s+[0-9.]+", text)
    if not m:
        raise ScalebenchError(f"stress-ng --switch: no 'nanosecs per context switch' line: {text[-300:]!r}")
    return ToolResult(
        "switch", {"op": "switch", "mean_s": float(m.group(1)) * 1e-9}, int(ops.group(1)) if ops else 0
    )


def parse_cyclictest(text: str) -> ToolResult:
    """'T: 0 ( 8920) P:80 I:1000 C:    200 Min:     16 Act:   50 Avg:   41 Max:     499' (µs)."""
    m = re.search(r"C:\s*(\d+)\s+Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)", text)
    if not m:
        raise ScalebenchError(
            f"cyclictest: no 'T: ... Min: Act: Avg: Max:' line in its output: {text[-300:]!r}"
        )
    count, lo, _act, avg, hi = (int(g) for g in m.groups())
    return ToolResult(
        "wakeup_lateness",
        {
            "op": "wakeup_lateness",
            "min_s": lo * 1e-6,
            "mean_s": avg * 1e-6,
            "max_s": hi * 1e-6,
            "samples": count,
        },
        count,
    )


PARSERS = {"perf-bench": parse_perf_pipe, "stress-ng": parse_stress_switch, "cyclictest": parse_cyclictest}


def command(
    kind: str, *, cpu: int | None, loops: int, period_us: int = 1000, fifo: bool = False
) -> list[str]:
    """The tool's command line; `cpu` pins it (taskset) so both parties share that CPU, like ours."""
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    if kind == "perf-bench":
        return [*pin, "perf", "bench", "sched", "pipe", "-l", str(loops)]
    if kind == "stress-ng":
        return [*pin, "stress-ng", "--switch", "1", "--switch-ops", str(loops), "--metrics", "-t", "60"]
    if kind == "cyclictest":
        prio = ["-p", "80"] if fifo else []
        affinity = ["-a", str(cpu)] if cpu is not None else []
        return ["cyclictest", "-q", "-m", "-t", "1", "-l", str(loops), "-i", str(period_us), *prio, *affinity]
    raise ScalebenchError(f"unknown tool '{kind}' (perf-bench|stress-ng|cyclictest)")


MODELS = {"perf-bench": "sched-pipe", "stress-ng": "switch", "cyclictest": "clock-nanosleep"}
DEFINITIONS = {
    "perf-bench": "one op = a round trip over two pipes = two switches; halved to compare per switch",
    "stress-ng": "one-way pipe stream parent->child: a switch may carry several messages, so it is not "
    "a strict ping-pong; expect it to differ from ours by more than the noise",
    "cyclictest": "lateness of clock_nanosleep(TIMER_ABSTIME) wake-ups, integer µs; the same quantity as "
    "timing-c-serial's wakeup_lateness; cyclictest also holds /dev/cpu_dma_latency at 0 (no deep C-states) "
    "and mlocks its memory, so unpinned SCHED_OTHER figures may differ by the idle-exit time",
}


def run_tool(
    kind: str,
    *,
    cpu: int | None,
    loops: int,
    period_us: int = 1000,
    fifo: bool = False,
    rep: int = 0,
    timeout: float = 120,
) -> dict:
    """Runs one tool and returns its record (same schema as a kernel's)."""
    argv = command(kind, cpu=cpu, loops=loops, period_us=period_us, fifo=fifo)
    exe = argv[3] if argv[0] == "taskset" else argv[0]
    if shutil.which(exe) is None:
        raise ScalebenchError(
            f"{exe}: not installed (scripts/setup.sh installs linux-perf, rt-tests, stress-ng)"
        )
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ScalebenchError(f"{' '.join(argv)}: no result within {timeout:g} s") from None
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise ScalebenchError(f"{' '.join(argv)}: exit status {proc.returncode}: {text.strip()[-300:]}")
    parsed = PARSERS[kind](text)
    result = {**parsed.result, "definition": DEFINITIONS[kind], "command": " ".join(argv)}
    return {
        "schema": SCHEMA,
        "kernel": kind,
        "lang": "tool",
        "model": MODELS[kind],
        "schedule": "none",
        "sync": "none",
        "inner": "scalar",
        "threads": 1,
        "ranks": 1,
        "params": {"loops": loops, "cpu": cpu, "period_us": period_us, "policy": "fifo" if fifo else "other"},
        "rep": rep,
        "warmup": False,
        "wall_s": wall,
        "setup_s": 0.0,
        "cpu_user_s": max(0.0, after.ru_utime - before.ru_utime),
        "cpu_sys_s": max(0.0, after.ru_stime - before.ru_stime),
        "ctx_voluntary": max(0, after.ru_nvcsw - before.ru_nvcsw),
        "ctx_involuntary": max(0, after.ru_nivcsw - before.ru_nivcsw),
        "os_threads": 1,
        "placement": [[cpu if cpu is not None else -1, cpu if cpu is not None else -1]],
        "work": parsed.work,
        "checksum": _fnv1a64(text),
        "result": result,
        "timer_res_s": time.get_clock_info("monotonic").resolution,
        "build": {"compiler": exe, "flags": "", "fp_contract": "default"},
        "host": socket.gethostname(),
        "started": started,
    }


def our_record(binary: Path, *args: str, timeout: float = 120) -> dict:
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise ScalebenchError(
            f"{binary.name} {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}"
        )
    return json.loads(proc.stdout.splitlines()[-1])


def side_by_side(bin_dir: Path, *, loops: int, cpu: int, period_us: int, reps: int) -> list[dict]:
    """Ours and theirs, interleaved per repetition so that both see the same machine state."""
    osb, tim = bin_dir / "osbench-c-serial", bin_dir / "timing-c-serial"
    records = []
    for rep in range(reps):
        pin = ["taskset", "-c", str(cpu)]
        for party in ("ctxsw-process", "ctxsw-thread"):
            rec = our_record(Path("/usr/bin/env"), *pin, str(osb), "--op", party, "--ops", str(loops))
            records.append({**rec, "rep": rep})
        records.append(run_tool("perf-bench", cpu=cpu, loops=loops, rep=rep))
        records.append(run_tool("stress-ng", cpu=cpu, loops=loops, rep=rep))
        for fifo in (False, True):
            args = ["--period-us", str(period_us), "--count", str(max(2, loops // 10)), "--pin", "yes"]
            args += ["--policy", "fifo" if fifo else "other"]
            rec = our_record(Path("/usr/bin/env"), *pin, str(tim), *args)
            records.append({**rec, "rep": rep})
            records.append(
                run_tool(
                    "cyclictest", cpu=cpu, loops=max(2, loops // 10), period_us=period_us, fifo=fifo, rep=rep
                )
            )
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobs.tools",
        description="Run our context-switch and wake-up kernels and perf bench sched pipe, stress-ng "
        "--switch and cyclictest side by side; write all records (one JSON per line) to --out.",
    )
    parser.add_argument("--out", type=Path, required=True, help="records file to create (must not exist)")
    parser.add_argument(
        "--loops", type=int_at_least(1), default=20000, help="round trips per run (default 20000)"
    )
    parser.add_argument("--cpu", type=int, default=0, help="CPU both parties share (default 0)")
    parser.add_argument(
        "--period-us", type=int_at_least(1), default=1000, help="wake-up period (default 1000)"
    )
    parser.add_argument("--reps", type=int_at_least(1), default=3, help="repetitions (default 3)")
    parser.add_argument(
        "--bin-dir", type=Path, default=Path(os.environ.get("SCALEBENCH_BIN_DIR", "build/bin"))
    )
    args = parser.parse_args(argv)
    if args.out.exists():
        print(
            f"python -m jobs.tools: --out: '{args.out}' exists; records are never overwritten",
            file=sys.stderr,
        )
        return 2
    try:
        records = side_by_side(
            args.bin_dir, loops=args.loops, cpu=args.cpu, period_us=args.period_us, reps=args.reps
        )
    except ScalebenchError as err:
        print(f"python -m jobs.tools: {err}", file=sys.stderr)
        return 1
    if not write_new(args.out, "".join(json.dumps(r) + "\n" for r in records)):
        print(
            f"python -m jobs.tools: --out: '{args.out}' appeared meanwhile; not overwritten", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
