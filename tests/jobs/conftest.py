"""Helpers for the campaign-engine tests: running the CLI, a bin dir with failure-injection stand-ins."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
FAKE_KERNEL = Path(__file__).resolve().parent / "failure_injection" / "fake_kernel_for_failure_injection.sh"
FAILURE_MODES = ("crash", "hang", "norecord", "exit3", "exit2", "holdout")


def run_cli(*args, env=None, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), *map(str, args)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def stand_in_bin_dir(directory: Path, fake: Path, names, monkeypatch) -> Path:
    """`directory` with each of `names` a link to the stand-in kernel `fake`, selected through
    SCALEBENCH_BIN_DIR."""
    directory.mkdir()
    for name in names:
        (directory / name).symlink_to(fake)
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(directory))
    return directory


@pytest.fixture
def injection_bin_dir(tmp_path, bin_dir, monkeypatch) -> Path:
    """The real kernels plus failinject-sh-<mode> stand-ins, selected through SCALEBENCH_BIN_DIR."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for binary in bin_dir.iterdir():
        (directory / binary.name).symlink_to(binary)
    for mode in FAILURE_MODES:
        (directory / f"failinject-sh-{mode}").symlink_to(FAKE_KERNEL)
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(directory))
    return directory
