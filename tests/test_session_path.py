"""What the session puts first on PATH (tests/conftest.py): the likwid-perfctr replay (the host probe's
question gets the real tool's answer, anything else reaches the real tool) and python3 (the interpreter
that the PATH the session started with chooses)."""

import os
import re
import shutil
import subprocess

import pytest

from jobs.hostinfo import PERFCTR_PROBE, probe_counters

SESSION_DIRS = ("likwid-replay", "python3-found")  # the fixtures' directory names
STARTED_WITH = os.pathsep.join(
    p for p in os.environ["PATH"].split(os.pathsep) if not any(d in p for d in SESSION_DIRS)
)
REAL = shutil.which(PERFCTR_PROBE[0], path=STARTED_WITH)
needs_likwid = pytest.mark.skipif(REAL is None, reason="likwid is not installed")


def answer(command: list[str], path: str | None = None) -> tuple[int, str, str]:
    env = {**os.environ, "PATH": path} if path else None
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, env=env)
    return done.returncode, done.stdout, done.stderr


@needs_likwid
def test_the_probe_gets_the_real_tools_answer():
    assert shutil.which(PERFCTR_PROBE[0]) != REAL  # the replay is first on PATH
    status, _, errors = answer(PERFCTR_PROBE)
    real_status, _, real_errors = answer([REAL, *PERFCTR_PROBE[1:]])
    # the verdict: its exit status, and why when it failed (stdout carries the clock it measured; on a
    # processor likwid does not know, its message names its access daemon's socket by process id)
    errors, real_errors = (re.sub(r"likwid-\d+", "likwid-<pid>", e) for e in (errors, real_errors))
    assert status == real_status and (status == 0 or errors == real_errors), (errors, real_errors)
    assert probe_counters()["reason"].startswith(" ".join(PERFCTR_PROBE))


@needs_likwid
def test_other_questions_reach_the_real_tool():
    assert answer([PERFCTR_PROBE[0], "-a"]) == answer([REAL, "-a"])


@pytest.mark.skipif(shutil.which("python3", path=STARTED_WITH) is None, reason="no python3 on PATH")
def test_python3_is_the_interpreter_the_original_path_chooses():
    which = "import sys; print(sys.version, sys.prefix, sys.path[1:])"
    assert answer(["python3", "-c", which]) == answer(["python3", "-c", which], path=STARTED_WITH)
