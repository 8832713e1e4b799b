"""The performance gate on real kernels: how often `check --references` cries wolf on unchanged reruns,
and whether it catches a real slowdown.

A small real campaign (mcpi serial and OpenMP on 2 threads, 10 repetitions each) becomes the references
(`check --write-references`, band +-10 %); then RERUNS (default 20, at least 20 for the figure to mean
anything) unchanged reruns are each checked against them: the false-alarm rate is the share of reruns
with a case `regressed` (and of cases), judged both ways on the same reruns, side by side: on the
undisturbed repetitions (the default, analysis/stats/undisturbed.py) and on all of them (`--repetitions
all`); references are written each way too. Then two reruns that should not pass: a real code
slowdown (the same cases with the vector loop capped at AVX2 by SB_INNER_PATH where the machine has
AVX-512, else at the scalar loop: the code, not the host, is slower; detected when a case is
`regressed`), and a rerun with a competing load (a busy loop pinned to
CPU 0, where `pin = "compact"` puts the first worker): judged on all repetitions it is `regressed`;
judged on the undisturbed ones, the probe sees the host disturbed and the answer is `inconclusive (host
disturbed)`, which is the truth: the host, not the code, was slower.
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
params = { samples = [20000000], seed = [7], inner = ["simd"] }
[[sweep]]
binary = ["mcpi-c-omp"]
threads = [2]
pin = ["compact"]
params = { samples = [20000000], seed = [7], schedule = ["static"], inner = ["simd"] }
"""


def scalebench(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*SCALEBENCH, *map(str, args)], cwd=ROOT, capture_output=True, text=True)


def run_campaign(experiment: Path, results: Path, name: str, env: dict | None = None) -> None:
    run = subprocess.run(
        [*SCALEBENCH, "run", str(experiment), "--results-dir", str(results), "--name", name, "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})},
    )  # fmt: skip
    if run.returncode != 0:
        sys.exit(f"run {name} failed: {run.stderr.strip()}")


BASES = ("undisturbed", "all")


def verdicts(results: Path, name: str, references: Path, basis: str) -> list[str]:
    """The verdict of each case; "inconclusive (host disturbed)" where too few undisturbed remained."""
    run = scalebench(
        "check", name, "--references", references, "--json", "--results-dir", results, "--repetitions", basis
    )
    if run.returncode not in (0, 1):
        sys.exit(f"check {name} failed: {run.stderr.strip()}")
    cases = json.loads(run.stdout)["cases"]
    return [c["verdict"] + (" (host disturbed)" if c["reason"] else "") for c in cases]


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
        references = {basis: Path(tmp) / f"references-{basis}.toml" for basis in BASES}
        run_campaign(experiment, results, "reference")
        for basis, path in references.items():
            made = scalebench(
                "check", "reference", "--write-references", path, "--results-dir", results,
                "--repetitions", basis,
            )  # fmt: skip
            if made.returncode != 0:
                sys.exit(made.stderr.strip())
        counts: dict[str, dict[str, int]] = {basis: {} for basis in BASES}
        alarms = dict.fromkeys(BASES, 0)
        for i in range(reruns):
            name = f"unchanged-{i:02d}"
            run_campaign(experiment, results, name)
            for basis in BASES:
                found = verdicts(results, name, references[basis], basis)
                for v in found:
                    counts[basis][v] = counts[basis].get(v, 0) + 1
                alarms[basis] += "regressed" in found
        for basis in BASES:
            print(
                f"unchanged reruns judged on {basis} repetitions: {reruns}; false alarms (a rerun with a "
                f"case regressed): {alarms[basis]}/{reruns} = {alarms[basis] / max(reruns, 1):.0%}; "
                f"verdicts of {sum(counts[basis].values())} cases: "
                + ", ".join(f"{n} {v}" for v, n in sorted(counts[basis].items()))
            )
        print(f"load average after the unchanged reruns: {load()}")
        slower_path = "avx2" if "avx512f" in Path("/proc/cpuinfo").read_text() else "scalar"
        run_campaign(experiment, results, "slower-code", {"SB_INNER_PATH": slower_path})
        for basis in BASES:
            found = verdicts(results, "slower-code", references[basis], basis)
            print(
                f"rerun with the vector loop capped at {slower_path} (a real code slowdown), judged on "
                f"{basis} repetitions: "
                + ", ".join(found)
                + (" -> detected" if "regressed" in found else " -> NOT detected")
            )
        busy = busy_loop_on_cpu0()
        try:
            run_campaign(experiment, results, "loaded")
        finally:
            busy.kill()
            busy.wait()
        for basis in BASES:
            found = verdicts(results, "loaded", references[basis], basis)
            print(
                f"rerun with a busy loop on CPU 0, judged on {basis} repetitions: "
                + ", ".join(found)
                + (
                    " -> regressed"
                    if "regressed" in found
                    else " -> the host was seen disturbed"
                    if any("host disturbed" in v for v in found)
                    else " -> NOT seen"
                )
            )
        print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
