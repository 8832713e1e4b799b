"""Standard tools as scalebench kernels: `perf bench sched pipe`, `stress-ng --switch` and `cyclictest`,
each behind a binary in build/bin (perfbench-tool-pipe, stressng-tool-switch, cyclictest-tool-nanosleep,
written by kernels/tools.mk) that speaks the kernels' protocol: `--help` lists its options, `--reps R
--warmup W` runs the tool W + R times and prints one scalebench.run/1 record per run on stdout, bad
arguments exit 2 with one line. So an experiment names a tool in a [[sweep]] like any kernel, the runner
runs it in the same shuffled order, pinned the same way, and its records land in raw/<case_id>/.

Each record's `result` states the tool's figure in our definition of one operation (`mean_s` etc.), the
figure as the tool printed it (`their_op_s`), how many of our operations one of theirs is
(`our_ops_per_their_op`), the counted context switches per tool operation where that checks the
definition, and `compares_with`: the kernel and params of our case measuring the same quantity.
"""

import datetime
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from sbcore.child import die_with_parent
from sbcore.errors import ScalebenchError, UsageError
from sbcore.harness_env import PIN_CPUS as HARNESS_ENV
from sbcore.record_fields import SCHEMA
from sbcore.text_checksum import text_checksum

TIMEOUT_S = 600  # per tool run; the runner's case timeout bounds the whole invocation anyway


@dataclass(frozen=True)
class Option:
    name: str
    default: str
    help: str
    choices: tuple[str, ...] = ()  # empty: an integer in [low, high]
    low: int = 1
    high: int = 10**8

    def check(self, value: str) -> str:
        if self.choices:
            if value not in self.choices:
                raise UsageError(f"--{self.name}: '{value}' is not one of {'|'.join(self.choices)}")
            return value
        if not re.fullmatch(r"[0-9]+", value) or not self.low <= int(value) <= self.high:
            raise UsageError(f"--{self.name}: '{value}' is not an integer in {self.low}..{self.high}")
        return str(int(value))


@dataclass(frozen=True)
class Parsed:
    """A tool run's figures: result keys (seconds per OUR operation) and the tool's operation count."""

    result: dict
    work: int


@dataclass(frozen=True)
class Tool:
    kernel: str
    model: str
    executable: str
    options: tuple[Option, ...]
    help: str
    command: Callable[[dict, int | None], list[str]]  # (options, the one CPU we are pinned to) -> argv
    parse: Callable[[str], Parsed]
    compares_with: Callable[[dict], dict]  # our kernel and params measuring the same quantity
    definition: Callable[[dict], str]
    counts_switches: bool = False  # the tool's processes' context switches per op check the definition
    # ours / theirs that the definitions predict: the same quantity within 25 % either way, unless the
    # tool's operation does less or more than ours (then the range follows from what it leaves out)
    expected_ratio: tuple[float, float] = (0.75, 1 / 0.75)


def _us(match: re.Match) -> float:
    return float(match.group(1)) * 1e-6


def parse_perf_pipe(text: str) -> Parsed:
    """'  8.317000 usecs/op' of perf bench sched pipe: one op = one round trip = two switches."""
    m = re.search(r"([0-9.]+)\s+usecs/op", text)
    loops = re.search(r"Executed\s+(\d+)\s+pipe operations", text)
    if not m:
        raise ScalebenchError(f"perf bench sched pipe: no 'usecs/op' line in its output: {text[-300:]!r}")
    per_round_trip = _us(m)
    result = {"op": "switch", "mean_s": per_round_trip / 2, "their_op_s": per_round_trip}
    return Parsed(result | {"our_ops_per_their_op": 2}, int(loops.group(1)) if loops else 0)


def parse_stress_switch(text: str) -> Parsed:
    """'13574.12 nanosecs per context switch (pipe method)' of stress-ng --switch --metrics: time per
    message through a one-slot pipe, which is a round trip writer -> reader -> writer = two switches."""
    m = re.search(r"([0-9.]+)\s+nanosecs per context switch", text)
    ops = re.search(r"switch\s+(\d+)\s+[0-9.]+\s+[0-9.]+", text)
    if not m:
        raise ScalebenchError(f"stress-ng --switch: no 'nanosecs per context switch' line: {text[-300:]!r}")
    per_message = float(m.group(1)) * 1e-9
    result = {"op": "switch", "mean_s": per_message / 2, "their_op_s": per_message, "our_ops_per_their_op": 2}
    return Parsed(result, int(ops.group(1)) if ops else 0)


