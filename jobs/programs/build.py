"""A program's build command, run when its experiment is planned (`plan`, `run EXP`, `submit`), before
the plan checks that the program can be started: an argument vector (never a shell), in the program's
working directory, its output passed through to stderr. A re-plan that verifies an existing campaign
(`run --resume`, `run-case`) builds nothing: the program was built when the campaign was made.
A build that fails stops the plan with one line (exit 3): nothing is planned or run."""

from __future__ import annotations

import shlex
import subprocess
import sys

from sbcore.errors import EnvironmentProblem

TAIL_LINES = 20


def build_programs(exp, names: list[str], out=sys.stderr) -> None:
    for name in dict.fromkeys(names):
        program = exp.programs[name]
        if not program["build"]:
            continue
        argv, cwd = program["build"], program["cwd"]
        print(
            f"plan: building program {name}: {shlex.join(argv)}" + (f" (in {cwd})" if cwd else ""), file=out
        )
        try:
            done = subprocess.run(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace"
            )
        except OSError as err:
            raise EnvironmentProblem(
                f"{exp.path}: programs.{name}.build: cannot start {argv[0]!r}: {err.strerror}"
            ) from None
        text = (done.stdout + done.stderr).rstrip()
        if done.returncode != 0:
            print("\n".join(text.splitlines()[-TAIL_LINES:]), file=out)
            last = (text.splitlines() or [""])[-1][:200]
            raise EnvironmentProblem(
                f"{exp.path}: programs.{name}.build = {shlex.join(argv)}: "
                f"exit status {done.returncode}: {last}"
            )
