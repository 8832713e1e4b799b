"""A cancelled array task leaves nothing running: its kernel is gone within the cluster's KillWait."""

import re
import subprocess
import time

import pytest

from jobs.slurm.testcluster.cluster import Cluster

from .conftest import scalebench, submissions, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SEED = 4242
EXPERIMENT = f"""
description = "one endless case to cancel"
node_types = ["tc-core"]
repetitions = 1
warmup = 0
timeout_s = 600
[[sweep]]
binary = ["mcpi-c-serial"]
params = {{ samples = [4000000000000], seed = [{SEED}] }}
"""


def _kernels() -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"mcpi-c-serial .*--seed {SEED} "], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _kill_wait(cluster: Cluster) -> int:
    return int(re.search(r"(?m)^KillWait=(\d+)", cluster.conf.read_text()).group(1))


def test_cancelled_task_leaves_no_kernel(slurm_cluster, tmp_path, bin_dir):
    experiment = tmp_path / "cancel.toml"
    experiment.write_text(EXPERIMENT)
    proc = scalebench("submit", experiment, "--name", "c", "--results-dir", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    job = next(s["job_id"] for s in submissions(tmp_path / "r" / "c") if s["kind"] == "array")
    wait_for(_kernels, 90, "the kernel of the array task to start")
    subprocess.run(["scancel", job], check=True)
    cancelled = time.monotonic()
    wait_for(lambda: not _kernels(), _kill_wait(slurm_cluster) + 1, "the kernel to end after scancel")
    assert time.monotonic() - cancelled <= _kill_wait(slurm_cluster) + 1
