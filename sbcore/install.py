"""What this installation of scalebench is: its version, its git commit, and the source tree it was
installed from (a clone, or the clone a `pip install .` was made from: the kernels, their Makefile and
config/ live there).

A wheel built by setup.py carries sbcore/install_info.json ({"source": <clone>, "commit": <sha>});
in a clone and in an editable install the code sits in the source tree itself and git says the commit.
"""

import functools
import json
import subprocess
import sys
from pathlib import Path

# importlib.metadata and tomllib are imported where used: run-case (once per Slurm array task) reads
# only source_root().

PACKAGE_PARENT = Path(__file__).resolve().parent.parent
INSTALL_INFO = Path(__file__).with_name("install_info.json")
DISTRIBUTION = "scalebench"


@functools.cache
def install_info() -> dict:
    try:
        return json.loads(INSTALL_INFO.read_text())
    except (OSError, ValueError):
        return {}


def is_source_tree(path: Path) -> bool:
    return (path / "Makefile").is_file() and (path / "kernels").is_dir()


@functools.cache
def source_root() -> Path:
    """The source tree: where the code runs from when that is one, else the tree recorded at install
    time (falls back to the code's own directory, where a missing file is then reported)."""
    if is_source_tree(PACKAGE_PARENT):
        return PACKAGE_PARENT
    recorded = install_info().get("source")
    return Path(recorded) if recorded else PACKAGE_PARENT


def version() -> str:
    """The installed distribution's version, else the one pyproject.toml declares."""
    import tomllib
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    try:
        with open(source_root() / "pyproject.toml", "rb") as f:
            return tomllib.load(f)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def git_commit(tree: Path) -> str | None:
    """HEAD of the git checkout at `tree` (with '-dirty' when tracked files changed), None if none."""
    try:
        head = subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def commit() -> str:
    """The commit the running code was installed from: git's when it runs from a checkout, else the
    one recorded in the wheel."""
    if is_source_tree(PACKAGE_PARENT):
        found = git_commit(PACKAGE_PARENT)
        if found:
            return found
    return install_info().get("commit") or "unknown"


def version_line() -> str:
    return f"scalebench {version()} (commit {commit()}, source {source_root()})"


def entry_command() -> list[str]:
    """How to start this scalebench again (Slurm scripts, `run --analyze`): the clone's `scalebench`
    script (it switches to the clone's .venv), else this interpreter with the entry module."""
    script = PACKAGE_PARENT / "scalebench"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "jobs.entry"]


def bin_dir() -> Path:
    """build/bin of the source tree, or $SCALEBENCH_BIN_DIR (lets tests and odd installs point elsewhere).
    Absolute: kernels run with their case directory as their working directory."""
    import os

    return Path(os.environ.get("SCALEBENCH_BIN_DIR", source_root() / "build" / "bin")).resolve()
