"""Running kernel binaries from the tests: arguments in, parsed JSON records out."""

import json
import os
import subprocess
from pathlib import Path

C_BINARIES = [f"{k}-c-{m}" for k in ("mandelbrot", "mcpi") for m in ("serial", "omp", "pthreads")]


def run_raw(binary: Path, *args, env: dict | None = None, timeout: float = 120):
    """The finished process (stdout/stderr as text); `env` adds to the current environment."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=full_env
    )


def run_records(binary: Path, *args, env: dict | None = None, timeout: float = 120) -> list[dict]:
    """The records of a run that must succeed."""
    proc = run_raw(binary, *args, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{binary.name} {args} exited {proc.returncode}: {proc.stderr}"
    return [json.loads(line) for line in proc.stdout.splitlines()]


def checksums(binary: Path, *args, **kwargs) -> set[str]:
    return {r["checksum"] for r in run_records(binary, *args, **kwargs)}
