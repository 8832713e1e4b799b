"""The session's likwid-perfctr replay (tests/conftest.py): the host probe's question gets the real tool's
answer, anything else reaches the real tool."""

import os
import shutil
import subprocess

import pytest

from jobs.hostinfo import PERFCTR_PROBE, probe_counters

REAL = shutil.which(
    PERFCTR_PROBE[0],
    path=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "likwid-replay" not in p),
)
pytestmark = pytest.mark.skipif(REAL is None, reason="likwid is not installed")


def answer(command: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


def test_the_probe_gets_the_real_tools_answer():
    assert shutil.which(PERFCTR_PROBE[0]) != REAL  # the replay is first on PATH
    (status, _, errors), (real_status, _, real_errors) = (
        answer(PERFCTR_PROBE),
        answer([REAL, *PERFCTR_PROBE[1:]]),
    )
    # the verdict: its exit status, and why when it failed (stdout carries the clock it measured)
    assert status == real_status and (status == 0 or errors == real_errors), (errors, real_errors)
    assert probe_counters()["reason"].startswith(" ".join(PERFCTR_PROBE))


def test_other_questions_reach_the_real_tool():
    assert answer([PERFCTR_PROBE[0], "-a"]) == answer([REAL, "-a"])