def parse_cyclictest(text: str) -> Parsed:
    """cyclictest -v -N: one '<thread>: <cycle>: <latency ns>' line per wake-up, then the summary
    'T: 0 ( 8920) P:80 I:1000 C: 200 Min: ... Avg: ... Max: ...'; the statistics are ours, over its
    samples."""
    samples = [int(v) * 1e-9 for v in re.findall(r"(?m)^\s*0:\s*\d+:\s*(-?\d+)\s*$", text)]
    summary = re.search(r"C:\s*(\d+)\s+Min:\s*(-?\d+)\s+Act:\s*-?\d+\s+Avg:\s*(-?\d+)\s+Max:\s*(-?\d+)", text)
    if not summary or not samples:
        raise ScalebenchError(f"cyclictest: no per-wake-up lines and 'T: ... Avg:' summary: {text[-300:]!r}")
    ordered = sorted(samples)
    result = {
        "op": "wakeup_lateness",
        "samples": len(samples),
        "ops": len(samples),
        "min_s": ordered[0],
        "median_s": statistics.median(ordered),
        "mean_s": statistics.fmean(ordered),
        "p99_s": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "max_s": ordered[-1],
        "their_op_s": int(summary.group(3)) * 1e-9,  # its own Avg
        "our_ops_per_their_op": 1,
    }
    return Parsed(result, int(summary.group(1)))


def _policy_prefix(opts: dict) -> list[str]:
    # SCHED_FIFO priority 50 for the tool and the partner it creates (inherited), as osbench --policy fifo
    return ["chrt", "-f", "50"] if opts["policy"] == "fifo" else []


def _perf_command(opts: dict, _cpu: int | None) -> list[str]:
    return [
        *_policy_prefix(opts),
        "perf",
        "bench",
        "sched",
        "pipe",
        "-l",
        opts["loops"],
        *(["-T"] if opts["mode"] == "thread" else []),
    ]


def _stress_command(opts: dict, _cpu: int | None) -> list[str]:
    return [
        *_policy_prefix(opts),
        "stress-ng",
        "--switch",
        "1",
        "--switch-method",
        "pipe",
        "--switch-ops",
        opts["ops"],
        "--metrics",
    ]


def _cyclictest_command(opts: dict, cpu: int | None) -> list[str]:
    # --laptop: leave /dev/cpu_dma_latency alone, so the CPU idles as it does under our kernel (cyclictest
    # would otherwise hold it at 0 and forbid idle states that take time to leave).
    argv = ["cyclictest", "-q", "-m", "-v", "-N", "--laptop", "-t", "1"]
    argv += ["-l", opts["count"], "-i", opts["period-us"]]
    argv += ["-p", "80"] if opts["policy"] == "fifo" else ["--policy", "other"]
    if opts["pin"] == "yes" and cpu is not None:
        argv += ["-a", str(cpu)]
    return argv


PERF_DEFINITION = (
    "perf bench sched pipe: one op = a round trip over two pipes between two {parties} = two context "
    "switches on one CPU (counted: switches_per_their_op); halved to give seconds per switch, as ours "
    "(a ping-pong round trip timed and divided by 2). Its clock also covers creating and reaping the "
    "partner (fork, exit, waitpid or two pthread_create/join): a fixed cost per run, 0.15 ms alone but up "
    "to 10 ms under SCHED_OTHER on a busy 2-vCPU guest, so a run must be long against it (seed-001: 20000 "
    "loops)"
)
STRESS_DEFINITION = (
    "stress-ng --switch (pipe method): one op = one 1-byte message through a one-slot pipe from parent to "
    "child; on one CPU the writer blocks until the reader took it, so a message is a round trip writer -> "
    "reader -> writer = two context switches (counted: switches_per_their_op); halved to give seconds per "
    "switch. But its reader answers nothing: per two switches it makes one write and one read, where our "
    "ping-pong (and perf bench) makes two of each. Ours = s + 2p per switch, theirs = s + p (s: the switch, "
    "p: one pipe call), so ours / theirs lies between 1 (p negligible) and 2 (s negligible). That is the "
    "SCHED_FIFO pattern; under SCHED_OTHER the woken reader preempts the writer and makes an extra read per "
    "message, which brings the ratio nearer to 1"
)
CYCLIC_DEFINITION = (
    "cyclictest: lateness of clock_nanosleep(TIMER_ABSTIME) wake-ups, per sample in ns (-v -N), the same "
    "quantity as timing-c-serial's wakeup_lateness; both compared by the median. Run with --laptop (it "
    "leaves /dev/cpu_dma_latency alone, as we do) and -m (mlockall; we do not). A wake-up late by more than "
    "a period makes cyclictest skip the missed deadlines while ours wakes at once for each, which moves the "
    "mean and the tail, not the median"
)

