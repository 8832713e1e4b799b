"""The site's compilers: CC, FC and MPICC from the environment or make's command line are the ones the
kernels are built with, and a clang build (C with clang's OpenMP, Fortran with gfortran, so the Fortran
OpenMP kernels link one runtime for both languages) computes the same bits as the gcc build."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

CLANG_BUILD = ROOT / "build" / "clang"


def make_dry_run(target: str, env: dict, *make_args: str) -> str:
    """The commands make would run to rebuild `target` from scratch (nothing is built)."""
    out = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *make_args, target],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize(
    ("target", "variable", "tool"),
    [
        ("build/bin/mcpi-c-omp", "CC", "site-cc"),
        ("build/bin/mcpi-f-omp", "FC", "site-fc"),
        ("build/bin/mcpi-c-mpi", "MPICC", "site-mpicc"),
    ],
)
@pytest.mark.parametrize("given_by", ["environment", "command line"])
def test_compiler_variables_are_honoured(target, variable, tool, given_by):
    if given_by == "environment":
        commands = make_dry_run(target, {variable: tool})
    else:
        commands = make_dry_run(target, {}, f"{variable}={tool}")
    assert any(line.startswith(f"{tool} ") for line in commands.splitlines()), commands[-2000:]


def test_no_march_native_anywhere():
    commands = make_dry_run("all", {})
    assert "-march=native" not in commands and "-mtune=native" not in commands


def test_fortran_openmp_kernels_link_the_c_compilers_runtime():
    """Linked by the C compiler with libgfortran: clang's OpenMP objects get libomp, not libgomp."""
    link = make_dry_run("build/bin/mcpi-f-omp", {"CC": "clang"}).splitlines()[-1]
    assert link.startswith("clang ") and "-fopenmp" in link and "libgfortran" in link, link


@pytest.fixture(scope="module")
def clang_bin_dir():
    if not shutil.which("clang") or not shutil.which("gfortran"):
        pytest.skip("clang or gfortran not installed: the clang build is not checked here")
    proc = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-s",
            "-j2",
            "CC=clang",
            f"BIN_DIR={CLANG_BUILD / 'bin'}",
            f"OBJ_DIR={CLANG_BUILD / 'obj'}",
            "kernels",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"clang build failed:\n{proc.stderr[-3000:]}"
    return CLANG_BUILD / "bin"


def test_another_compiler_after_a_build_rebuilds_every_object(clang_bin_dir, tmp_path):
    """A `module load` of another compiler after a build: make rebuilds the objects (the build's
    configuration, kernels/c.mk, changed) instead of linking those of the earlier compiler; with the same
    configuration nothing is compiled."""
    dirs = (f"BIN_DIR={CLANG_BUILD / 'bin'}", f"OBJ_DIR={CLANG_BUILD / 'obj'}")

    def compiled(*args: str) -> list[str]:
        out = subprocess.run(
            ["make", "--no-print-directory", "-n", *dirs, *args, "kernels"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.replace("\\\n", " ").splitlines() if " -c " in line]

    assert compiled("CC=clang") == []
    assert (CLANG_BUILD / "obj" / "build-config.txt").read_text().startswith("CC=clang (")
    again = compiled("CC=gcc")
    assert any(line.startswith("gcc ") and "kernels/common/main.c" in line for line in again), again
    other_fc = tmp_path / "gfortran-other"  # the same compiler under another name: another configuration
    other_fc.symlink_to(shutil.which("gfortran"))
    fortran = compiled("CC=clang", f"FC={other_fc}")
    assert any(line.startswith(f"{other_fc} ") for line in fortran), fortran


def test_clang_build_records_name_clang(clang_bin_dir):
    for name in ("mcpi-c-omp", "mcpi-f-omp"):
        out = subprocess.run(
            [clang_bin_dir / name, "--threads", "2", "--samples", "1000", "--reps", "1"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        record = json.loads(out.stdout.splitlines()[0])
        assert record["build"]["compiler"].startswith("clang"), record["build"]


def test_clang_build_passes_the_bitwise_agreement_tests(clang_bin_dir):
    """The C and Fortran agreement suites and the independent image reference, run again against the
    clang binaries."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/kernels/test_bitwise_agreement.py",
            "tests/kernels/test_image_reference.py",
            "tests/fortran_mpi/test_fortran_agreement.py",
        ],
        cwd=ROOT,
        env={**os.environ, "SCALEBENCH_BIN_DIR": str(clang_bin_dir)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert " passed" in proc.stdout and " skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-500:]
