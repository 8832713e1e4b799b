"""The real one-host Slurm test cluster for this suite, plus helpers to wait on it (poll, never sleep blind).

The cluster gets its own directory and ports, so a developer's `make slurm-up` cluster is left alone. If
the daemons cannot start, every test that needs them fails with the reason (no skipping).
"""

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from jobs.slurm.testcluster.cluster import Cluster, down, leftover_pids, up

ROOT = Path(__file__).resolve().parents[2]
SCALEBENCH = ROOT / "scalebench"
HERE = Path(__file__).resolve().parent


def _free_port_base(count: int = 4) -> int:
    """The first of `count` consecutive free TCP ports (checked by binding), away from the default 6917;
    from SB_SLURM_PORT_BASE on if set (so parallel developers keep to their own ports)."""
    start = int(os.environ.get("SB_SLURM_PORT_BASE") or 17100)
    for base in range(start, start + 800, 10):
        try:
            socks = []
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no 4 consecutive free TCP ports in 17100..17900")


def cluster_dir() -> Path:
    """A fresh directory munged accepts (pytest's tmp dirs are mode 700, munged wants a+x parents)."""
    path = Path(tempfile.mkdtemp(prefix="sb-slurm-test-", dir="/tmp"))
    path.chmod(0o755)
    return path


@contextlib.contextmanager
def _running(cluster: Cluster):
    try:
        try:
            up(cluster)
        except Exception as err:  # noqa: BLE001 - any reason the daemons did not start fails the suite
            pytest.fail(f"Slurm test cluster did not start: {err}", pytrace=False)
        yield cluster
    finally:
        down(cluster)
        left = leftover_pids(cluster)
        assert not left, f"daemons left after teardown: {left}"
        shutil.rmtree(cluster.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running test cluster with Slurm's default MaxArraySize=1001; SLURM_CONF points at it for the
    whole session. Torn down whatever happens."""
    saved = os.environ.get("SLURM_CONF")
    cluster = Cluster(cluster_dir(), _free_port_base())
    os.environ["SLURM_CONF"] = str(cluster.conf)
    try:
        with _running(cluster):
            yield cluster
    finally:
        if saved is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = saved


@pytest.fixture(scope="module")
def small_array_cluster(slurm_cluster):
    """A second cluster with MaxArraySize=5, so a 12-case campaign is cut into several arrays. Not the
    default SLURM_CONF: pass client_env() to the commands that should use it."""
    with _running(Cluster(cluster_dir(), _free_port_base(), max_array_size=5)) as cluster:
        yield cluster


def scalebench(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    """./scalebench with the venv's python named explicitly, so tests may empty PATH."""
    return subprocess.run(
        [sys.executable, str(SCALEBENCH), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    """Poll until predicate() returns something truthy; fail the test with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def jobcomp(cluster: Cluster) -> list[dict]:
    """Finished jobs from jobcomp/filetxt: one dict of KEY=value fields per line."""
    path = cluster.dir / "jobcomp.txt"
    if not path.exists():
        return []
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in path.read_text().splitlines() if line.strip()]


def submissions(campaign_dir: Path) -> list[dict]:
    path = campaign_dir / "jobs" / "submissions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def job_finished(cluster: Cluster, job_id: str) -> dict | None:
    return next((j for j in jobcomp(cluster) if j.get("JobId") == job_id), None)


def queue_empty_for(job_ids: list[str]) -> bool:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-j", ",".join(job_ids), "-o", "%i"], capture_output=True, text=True
    )
    return out.returncode != 0 or not out.stdout.strip()
