"""Per-repetition overhead of `scalebench run-case` over starting the kernel binary directly.

Median of 20 each, interleaved (direct, run-case, ...) so drift hits all alike. Also shown: how much of it
is Python start-up plus imports (`run-case --help`), the bare interpreter, and likwid-pin's own start-up
(fewer samples: likwid-pin pauses ~1 s per start). Asserts nothing.

Measured as users run it, with bytecode caching: a PYTHONDONTWRITEBYTECODE=1 in the caller's environment
(some shells and IDEs set it) would add the compilation of every module to every call.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCALEBENCH = [sys.executable, str(ROOT / "scalebench")]
SAMPLES = 20
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
PINNED_SAMPLES = 5
EXPERIMENT = """
description = "run-case overhead"
repetitions = {reps}
warmup = 0
[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["none", "compact"]
params = {{ samples = [1000] }}
"""


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    kernel = [
        str(ROOT / "build" / "bin" / "mcpi-c-serial"),
        "--samples",
        "1000",
        "--reps",
        "1",
        "--warmup",
        "0",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        experiment = Path(tmp) / "overhead.toml"
        experiment.write_text(EXPERIMENT.format(reps=SAMPLES + 1))
        subprocess.run(
            [*SCALEBENCH, "plan", str(experiment), "--write", "--results-dir", tmp, "--name", "o"],
            cwd=ROOT,
            env=ENV,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        campaign = str(Path(tmp) / "o")
        # The first call probes the host (cached in the campaign) and writes the bytecode caches.
        timed([*SCALEBENCH, "run-case", campaign, "0", "--rep", "0"])
        direct, runcase, startup, bare = [], [], [], []
        for k in range(1, SAMPLES + 1):
            direct.append(timed(kernel))
            runcase.append(timed([*SCALEBENCH, "run-case", campaign, "0", "--rep", str(k)]))
            startup.append(timed([*SCALEBENCH, "run-case", "--help"]))
            bare.append(timed([sys.executable, "-c", "pass"]))
        pinned, pin_direct = [], []
        for k in range(PINNED_SAMPLES):
            pinned.append(timed([*SCALEBENCH, "run-case", campaign, "1", "--rep", str(k)]))
            pin_direct.append(timed(["likwid-pin", "-q", "-c", "0", *kernel]))

    med = statistics.median
    print(f"kernel binary directly        median {med(direct) * 1e3:8.1f} ms  (n={len(direct)})")
    print(f"run-case, pin none            median {med(runcase) * 1e3:8.1f} ms  (n={len(runcase)})")
    overhead = med(runcase) - med(direct)
    print(f"  overhead per repetition            {overhead * 1e3:8.1f} ms  (target <= 50 ms)")
    print(f"  of which start-up + imports        {med(startup) * 1e3:8.1f} ms  (run-case --help)")
    print(f"  of which the bare interpreter      {med(bare) * 1e3:8.1f} ms  (python -c pass)")
    print(f"likwid-pin + kernel directly  median {med(pin_direct) * 1e3:8.1f} ms  (n={len(pin_direct)})")
    print(f"run-case, pin compact         median {med(pinned) * 1e3:8.1f} ms  (n={len(pinned)})")
    print(f"  overhead over likwid-pin directly  {(med(pinned) - med(pin_direct)) * 1e3:8.1f} ms")
    print(f"  ratio run-case / direct (unpinned) {med(runcase) / med(direct):8.2f}")


if __name__ == "__main__":
    main()
