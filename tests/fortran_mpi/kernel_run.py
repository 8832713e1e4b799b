"""Running the Fortran and MPI kernel binaries from the tests: arguments in, records and dumps out."""

import json
import os
import subprocess
import time
from pathlib import Path

# Open MPI refuses root unless told twice; the tests run as root on the test machines.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# A hung MPI job must fail the test, not the whole session.
MPI_TIMEOUT_S = 60


def run_raw(command: list, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The finished process (stdout/stderr as text); `env` adds to the current environment."""
    return subprocess.run(
        [str(c) for c in command],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def records_of(proc: subprocess.CompletedProcess, what: str) -> list[dict]:
    """The JSON records of a run that must have succeeded."""
    assert proc.returncode == 0, f"{what} exited {proc.returncode}: {proc.stderr[-2000:]}"
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records, f"{what} printed no record"
    return records


def run_records(binary: Path, *args, env: dict | None = None) -> list[dict]:
    return records_of(run_raw([binary, *args], env=env), f"{binary.name} {args}")


def mpirun_command(ranks: int, binary: Path, *args) -> list:
    return ["mpirun", "-np", ranks, "--oversubscribe", binary, *args]


def mpirun(ranks: int, binary: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_raw(
        mpirun_command(ranks, binary, *args), env={**MPI_ENV, **(env or {})}, timeout=MPI_TIMEOUT_S
    )


def mpirun_records(ranks: int, binary: Path, *args) -> list[dict]:
    return records_of(mpirun(ranks, binary, *args), f"mpirun -np {ranks} {binary.name} {args}")


def leftover_processes(pattern: str, grace_s: float = 5.0) -> str:
    """`pgrep -af pattern` output once the processes had `grace_s` to go away; empty = none left."""
    deadline = time.monotonic() + grace_s
    while True:
        proc = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
        listed = "\n".join(line for line in proc.stdout.splitlines() if "pgrep" not in line)
        if not listed or time.monotonic() > deadline:
            return listed
        time.sleep(0.1)
