"""The performance gate on real kernels: how often `check --references` cries wolf on unchanged reruns,
and whether it catches a real slowdown.

A small real campaign (mcpi serial and OpenMP on 2 threads, 10 repetitions each) becomes the references
(`check --write-references`, band +-10 %); then RERUNS (default 20, at least 20 for the figure to mean
anything) unchanged reruns are each checked against them: the false-alarm rate is the share of reruns
with a case `regressed` (and of cases). Then one rerun with a competing load (a busy loop pinned to
CPU 0, where `pin = "compact"` puts the first worker) is checked: detected when a case is `regressed`.
Prints the figures with the load average before and after (a busy machine is not a quiet one); asserts
nothing. `python perf/perf_gate.py [RERUNS]`.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCALEBENCH = [sys.executable, str(ROOT / "scalebench")]
EXPERIMENT = """
description = "performance gate: false alarms and detection"
repetitions = 10
warmup = 1
[env]
OMP_PROC_BIND = "false"
[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["compact"]
params = { samples = [20000000], seed = [7] }
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [2]
pin = ["compact"]
params = { samples = [20000000], seed = [7], schedule = ["static"] }
"""


def scalebench(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*SCALEBENCH, *map(str, args)], cwd=ROOT, capture_output=True, text=True)


def run_campaign(experiment: Path, results: Path, name: str) -> None:
    run = scalebench("run", experiment, "--results-dir", results, "--name", name, "--no-progress")
    if run.returncode != 0:
        sys.exit(f"run {name} failed: {run.stderr.strip()}")


def verdicts(results: Path, name: str, references: Path) -> list[str]:
    run = scalebench("check", name, "--references", references, "--json", "--results-dir", results)
    if run.returncode not in (0, 1):
        sys.exit(f"check {name} failed: {run.stderr.strip()}")
    return [case["verdict"] for case in json.loads(run.stdout)["cases"]]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def busy_loop_on_cpu0() -> subprocess.Popen:
    code = "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


def main() -> None:
    reruns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print(f"load average at start (1, 5, 15 min): {load()}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        experiment = Path(tmp) / "gate.toml"
        experiment.write_text(EXPERIMENT)
        references = Path(tmp) / "references.toml"
        run_campaign(experiment, results, "reference")
        made = scalebench("check", "reference", "--write-references", references, "--results-dir", results)
        if made.returncode != 0:
            sys.exit(made.stderr.strip())
        counts: dict[str, int] = {}
        alarms = 0
        for i in range(reruns):
            name = f"unchanged-{i:02d}"
            run_campaign(experiment, results, name)
            found = verdicts(results, name, references)
            for v in found:
                counts[v] = counts.get(v, 0) + 1
            alarms += "regressed" in found
        cases = sum(counts.values())
        print(
            f"unchanged reruns: {reruns}; false alarms (a rerun with a case regressed): {alarms}/{reruns} "
            f"= {alarms / max(reruns, 1):.0%}; verdicts of {cases} cases: "
            + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        )
        print(f"load average after the unchanged reruns: {load()}")
        busy = busy_loop_on_cpu0()
        try:
            run_campaign(experiment, results, "loaded")
        finally:
            busy.kill()
            busy.wait()
        found = verdicts(results, "loaded", references)
        print(
            "rerun with a busy loop on CPU 0: "
            + ", ".join(found)
            + (" -> detected" if "regressed" in found else " -> NOT detected")
        )
        print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
