"""Fixtures shared by every test suite: where the repository and the kernel binaries are."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = ROOT / "build" / "bin"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    """The kernel binaries; `make test` builds them before pytest starts."""
    if not BIN_DIR.is_dir():
        pytest.fail(f"{BIN_DIR} does not exist: run the tests with `make test`, which builds the kernels")
    return BIN_DIR
