"""What the own-program tests share: test programs built once, an experiment file written from a few
lines, and a campaign run and analysed through the command line as a user would."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jobs.conftest import run_cli
from tests.kernel_records import runq_share
from tests.records import campaign_records

HERE = Path(__file__).parent
ARGV_DUMPER = """#!{python}
import json, os, sys
# A test program: prints its argument vector, the variable its first argument names and its CPU
# affinity as JSON, writes the same into its working directory (seen-<pid>.json), then a figure.
seen = {{"argv": sys.argv[1:], "env": {{k: os.environ.get(k) for k in sys.argv[1:2]}},
        "affinity": sorted(os.sched_getaffinity(0))}}
print(json.dumps(seen))
with open(f"seen-{{os.getpid()}}.json", "w") as fh:
    json.dump(seen, fh)
print("elapsed: 0.125 s")
"""


@pytest.fixture(scope="session")
def imbalanced(tmp_path_factory) -> Path:
    """tests/programs/imbalanced_omp.c built with gcc -fopenmp (a GCC OpenMP program)."""
    out = tmp_path_factory.mktemp("imbalanced") / "imbalanced_omp"
    subprocess.run(["gcc", "-O2", "-fopenmp", str(HERE / "imbalanced_omp.c"), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="session")
def argv_dumper(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dumper") / "argv-dumper"
    path.write_text(ARGV_DUMPER.format(python=sys.executable))
    path.chmod(0o755)
    return path


@pytest.fixture
def lock_env(tmp_path) -> dict:
    """A measurement lock of the test's own (other measurers on this host do not hold the test up)."""
    return {"SCALEBENCH_MEASURE_LOCK": str(tmp_path / "measure.lock")}


def write_experiment(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def run_campaign(tmp_path: Path, experiment: Path, env: dict, *extra, timeout=600) -> Path:
    """`scalebench run` of the experiment into tmp_path/results; the campaign directory."""
    results = tmp_path / "results"
    done = run_cli(
        "run", experiment, "--results-dir", results, "--no-progress", *extra, env=env, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (campaign,) = [p for p in results.iterdir() if p.is_dir() and not p.is_symlink()]
    return campaign


def records(campaign: Path) -> list[dict]:
    """Every counted record of the campaign (tests/records.py: the one reader of stored records)."""
    return campaign_records(campaign)


def analyze(campaign: Path, env: dict, *extra) -> subprocess.CompletedProcess:
    return run_cli("analyze", campaign, *extra, env=env, timeout=600)


def have(program: str) -> bool:
    from shutil import which

    return which(program) is not None and os.access(which(program), os.X_OK)


def one_program(name: str, program: str, sweep: str = "", repetitions: int = 2, warmup: int = 0) -> str:
    """An experiment of one program on 1 and 2 threads pinned to cores: `program` is the body of its
    [programs.<name>] table, `sweep` more lines of its sweep."""
    return (
        f'description = "the program {name}"\nnode_types = ["workstation"]\n'
        f"repetitions = {repetitions}\nwarmup = {warmup}\n\n[programs.{name}]\n{program}\n\n"
        f'[[sweep]]\nprogram = "{name}"\nthreads = [1, 2]\npin = ["cores"]\n{sweep}\n'
    )


RUNQ_SHARE = 0.05  # a repetition whose threads waited for a CPU this share of their time ran on a loaded host


def quiet_reps(found: list[dict], case_id: str, at_least: int, share: float = RUNQ_SHARE) -> list[dict]:
    """A case's measured repetitions whose threads waited for a CPU (the probe's run-queue wait) at most
    `share` of their time; skips the test, naming what was measured, when fewer than `at_least` are
    left: a truth test judges a measurement, which other processes holding the CPUs make no test of."""
    reps = [r for r in found if r["case_id"] == case_id and not r["warmup"]]
    quiet = [r for r in reps if runq_share(r) <= share]
    if len(quiet) < at_least:
        shares = sorted(round(runq_share(r), 3) for r in reps)
        pytest.skip(
            f"the host was loaded: {case_id}'s threads waited for a CPU {shares} of their time"
            f" ({len(quiet)} of {len(reps)} repetitions at most {share:g}, {at_least} needed)"
        )
    return quiet


def others_share(run) -> float:
    """Runs run() and returns the share of the host's CPU capacity during it that processes other than
    run's children took: the CPUs' busy share over the run (jobs/quiet_gate.py's /proc/stat reading,
    with the run as its window) minus the children's CPU time from getrusage."""
    import resource
    import time

    from jobs.quiet_gate import cpu_busy_share

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    busy = cpu_busy_share(0, sleep=lambda _window: run())
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return max(0.0, busy - mine / (wall * os.cpu_count()))
