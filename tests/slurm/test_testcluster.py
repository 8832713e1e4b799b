"""The test cluster itself: idempotent up/down, configurable dir and ports, nothing left behind."""

import os
import shutil
import subprocess
import sys

import pytest

from jobs.slurm.testcluster.cluster import Cluster, leftover_pids

from .conftest import ROOT, _free_port_base, cluster_dir

pytestmark = pytest.mark.slurm


def _cli(action: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jobs.slurm.testcluster", action],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_up_twice_down_twice_leaves_no_daemons():
    base = _free_port_base()
    directory = cluster_dir()
    env = {**os.environ, "SB_SLURM_DIR": str(directory), "SB_SLURM_PORT_BASE": str(base)}
    cluster = Cluster.from_env(env)
    try:
        first = _cli("up", env)
        assert first.returncode == 0, first.stderr
        assert "started munged, slurmctld, slurmd tc-core-n1, slurmd tc-smt-n1" in first.stdout
        assert f". {cluster.env_file}" in first.stdout
        assert f"export SLURM_CONF={cluster.conf}" in cluster.env_file.read_text()
        assert f"SlurmctldPort={base}\n" in cluster.conf.read_text()

        again = _cli("up", env)
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stdout

        client = {**env, "SLURM_CONF": str(cluster.conf)}
        nodes = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N %P %f %z %t"], capture_output=True, text=True, env=client
        ).stdout.split("\n")
        assert "tc-core-n1 core* nosmt 1:2:1 idle" in nodes
        assert "tc-smt-n1 smt smt 1:1:2 idle" in nodes

        status = _cli("status", env)
        assert status.stdout.count("running, pid") == 4, status.stdout
    finally:
        stop = _cli("down", env)
    assert stop.returncode == 0, stop.stderr
    assert "stopped" in stop.stdout
    assert leftover_pids(cluster) == []
    for pid_file in cluster.pid_files().values():
        pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
        if pid is not None:
            state = _proc_state(pid)
            assert state in (None, "Z"), f"{pid_file}: pid {pid} still running"
    again = _cli("down", env)
    assert again.returncode == 0 and "not running" in again.stdout
    shutil.rmtree(directory)


def test_private_parent_directory_is_a_clear_error(tmp_path):
    # pytest's tmp_path is mode 700: munged could not open its socket there.
    env = {**os.environ, "SB_SLURM_DIR": str(tmp_path / "c"), "SB_SLURM_PORT_BASE": str(_free_port_base())}
    proc = _cli("up", env)
    assert proc.returncode == 2
    assert "munged needs every parent directory searchable by all" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _proc_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SB_SLURM_PORT_BASE", "sixty", "SB_SLURM_PORT_BASE='sixty' is not an integer"),
        ("SB_SLURM_PORT_BASE", "80", "SB_SLURM_PORT_BASE=80 must be in 1024..65532"),
        ("SB_SLURM_DIR", "/tmp/" + "d" * 90, "is too long for a Unix socket path"),
    ],
)
def test_bad_environment_is_one_line_exit_2(tmp_path, variable, value, message):
    env = {**os.environ, "SB_SLURM_DIR": str(tmp_path), variable: value}
    proc = _cli("up", env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
