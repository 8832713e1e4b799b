"""Scale benchmark of the analysis: N synthetic records (default 1,000,000), time and peak memory per phase.

Prints figures, asserts nothing. Phases: generating the campaign as the runner stores it (each kernel
process's records through sbcore/record_store.py's store: raw/<case_id>/facts.jsonl and reps.csv; with
`--records-format v1` one raw/<case_id>/records.jsonl per case, as campaigns before scalebench.run/2
hold them; each record with the fields today's runner writes: a machine-state
probe (its per-CPU times in probes.jsonl beside it, as the runner stores them), clock, scheduling,
sampling; a 64-core node, 1 to 128 threads; once,
into build/perf/, reused by later runs, so a directory generated before keeps its records), reading the
files once (into the page cache, where a campaign that just ran has them), loading cold
(every record parsed, no analysis cache), statistics (summary with
vectorised bootstrap, speedup, models, comparisons; each step's wall and CPU time is printed too; the
counters and records tables are written meanwhile, as `analyze` does it), writing the other CSV tables,
then (v1 only: it reads records.jsonl) a floor: decoding only (every record decoded by msgspec into
Python objects), then loading warm
(append-only cache). The cold analysis (load + statistics + CSV) runs --runs times, each in a process
of its own, its median reported; aim: <= 20 s and <= 2 GB peak RSS (of that process). An
integer-bound kernel timed before and after each cold analysis shows the host's phase (host_check);
the machine's CPU time stolen by the hypervisor, spent waiting for I/O and idle during the analysis
shows how much of the CPUs it really had.

    .venv/bin/python perf/perf_analysis.py [--records N] [--runs R] [--keep DIR] [--records-format v1]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline import Options, analyze, write_tables  # noqa: E402
from analysis.records.load import load_records  # noqa: E402
from sbcore import layout  # noqa: E402
from tests.synthetic_campaigns import bulk_specs, write_campaign  # noqa: E402

# Bumped whenever the runner stores records differently: a kept directory of an older format would
# measure files the runner no longer writes (2: per-CPU probe times in probes.jsonl; 3: counter
# values as likwid prints them, four decimals, event counts as integers; 4: the probe's integer-ALU
# block; 5: stored through record_store.store, scalebench.run/2, unless --records-format v1).
FIXTURE_FORMAT = 5


def peak_rss_gb() -> float:
    """Peak resident memory of this process and of its largest finished child (the parsing workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024**2


def cpu_s() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children: on a busy machine the
    wall time says little, the CPU time bounds what a quiet one would take."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def timed(label: str, fn):
    print(f"  load average {os.getloadavg()[0]:.2f} before: {label}", flush=True)
    start, (own0, kids0) = time.perf_counter(), cpu_s()
    value = fn()
    own1, kids1 = cpu_s()
    print(
        f"{label:<34} {time.perf_counter() - start:8.1f} s wall, CPU {own1 - own0:6.1f} s here "
        f"+ {kids1 - kids0:6.1f} s in workers   peak RSS {peak_rss_gb():5.2f} GB",
        flush=True,
    )
    return value


HOST_CHECK = ROOT / "build" / "bin" / "mcpi-c-serial"


def host_check() -> str:
    """The median time of an integer-multiply-bound kernel (Monte-Carlo pi, 10 M samples, 3 repetitions
    after a warm-up): this host has phases in which such code runs up to 1.8x slower, and parsing JSON
    is integer code. Printed before and after the cold analysis, so that a figure can be read with the
    phase it was measured in."""
    if not HOST_CHECK.exists():
        return "kernel not built (make kernels)"
    command = [str(HOST_CHECK), "--samples", "10000000", "--reps", "3", "--warmup", "1"]
    out = subprocess.run(command, capture_output=True, text=True, check=False).stdout
    times = sorted(r["wall_s"] for r in map(json.loads, out.splitlines()) if not r.get("warmup"))
    return f"{times[len(times) // 2]:.4f} s" if times else "no record"


_DECODER = msgspec.json.Decoder()


def _decode_cases(args: tuple[Path, list[str]]) -> int:
    campaign, case_ids = args
    decoded = 0
    for case_id in case_ids:
        data = (campaign / layout.RAW_DIR / case_id / layout.RECORDS_FILE).read_bytes()
        decoded += len(_DECODER.decode_lines(data))
    return decoded


def decode_only(campaign: Path, processes: int) -> int:
    """Every records.jsonl read and decoded into Python objects, one process per CPU, and
    nothing else: the floor of any analysis that reads the records as JSON with this parser."""
    case_ids = sorted(os.listdir(campaign / layout.RAW_DIR))
    chunks = [(campaign, case_ids[i : i + 400]) for i in range(0, len(case_ids), 400)]
    with ProcessPoolExecutor(processes) as pool:
        return sum(pool.map(_decode_cases, chunks))


def page_in(campaign: Path) -> int:
    """Reads every stored file of every case once (into the page cache); their total size."""
    total = 0
    for case_dir in (campaign / layout.RAW_DIR).iterdir():
        for path in case_dir.iterdir():
            with open(path, "rb") as handle:
                while chunk := handle.read(1 << 20):
                    total += len(chunk)
    return total


def machine_seconds() -> dict[str, float] | None:
    """CPU seconds of the whole machine so far (/proc/stat): time stolen by the hypervisor (other
    guests on this host), waiting for I/O, idle. Steal is what the host's slow phases are made of on
    these KVM guests: read around a run, it says how much of the machine the run really had."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
    return {name: int(value) / ticks for name, value in zip(names, fields[1:], strict=False)}


def machine_share(before: dict | None, after: dict | None, seconds: float) -> str:
    if before is None or after is None:
        return "machine time not readable (/proc/stat)"
    cpus = os.cpu_count() or 1
    spent = {name: after[name] - before[name] for name in ("steal", "iowait", "idle")}
    return (
        f"of its {seconds * cpus:.1f} CPU-s on {cpus} CPUs: stolen by the hypervisor {spent['steal']:.1f},"
        f" waiting for I/O {spent['iowait']:.1f}, idle {spent['idle']:.1f}"
    )


def cold_analysis(campaign: Path, resamples: int) -> None:
    """One cold analysis (load + statistics + CSV) as `analyze` runs it, with the host's phase before
    and after; its last line: RESULT {"seconds": ..., "load_s": ...}."""
    print(f"  host check before: {host_check()}")
    machine = machine_seconds()
    start = time.perf_counter()
    options = Options(n_resamples=resamples, seed=1, use_cache=False)
    # as `analyze` writes them: the big tables and those final early beside the statistics, the rest after
    result = timed("load cold + statistics", lambda: analyze(campaign, options))
    loaded = result.loaded
    print(f"  {loaded.n_files} files, {len(loaded.records)} records, {len(loaded.counters)} counter rows")
    t = result.timings
    print(
        f"  of which load {t['load']:.1f} s, statistics {t['statistics']:.1f} s"
        f" (summary {t['summary']:.1f} s, then speedup, models, comparisons),"
        f" checks and counter tables {t['checks and counter tables']:.1f} s"
        f" ({len(result.summary)} cases, {len(result.comparisons)} comparisons, {len(result.models)} fits)"
    )
    for name, seconds in t.items():
        if name.startswith("step: "):
            print(f"    {name[6:]:<32} {seconds:6.2f} s wall, CPU {t['cpu: ' + name[6:]]:6.2f} s here")
    timed("write tables", lambda: write_tables(result))
    seconds = time.perf_counter() - start
    print(f"  cold analysis: {seconds:.1f} s (load + statistics + CSV); host check after: {host_check()}")
    print(f"  {machine_share(machine, machine_seconds(), seconds)}")
    print("RESULT " + json.dumps({"seconds": seconds, "load_s": t["load"]}), flush=True)


def cold_analysis_process(campaign: Path, resamples: int) -> tuple[float, float, float]:
    """cold_analysis in a process of its own, as `scalebench analyze` runs: (seconds, load seconds, peak
    RSS in GB of that process)."""
    command = [sys.executable, __file__, "--cold-run", str(campaign), "--resamples", str(resamples)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    figures = None
    for line in child.stdout:
        if line.startswith("RESULT "):
            figures = json.loads(line[len("RESULT ") :])
        else:
            print(line, end="", flush=True)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode or figures is None:
        raise SystemExit(f"cold analysis failed (exit status {child.returncode})")
    return figures["seconds"], figures["load_s"], usage.ru_maxrss / 1024**2


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="synthetic records (default 1e6)")
    parser.add_argument("--reps", type=int, default=50, help="repetitions per case (default 50)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--runs", type=int, default=3, help="cold analyses, median reported (default 3)")
    parser.add_argument(
        "--records-format",
        choices=("v2", "v1"),
        default="v2",
        help="v2 (default): as the runner stores records; v1: records.jsonl, as campaigns before it",
    )
    parser.add_argument("--cold-run", type=Path, help=argparse.SUPPRESS)  # one cold analysis of this campaign
    parser.add_argument(
        "--keep", type=Path, help="generate into / reuse this directory (default build/perf/analysis-vF-N-R)"
    )
    args = parser.parse_args()
    if args.cold_run:
        cold_analysis(args.cold_run, args.resamples)
        return 0
    # A million files take minutes to generate: keep them for the next run instead of leaking a temp dir.
    tail = "" if args.records_format == "v2" else "-records-v1"
    root = (
        args.keep or ROOT / "build" / "perf" / f"analysis-v{FIXTURE_FORMAT}-{args.records}-{args.reps}{tail}"
    )
    root.mkdir(parents=True, exist_ok=True)
    campaign = root / "bulk"
    specs, nodes = bulk_specs(args.records, args.reps)
    print(f"{len(specs)} cases x {args.reps} reps on {os.cpu_count()} CPUs, in {campaign}")
    if not (campaign / "cases.jsonl").exists():
        timed(
            "generate campaign (once)",
            lambda: write_campaign(
                root, "bulk", specs, nodes, processes=os.cpu_count(), records_format=args.records_format
            ),
        )
    cache = campaign / "analysis" / ".cache"
    shutil.rmtree(cache, ignore_errors=True)  # derived data: a cold load must parse every file
    os.system("sync")
    # The files in the page cache, as right after a campaign ran: the figures are the analysis's, not the
    # disk's (the first read of a 5.9 GB campaign from this VM's disk takes ~10 s more).
    read_bytes = timed("read every stored file once (page cache)", lambda: page_in(campaign))
    print(f"  {read_bytes / 1e9:.1f} GB")
    # Several cold analyses, each between two host checks: the host's slow phases last minutes and
    # move this CPU-bound job by up to half, so one run says little and an average hides the phase.
    colds = []
    for run in range(1, args.runs + 1):
        print(f"cold analysis {run} of {args.runs}, in a process of its own")
        colds.append(cold_analysis_process(campaign, args.resamples))
    runs = ", ".join(f"{seconds:.1f} s / {peak:.2f} GB" for seconds, _, peak in colds)
    print(
        f"cold analysis, median of {len(colds)}: {statistics.median(c[0] for c in colds):.1f} s"
        " (aim <= 20 s),"
        f" peak RSS {max(c[2] for c in colds):.2f} GB (aim <= 2 GB); runs: {runs}"
    )
    if args.records_format == "v1":  # the floor reads records.jsonl
        decoded = timed(
            "decode only (floor: msgspec, Python path)", lambda: decode_only(campaign, os.cpu_count() or 1)
        )
        print(f"  {decoded} records decoded")
    else:
        print("decode only: the floor of reading records.jsonl, measured with --records-format v1")
    timed("load, cold, filling the cache", lambda: load_records(campaign))
    timed("load, warm (append-only cache)", lambda: load_records(campaign))
    return 0


if __name__ == "__main__":
    sys.exit(main())
