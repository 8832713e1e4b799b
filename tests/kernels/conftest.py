"""Fixtures of the kernel tests: the binaries and the sanitizer builds."""

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def kernel(bin_dir: Path):
    """kernel("mandelbrot-c-omp") -> path of that binary, failing clearly when it was not built."""

    def find(name: str) -> Path:
        path = bin_dir / name
        if not path.is_file():
            pytest.fail(f"{path} is missing: build it with `make kernels`")
        return path

    return find


@pytest.fixture(scope="session")
def sanitized_dir(repo_root: Path) -> Path:
    """build/ with the tsan/ and asan/ builds (`make test` builds them; built here if missing)."""
    proc = subprocess.run(
        ["make", "--no-print-directory", "-s", "kernels-sanitized"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(f"`make kernels-sanitized` failed:\n{proc.stderr[-2000:]}")
    return repo_root / "build"
