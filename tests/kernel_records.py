"""Running kernel binaries from the tests (C, Fortran and MPI alike): arguments in, the finished
process or its parsed JSON records out, and the check of the one-line usage error."""

import json
import os
import subprocess
from pathlib import Path


def run_raw(program: Path | str, *args, env: dict | None = None, timeout: float = 120):
    """The finished process (stdout/stderr as text); `env` adds to the current environment."""
    return subprocess.run(
        [str(program), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def records_of(proc: subprocess.CompletedProcess, what: str) -> list[dict]:
    """The JSON records of a run that must have succeeded and printed at least one."""
    assert proc.returncode == 0, f"{what} exited {proc.returncode}: {proc.stderr[-2000:]}"
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records, f"{what} printed no record"
    return records


def run_records(binary: Path, *args, env: dict | None = None, timeout: float = 120) -> list[dict]:
    """The records of a run that must succeed."""
    return records_of(run_raw(binary, *args, env=env, timeout=timeout), f"{binary.name} {args}")


def checksums(binary: Path, *args, **kwargs) -> set[str]:
    return {r["checksum"] for r in run_records(binary, *args, **kwargs)}


def assert_error_line(stderr: str, binary: str, expected: list[str]):
    """Exactly one stderr line comes from `binary` ("<binary>: ...") and it names every text in
    `expected` (under mpirun the launcher may add lines of its own)."""
    mine = [line for line in stderr.splitlines() if line.startswith(f"{binary}: ")]
    assert len(mine) == 1, f"want exactly one error line from {binary}, got:\n{stderr}"
    for text in expected:
        assert text in mine[0], f"{text!r} missing from {mine[0]!r}"


def assert_usage_error(proc: subprocess.CompletedProcess, binary: str, expected: list[str]):
    """A usage error of a lone binary: exit 2, nothing on stdout, one stderr line naming `expected`."""
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr: {proc.stderr!r}"
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, f"expected one stderr line, got {proc.stderr!r}"
    assert_error_line(proc.stderr, binary, expected)


def runq_share(record: dict) -> float:
    """The share of its threads' time a repetition waited for a CPU (the probe's run-queue wait over
    threads x wall time); infinite when the probe could not read it."""
    wait = (record.get("probe") or {}).get("runq_wait_s")
    return float("inf") if wait is None else wait / (record["wall_s"] * record["threads"])
