"""A stop signal (SIGTERM, SIGHUP) that comes while a child is being forked is not lost: Python runs the
signal's handler inside its at-fork hooks, where the KeyboardInterrupt it raises is only printed
("Exception ignored"), and the runner went on waiting for a kernel that never ends. sbcore/child.py's
spawn kills that child and raises the stop after the fork."""

import subprocess
import sys
import textwrap

from .conftest import ROOT

# A hook after every fork that delivers SIGHUP to the runner itself, inside the at-fork hooks: the moment
# a signal sent right after the kernel appeared (tests/jobs/test_no_orphans.py) could hit.
SCRIPT = textwrap.dedent(
    """
    import os, signal, subprocess, sys
    from sbcore import child
    child.stop_on_signals()
    os.register_at_fork(after_in_parent=lambda: signal.raise_signal(signal.SIGHUP))
    start = child.spawn if sys.argv[1] == "spawn" else subprocess.Popen
    try:
        # a preexec_fn, as the runner's children have (child.die_with_parent): only then does Python
        # run its at-fork hooks around the fork
        proc = start(["sleep", "30"], process_group=0, preexec_fn=lambda: None)
    except KeyboardInterrupt as stop:
        try:
            os.waitpid(-1, os.WNOHANG)
            print("stopped", stop, "with a child left")
        except ChildProcessError:  # the child was killed and reaped before the stop was raised
            print("stopped", stop)
    else:
        print("running", proc.pid)
        proc.kill()
    """
)


def run(how: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, how], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_plain_popen_loses_the_stop_and_spawn_does_not():
    plain = run("popen")
    assert plain.stdout.startswith("running"), plain.stdout + plain.stderr  # the hazard itself
    assert "Exception ignored" in plain.stderr and "KeyboardInterrupt: SIGHUP" in plain.stderr
    kept = run("spawn")
    assert kept.stdout.strip() == "stopped SIGHUP", kept.stdout + kept.stderr
    assert "running" not in kept.stdout
