"""Fixtures of the C kernel tests: the sanitizer builds (the `kernel` fixture is in tests/conftest.py)."""

import subprocess
from pathlib import Path

import pytest


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
