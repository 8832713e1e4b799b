"""Fixtures of the Fortran and MPI kernel tests: the binaries and the C serial references."""

import shutil
from pathlib import Path

import pytest

from .kernel_run import run_records

# Small on purpose: the matrices below run each configuration once.
MANDELBROT_ARGS = ["--width", "67", "--height", "43", "--max-iter", "600"]
PI_ARGS = ["--samples", "30011", "--seed", "0xdeadbeefcafe"]


@pytest.fixture(scope="session")
def kernel(bin_dir: Path):
    """kernel("mandelbrot-f-omp") -> path of that binary, failing clearly when it was not built."""

    def find(name: str) -> Path:
        path = bin_dir / name
        if not path.is_file():
            pytest.fail(f"{path} is missing: build it with `make kernels`")
        return path

    return find


@pytest.fixture(scope="session")
def need_mpirun():
    if not shutil.which("mpirun"):
        pytest.fail("mpirun not found: install openmpi-bin (make setup)")


@pytest.fixture(scope="session")
def mandelbrot_reference(kernel, tmp_path_factory):
    """preset -> (checksum, work, dump bytes) of the C serial reference."""
    cache = {}

    def reference(preset: str):
        if preset not in cache:
            dump = tmp_path_factory.mktemp("ref") / f"{preset}.pgm"
            (rec,) = run_records(
                kernel("mandelbrot-c-serial"), *MANDELBROT_ARGS, "--preset", preset, "--dump", dump
            )
            cache[preset] = (rec["checksum"], rec["work"], dump.read_bytes())
        return cache[preset]

    return reference


@pytest.fixture(scope="session")
def pi_reference(kernel):
    """seed -> (checksum, hits) of the C serial reference on PI_ARGS' sample count."""
    cache = {}

    def reference(seed: str):
        if seed not in cache:
            args = [*PI_ARGS[:2], "--seed", seed]
            (rec,) = run_records(kernel("mcpi-c-serial"), *args)
            cache[seed] = (rec["checksum"], rec["result"]["hits"])
        return cache[seed]

    return reference
