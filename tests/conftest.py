"""Fixtures shared by every test suite: where the repository and the kernel binaries are."""

import contextlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN_DIR = ROOT / "build" / "bin"


REPLAY = """#!/bin/bash
# likwid-perfctr for this test session: the host probe's question ({probe}) answered as the real tool
# answered it when the session began; anything else is the real tool.
if [[ "$*" == {probe_words} ]]; then
  cat {out}; cat {err} >&2; exit {status}
fi
exec {real} "$@"
"""


@pytest.fixture(scope="session", autouse=True)
def likwid_probe_once(tmp_path_factory):
    """The runner asks likwid-perfctr once per campaign whether the counters work here (jobs/hostinfo.py),
    and likwid spends a second timing the clock each time it is asked. The answer cannot change during
    a session, so the real tool is asked once and a likwid-perfctr first on PATH replays that answer
    (anything else it is asked goes to the real tool; a PATH that hides likwid hides this one too)."""
    from jobs.hostinfo import PERFCTR_PROBE

    real = shutil.which(PERFCTR_PROBE[0])
    if real is None:
        yield
        return
    directory = tmp_path_factory.mktemp("likwid-replay")
    done = subprocess.run(PERFCTR_PROBE, capture_output=True, text=True, timeout=60, check=False)
    (directory / "out").write_text(done.stdout)
    (directory / "err").write_text(done.stderr)
    replay = directory / "bin" / PERFCTR_PROBE[0]
    replay.parent.mkdir()
    replay.write_text(
        REPLAY.format(
            probe=" ".join(PERFCTR_PROBE[1:]),
            probe_words=shlex.quote(" ".join(PERFCTR_PROBE[1:])),
            out=shlex.quote(str(directory / "out")),
            err=shlex.quote(str(directory / "err")),
            status=done.returncode,
            real=shlex.quote(real),
        )
    )
    replay.chmod(0o755)
    with first_on_path(replay.parent):
        yield


@pytest.fixture(scope="session", autouse=True)
def python3_found_once(tmp_path_factory):
    """The stand-in kernels (`#!/usr/bin/env python3`) start thousands of times a session; where
    `python3` on PATH is a version manager's shim (pyenv: a shell script choosing the interpreter, a
    fifth of a second a start), the interpreter it chooses is found once and put first on PATH."""
    found = shutil.which("python3")
    if found is None:
        yield
        return
    done = subprocess.run(
        [found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, timeout=60
    )
    chosen = Path(done.stdout.strip())
    if done.returncode != 0 or not chosen.is_absolute() or chosen.resolve() == Path(found).resolve():
        yield  # python3 is the interpreter itself: nothing to save
        return
    directory = tmp_path_factory.mktemp("python3-found") / "bin"
    directory.mkdir()
    (directory / "python3").symlink_to(chosen)
    with first_on_path(directory):
        yield


@contextlib.contextmanager
def first_on_path(directory: Path):
    """`directory` first on PATH (for this process and what it starts) until the block ends."""
    saved = os.environ["PATH"]
    os.environ["PATH"] = f"{directory}{os.pathsep}{saved}"
    try:
        yield
    finally:
        os.environ["PATH"] = saved


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    """The kernel binaries: build/bin (`make test` builds them before pytest starts), or
    $SCALEBENCH_BIN_DIR (the same tests then check another build, e.g. one made with clang)."""
    path = Path(os.environ.get("SCALEBENCH_BIN_DIR") or BIN_DIR).resolve()
    if not path.is_dir():
        pytest.fail(f"{path} does not exist: run the tests with `make test`, which builds the kernels")
    return path


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
def record_validator() -> jsonschema.Draft202012Validator:
    """Validator of the kernels' raw records (kernels/record.schema.json, itself checked first)."""
    schema = json.loads((ROOT / "kernels" / "record.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="session")
def user_clone():
    """A non-root user's fresh clone after `make setup` and the kernel build, made in a namespace where
    dpkg, apt, likwid, stress-ng and chromium are hidden (tests/install/cluster_user.py): shared by the
    tests of that user's clone, pip install and Slurm submission. -> (work dir, clone, setup's stderr)"""
    from tests.install.cluster_user import as_user, can_be_the_user, fresh_clone, make_home

    why_not = can_be_the_user()
    if why_not:
        pytest.skip(why_not)
    base = make_home()
    clone = fresh_clone(base)
    try:
        proc = as_user("make setup && make -j2 kernels", base, clone)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield base, clone, proc.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