POLICY = Option(
    "policy",
    "other",
    "scheduling policy: other | fifo (chrt -f 50, as osbench --policy fifo)",
    ("other", "fifo"),
)
PARTIES = {"process": "processes", "thread": "threads"}

TOOLS = {
    "perfbench-tool-pipe": Tool(
        kernel="perfbench",
        model="pipe",
        executable="perf",
        options=(
            Option("loops", "20000", "round trips per run, 1..10^8"),
            Option("mode", "process", "the two parties: process | thread (perf's -T)", ("process", "thread")),
            POLICY,
        ),
        help="perf bench sched pipe: a token ping-pong over two pipes between two processes or threads;\n"
        "result.mean_s = its usecs/op / 2 (one op is a round trip = two switches).",
        command=_perf_command,
        parse=parse_perf_pipe,
        compares_with=lambda o: {
            "kernel": "osbench",
            "params": {"op": f"ctxsw-{o['mode']}", "cpus": "same", "policy": o["policy"]},
            "stat": "mean_s",
        },
        definition=lambda o: PERF_DEFINITION.format(parties=PARTIES[o["mode"]]),
        counts_switches=True,
    ),
    "stressng-tool-switch": Tool(
        kernel="stressng",
        model="switch",
        executable="stress-ng",
        options=(Option("ops", "20000", "messages per run (its bogo ops), 1..10^8"), POLICY),
        help="stress-ng's switch stressor, one worker, pipe method: messages through a one-slot pipe,\n"
        "parent to child; result.mean_s = its nanosecs per context switch / 2 (one message is a round\n"
        "trip = two switches).",
        command=_stress_command,
        parse=parse_stress_switch,
        compares_with=lambda o: {
            "kernel": "osbench",
            "params": {"op": "ctxsw-process", "cpus": "same", "policy": o["policy"]},
            "stat": "mean_s",
        },
        definition=lambda o: STRESS_DEFINITION,
        counts_switches=True,
        expected_ratio=(1.0, 2.0),
    ),
    "cyclictest-tool-nanosleep": Tool(
        kernel="cyclictest",
        model="nanosleep",
        executable="cyclictest",
        options=(
            Option("period-us", "1000", "period in microseconds (its -i), 1..10^6", low=1, high=10**6),
            Option("count", "1000", "wake-ups per run (its -l), 2..10^7", low=2, high=10**7),
            Option("policy", "other", "other | fifo (priority 80, as timing-c-serial)", ("other", "fifo")),
            Option(
                "pin", "yes", "pin its thread to the CPU this process is on (-a), yes | no", ("yes", "no")
            ),
        ),
        help="cyclictest (one thread, per-sample output in ns, laptop mode): one periodic thread sleeping\n"
        "to absolute deadlines; result: min/median/mean/p99/max lateness over its per-wake-up samples.",
        command=_cyclictest_command,
        parse=parse_cyclictest,
        compares_with=lambda o: {
            "kernel": "timing",
            "params": {
                "period-us": o["period-us"],
                "policy": o["policy"],
                "pin": o["pin"],
                "load": "none",
                "wait": "sleep",
                "udp": "no",
            },
            "stat": "median_s",
        },
        definition=lambda o: CYCLIC_DEFINITION,
    ),
}


