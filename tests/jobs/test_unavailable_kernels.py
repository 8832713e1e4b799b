"""A missing optional compiler: `make kernels` builds the rest, says in one line per tool what it left
out and why (build/bin/unavailable.tsv), planning leaves those cases out with one line per tool, and the
campaign's manifest names them."""

import json
import subprocess

import pytest

from jobs.binaries import unavailable_kernels
from jobs.campaign import create_campaign
from tests.conftest import ROOT

from .conftest import run_cli

FORTRAN = ["mandelbrot-f-serial", "mandelbrot-f-omp", "mcpi-f-serial", "mcpi-f-omp"]
MPI = ["mandelbrot-c-mpi", "mcpi-c-mpi"]
EXPERIMENT = """
description = "C and Fortran"
repetitions = 1
[[sweep]]
binary = ["mcpi-c-serial", "mcpi-f-serial"]
pin = ["none"]
params = { samples = [1000] }
"""


@pytest.fixture(scope="module")
def partial_bin_dir(tmp_path_factory, bin_dir):
    """build/bin as made without gfortran and mpicc (FC and MPICC name missing tools)."""
    directory = tmp_path_factory.mktemp("partial") / "bin"
    proc = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-s",
            "kernels",
            "FC=no-such-fc",
            "MPICC=no-such-mpicc",
            f"BIN_DIR={directory}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return directory, proc.stderr


def test_make_kernels_builds_the_rest_and_says_why_in_one_line_per_tool(partial_bin_dir):
    directory, stderr = partial_bin_dir
    lines = [line for line in stderr.splitlines() if line.startswith("kernels: not built")]
    assert len(lines) == 2, stderr
    assert "no-such-fc not found" in lines[0] and all(name in lines[0] for name in FORTRAN)
    assert "no-such-mpicc not found" in lines[1] and all(name in lines[1] for name in MPI)
    assert (directory / "mcpi-c-omp").is_file()
    assert not any((directory / name).exists() for name in FORTRAN + MPI)


def test_unavailable_kernels_reads_the_list(partial_bin_dir, monkeypatch):
    directory, _ = partial_bin_dir
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(directory))
    found = unavailable_kernels()
    assert sorted(found) == sorted(FORTRAN + MPI)
    assert found["mcpi-f-omp"].startswith("no-such-fc not found (a Fortran 2008 compiler")


def test_plan_leaves_out_the_cases_of_unbuilt_kernels_with_one_line(partial_bin_dir, tmp_path):
    directory, _ = partial_bin_dir
    experiment = tmp_path / "mixed.toml"
    experiment.write_text(EXPERIMENT)
    proc = run_cli("plan", experiment, env={"SCALEBENCH_BIN_DIR": str(directory)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (
        "plan: skipping the cases of mcpi-f-serial: no-such-fc not found "
        "(a Fortran 2008 compiler for the Fortran kernels: set FC or load one)"
    )
    assert "mcpi-c-serial" in proc.stdout and "mcpi-f-serial" not in proc.stdout


def test_manifest_names_the_unavailable_kernels(partial_bin_dir, tmp_path, monkeypatch):
    directory, _ = partial_bin_dir
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(directory))
    experiment = tmp_path / "mixed.toml"
    experiment.write_text(EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "results")
    manifest = json.loads((campaign / "manifest.json").read_text())
    assert list(manifest["unavailable"]["kernels"]) == ["mcpi-f-serial"]
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    assert [c["binary"] for c in cases] == ["mcpi-c-serial"]


def test_a_kernel_neither_built_nor_unavailable_is_still_an_error(tmp_path, bin_dir):
    experiment = tmp_path / "typo.toml"
    experiment.write_text(EXPERIMENT.replace("mcpi-f-serial", "mcpi-q-serial"))
    proc = run_cli("plan", experiment)
    assert proc.returncode != 0 and "no such kernel binary" in proc.stderr
