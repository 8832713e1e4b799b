"""Results where the user is: the global --results-dir (before or after any command) and
$SCALEBENCH_RESULTS_DIR choose where campaigns live, the default is ./results of the current directory;
--version prints the version and commit; submit's check of the results directory's file system."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.slurm.shared_fs import node_local_reason, shared_fs_warning
from tests.conftest import ROOT

EXPERIMENT = """
description = "results dir"
repetitions = 1
warmup = 0
[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["none"]
params = { samples = [1000] }
"""


def scalebench(*args, cwd, env=None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "SCALEBENCH_RESULTS_DIR"}
    return subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), *map(str, args)],
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def experiment(tmp_path, bin_dir):
    path = tmp_path / "rd.toml"
    path.write_text(EXPERIMENT)
    return path


def test_default_is_results_of_the_current_directory(tmp_path, experiment):
    work = tmp_path / "work"
    work.mkdir()
    proc = scalebench("run", experiment, "--no-progress", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert (work / "results" / "latest" / "cases.jsonl").is_file()
    status = scalebench("status", "latest", cwd=work)
    assert status.returncode == 0 and "done" in status.stdout, status.stderr


def test_global_option_before_or_after_every_command(tmp_path, experiment):
    results = tmp_path / "elsewhere"
    proc = scalebench("--results-dir", results, "run", experiment, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (results / "latest" / "cases.jsonl").is_file() and not (tmp_path / "results").exists()
    for argv in (
        ["--results-dir", results, "status", "latest"],
        ["status", "latest", "--results-dir", results],
        ["run-case", "latest", "0", "--results-dir", results],
        ["--results-dir", results, "run", "--resume", "latest", "--no-progress"],
        ["analyze", "latest", "--results-dir", results],
    ):
        out = scalebench(*argv, cwd=tmp_path)
        assert out.returncode == 0, (argv, out.stderr)
    assert (results / "latest" / "analysis").is_dir()


def test_environment_variable_and_a_relative_option(tmp_path, experiment):
    proc = scalebench(
        "plan", experiment, "--write", cwd=tmp_path, env={"SCALEBENCH_RESULTS_DIR": str(tmp_path / "e")}
    )
    assert proc.returncode == 0 and (tmp_path / "e" / "latest").is_symlink(), proc.stderr
    proc = scalebench("--results-dir", "rel", "plan", experiment, "--write", cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "rel" / "latest").is_symlink(), proc.stderr


def test_version_names_the_commit(tmp_path):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    out = scalebench("--version", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("scalebench 0.") and f"commit {head.stdout.strip()}" in out.stdout


MOUNTS = """\
/dev/vda1 / ext4 rw 0 0
tmpfs /dev/shm tmpfs rw 0 0
tmpfs /scratch/ram tmpfs rw 0 0
server:/home /home nfs4 rw 0 0
/dev/vdb1 /tmp ext4 rw 0 0
lustre@o2ib:/fs /lustre lustre rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "local"),
    [
        ("/home/u/results", False),
        ("/lustre/proj/results", False),
        ("/srv/results", False),
        ("/tmp/results", True),
        ("/var/tmp/x", True),
        ("/scratch/ram/results", True),
        ("/dev/shm/r", True),
    ],
)
def test_node_local_directories_are_recognised(path, local):
    assert (node_local_reason(path, MOUNTS) is not None) == local


def test_submit_warning_text():
    warning = shared_fs_warning(Path("/tmp/results"))
    assert warning.startswith("submit: warning: results directory /tmp/results is ")
    assert warning.endswith("use --results-dir on a shared file system (home, project or scratch)")
    assert shared_fs_warning(Path("/home/someone/results")) is None or "/home" in node_local_reason(
        Path("/home"), Path("/proc/self/mounts").read_text()
    )


def test_manifest_unavailable_is_empty_when_everything_was_built(tmp_path, experiment):
    proc = scalebench("plan", experiment, "--write", "--results-dir", tmp_path / "m", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "m" / "latest" / "manifest.json").read_text())
    assert manifest["unavailable"]["kernels"] == {}