def current_cpu() -> int:
    """The CPU this process runs on now (field 39 of /proc/self/stat)."""
    with open("/proc/self/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[36])


def pinned_cpu() -> int | None:
    """The one CPU this process may run on, else None. Like a kernel's harness, a tool takes the runner's
    pin list (SB_PIN_CPUS) and pins itself to the entry of worker 0; otherwise the runner (or a
    likwid wrapper) may have pinned the process already."""
    listed = os.environ.get(HARNESS_ENV)
    if listed:
        cpu = int(listed.split(",")[0])
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError as err:
            raise ScalebenchError(
                f"{HARNESS_ENV}={listed}: pinning to CPU {cpu} refused by the OS: {err}"
            ) from None
        return cpu
    allowed = os.sched_getaffinity(0)
    return next(iter(allowed)) if len(allowed) == 1 else None


def run_tool(name: str, opts: dict, rep: int, warmup: bool) -> dict:
    """Runs the tool once and returns its record."""
    tool = TOOLS[name]
    if shutil.which(tool.executable) is None:
        raise ScalebenchError(f"{tool.executable}: not installed (scripts/setup.sh installs it)")
    cpu = pinned_cpu()
    if cpu is None and opts.get("pin") == "yes":
        cpu = current_cpu()
    argv = tool.command(opts, cpu)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False, preexec_fn=die_with_parent()
        )
    except subprocess.TimeoutExpired:
        raise ScalebenchError(f"{' '.join(argv)}: no result within {TIMEOUT_S} s") from None
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        last = text.strip().splitlines()[-1:] or [""]
        raise ScalebenchError(f"{' '.join(argv)}: exit status {proc.returncode}: {last[0][:300]}")
    parsed = tool.parse(text)
    voluntary = max(0, after.ru_nvcsw - before.ru_nvcsw)
    involuntary = max(0, after.ru_nivcsw - before.ru_nivcsw)
    result = dict(parsed.result)
    if tool.counts_switches and parsed.work:
        # every switch away from one of the tool's tasks is a voluntary or involuntary switch of that task
        result["switches_per_their_op"] = (voluntary + involuntary) / parsed.work
    result |= {
        "compares_with": tool.compares_with(opts),
        "definition": tool.definition(opts),
        "expected_ratio": list(tool.expected_ratio),
        "command": argv,
    }
    where = cpu if cpu is not None else -1  # pinned by the runner, or by the tool's own -a
    return {
        "schema": SCHEMA,
        "kernel": tool.kernel,
        "lang": "tool",
        "model": tool.model,
        "schedule": "none",
        "sync": "none",
        "inner": "scalar",
        "threads": 1,
        "ranks": 1,
        "params": dict(opts),
        "rep": rep,
        "warmup": warmup,
        "wall_s": wall,
        "setup_s": 0.0,
        "cpu_user_s": max(0.0, after.ru_utime - before.ru_utime),
        "cpu_sys_s": max(0.0, after.ru_stime - before.ru_stime),
        "ctx_voluntary": voluntary,
        "ctx_involuntary": involuntary,
        "os_threads": 1,
        "placement": [[where, where]],
        "work": parsed.work,
        "checksum": text_checksum(f"{tool.kernel} {parsed.work}"),
        "result": result,
        "timer_res_s": time.get_clock_info("monotonic").resolution,
        "build": {"compiler": tool.executable, "flags": "", "fp_contract": "default"},
        "host": socket.gethostname(),
        "started": started,
    }


def usage(name: str) -> str:
    tool = TOOLS[name]
    lines = [
        f"Usage: {name} [OPTION]...",
        f"scalebench kernel: {tool.kernel}, language tool, model {tool.model}: the standard tool run by",
        "kernels/tools/standard_tools.py; prints one JSON record per run on stdout",
        "(schema scalebench.run/1).",
        "",
        "Common options:",
        "  --reps K           measured runs, 1..1000000 (default 1)",
        "  --warmup W         warm-up runs before them, 0..1000000 (default 0)",
        "  --check-args       validate the options and exit: 0, or 2 with the reason (runs nothing)",
        "  -h, --help         this text",
        "",
        "Tool options:",
        *(f"  --{o.name:<16} {o.help} (default {o.default})" for o in tool.options),
        "",
        tool.help,
        "",
        "Exit status: 0 ok, 1 runtime failure (tool missing or failing), 2 bad arguments (one line on",
        "stderr).",
    ]
    return "\n".join(lines)


def parse_args(name: str, argv: list[str]) -> tuple[dict, int, int]:
    """(tool options, reps, warmup); UsageError naming the option and value otherwise."""
    tool = TOOLS[name]
    known = {o.name: o for o in tool.options}
    common = {
        "reps": Option("reps", "1", "", low=1, high=10**6),
        "warmup": Option("warmup", "0", "", low=0, high=10**6),
    }
    values = {o.name: o.default for o in (*tool.options, *common.values())}
    i = 0
    while i < len(argv):
        arg = argv[i]
        key, eq, inline = arg[2:].partition("=")
        if not arg.startswith("--") or (key not in known and key not in common):
            raise UsageError(f"unknown option '{arg}' (see --help)")
        if eq:
            value = inline
        elif i + 1 < len(argv):
            i += 1
            value = argv[i]
        else:
            raise UsageError(f"--{key}: missing value")
        values[key] = (known.get(key) or common[key]).check(value)
        i += 1
    opts = {o.name: values[o.name] for o in tool.options}
    return opts, int(values["reps"]), int(values["warmup"])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in TOOLS:
        print(f"standard_tools.py: first argument: one of {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    name, args = argv[0], argv[1:]
    if "-h" in args or "--help" in args:
        print(usage(name))
        return 0
    check_only = "--check-args" in args
    try:
        opts, reps, warmup = parse_args(name, [a for a in args if a != "--check-args"])
    except UsageError as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 2
    if check_only:
        return 0
    try:
        for k in range(warmup + reps):
            record = run_tool(name, opts, rep=k - warmup if k >= warmup else k, warmup=k < warmup)
            print(json.dumps(record), flush=True)
    except ScalebenchError as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
