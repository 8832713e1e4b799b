"""Fixtures of the Fortran and MPI kernel tests: mpirun and the C serial references (the `kernel`
fixture is in tests/conftest.py)."""

import shutil
from pathlib import Path

import pytest

from ..kernel_records import run_records

# Small on purpose: the matrices below run each configuration once.
MANDELBROT_ARGS = ["--width", "67", "--height", "43", "--max-iter", "600"]
PI_ARGS = ["--samples", "30011", "--seed", "0xdeadbeefcafe"]


def mandelbrot_args(preset: str, dump: Path, *more) -> list:
    """The test image of `preset`, dumped to `dump`, plus `more` arguments."""
    return [*MANDELBROT_ARGS, "--preset", preset, "--dump", dump, *more]


def assert_same_image(rec: dict, dump: Path, reference: tuple):
    """Record and dump equal the reference's (checksum, work, dump bytes)."""
    checksum, work, dump_bytes = reference
    assert (rec["checksum"], rec["work"]) == (checksum, work)
    assert dump.read_bytes() == dump_bytes


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
            (rec,) = run_records(kernel("mandelbrot-c-serial"), *mandelbrot_args(preset, dump))
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
