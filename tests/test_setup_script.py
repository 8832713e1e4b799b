"""scripts/setup.sh checks a target's tools by trying them: optional ones missing for `bench` cost one
line each, a missing required one gets one message with apt, dnf and module/Spack hints and exit 3.
dpkg and apt are hidden in every test here, so nothing is installed even as root."""

import os
import subprocess

import pytest

from tests.conftest import ROOT
from tests.path_farm import path_without

NO_PACKAGE_MANAGER = ["dpkg*", "apt*"]


def setup(target: str, path: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX", "FC", "MPICC", "PYTHON")}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup.sh"), target],
        env={**clean, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def login_node_path(tmp_path_factory) -> str:
    """A PATH without dpkg/apt and without the optional tools of `make bench`."""
    hidden = [*NO_PACKAGE_MANAGER, "gfortran*", "mpicc*", "mpirun", "likwid-*", "stress-ng", "sbatch"]
    return path_without(tmp_path_factory.mktemp("login") / "bin", hidden)


def test_bench_without_optional_tools_passes_with_one_line_each(login_node_path):
    proc = setup("bench", login_node_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    optional = [line for line in lines if line.startswith("setup: optional: ")]
    assert len(optional) == len(lines), lines
    for tool in ("Fortran compiler", "MPI", "likwid", "stress-ng", "Slurm client"):
        assert sum(f"no {tool}" in line for line in optional) == 1, (tool, optional)


def test_missing_c_compiler_is_one_message_with_install_hints(login_node_path):
    proc = setup("bench", login_node_path, CC="no-such-cc")
    assert proc.returncode == 3
    missing = [line for line in proc.stderr.splitlines() if line.startswith("setup: missing")]
    assert len(missing) == 1, proc.stderr
    line = missing[0]
    assert "C compiler with OpenMP (no-such-cc)" in line
    for hint in ("apt-get install gcc", "dnf install gcc", "module load gcc", "spack install gcc"):
        assert hint in line, line


def test_test_target_requires_the_test_only_tools(tmp_path):
    path = path_without(tmp_path / "bin", [*NO_PACKAGE_MANAGER, "chromium*", "clang-format*"])
    proc = setup("test", path)
    assert proc.returncode == 3
    missing = [line for line in proc.stderr.splitlines() if line.startswith("setup: missing")]
    assert [line.split(",")[0] for line in missing] == ["setup: missing chromium"], proc.stderr
    # clang-format is lint's, not test's: bench and test do not ask for it
    assert setup("lint", path).returncode == 3
    assert setup("bench", path).returncode == 0


def test_unknown_target_is_a_usage_error(login_node_path):
    proc = setup("benchmark", login_node_path)
    assert proc.returncode == 2 and proc.stderr.strip().startswith("setup: unknown target 'benchmark'")
