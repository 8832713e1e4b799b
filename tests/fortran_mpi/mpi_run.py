"""Running the MPI kernels under mpirun from the tests, and checking that no rank is left behind."""

import subprocess
import time
from pathlib import Path

from ..kernel_records import records_of, run_raw

# Open MPI refuses root unless told twice; the tests run as root on the test machines.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# A hung MPI job must fail the test, not the whole session.
MPI_TIMEOUT_S = 60


def mpirun_mpmd(*apps: list, env: dict | None = None) -> subprocess.CompletedProcess:
    """One mpirun job of several app contexts, each `[-np, N, (mpirun options,) binary, *args]`,
    joined by ':' (MPMD): ranks that differ in arguments or environment."""
    command = ["mpirun", "--oversubscribe"]
    for i, app in enumerate(apps):
        command += [":", *app] if i else app
    return run_raw(*command, env={**MPI_ENV, **(env or {})}, timeout=MPI_TIMEOUT_S)


def mpirun(ranks: int, binary: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return mpirun_mpmd(["-np", ranks, binary, *args], env=env)


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
