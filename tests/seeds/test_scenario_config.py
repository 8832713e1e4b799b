"""Experiment keys of the seed scenarios: cpus, load, reference; one-line errors naming file, key, value."""

import json
import shutil
import subprocess
import sys

import pytest

from ..jobs.conftest import ROOT, run_cli

BASE = """
description = "scenario config"
{top}
[[sweep]]
binary = ["mandelbrot-c-pthreads"]
threads = [2, 512]
pin = "{pin}"
params = {{ width = 16, height = 8 }}
{sweep}
"""


def plan(tmp_path, top="", sweep="", pin="cores"):
    path = tmp_path / "e.toml"
    path.write_text(BASE.format(top=top, sweep=sweep, pin=pin))
    return path, run_cli("plan", path)


@pytest.mark.parametrize(
    ("top", "sweep", "pin", "message"),
    [
        ('reference = "seed-000"', "", "cores", "reference = 'seed-000': must be \"<seed>:<case>\""),
        ('reference = "seed-000:tc99"', "", "cores", "seed-000.toml has no [cases.tc99]"),
        ('reference = "seed-999:tc01"', "", "cores", "reference = 'seed-999:tc01': no reference file"),
        ("", "cpus = [3]", "cores", "sweep[0].cpus = 3: must be 1..2 on node type workstation"),
        ("", "cpus = [3]", "none", "sweep[0].cpus = 3: must be 1..2 on node type workstation"),
        ("", "cpus = [0]", "cores", "sweep[0].cpus[0] = 0: must be >= 1"),
        (
            "[load.h]\ncpus = [5]\n",
            'load = ["h"]',
            "cores",
            "load.h.cpus = [5]: node type workstation has CPUs 0..1",
        ),
        ("[load.h]\nworkers = 0\n", 'load = ["h"]', "cores", "load.h.workers = 0: must be >= 1"),
    ],
)
def test_bad_scenario_keys_are_one_line(tmp_path, top, sweep, pin, message):
    path, result = plan(tmp_path, top, sweep, pin)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("scalebench plan: error: ") and f"{path}: " in line and message in line, line


def test_scenario_lands_in_the_case_and_plain_cases_keep_their_ids(tmp_path):
    _, plain = plan(tmp_path)
    assert plain.returncode == 0, plain.stderr
    top = 'reference = "seed-000:tc08"\n[load.h]\nworkers = 2\ncpus = [1]\n'
    path, result = plan(tmp_path, top, 'cpus = [1, 2]\nload = ["none", "h"]')
    assert result.returncode == 0, result.stderr
    written = run_cli("plan", path, "--write", "--results-dir", tmp_path / "res", "--name", "p")
    assert written.returncode == 0, written.stderr
    cases = [json.loads(line) for line in (tmp_path / "res" / "p" / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 2 * 2 * 2 and {c["threads"] for c in cases} == {2, 512}  # no cap at 4 x cores
    assert {c["cpus"] for c in cases} == {1, 2}
    loaded = [c for c in cases if "load" in c]
    assert len(loaded) == 4 and all(c["load"] | {} == loaded[0]["load"] for c in loaded)
    assert loaded[0]["load"] == {"name": "h", "workers": 2, "cpus": [1], "intensity": 100, "nice": 0,
                                 "policy": "other", "method": "int64", "settle_s": 0.2}  # fmt: skip
    ids_plain = set(plain.stdout.split())
    assert all(c["case_id"] not in ids_plain for c in cases)  # a scenario is another case
    snapshot = (tmp_path / "res" / "p" / "campaign.toml").read_text()
    assert 'reference = "seed-000:tc08"' in snapshot and "[load.h]" in snapshot


REFUSED = """
description = "a real-time worker where the OS refuses it"
repetitions = 1
warmup = 0
timeout_s = 20

[[sweep]]
binary = ["mandelbrot-c-pthreads"]
threads = 2
params = { width = 16, height = 8, worker_policy = ["other,fifo:1", "other"] }
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to drop CAP_SYS_NICE")
def test_refused_scheduling_fails_the_case_with_the_os_reason(tmp_path):
    """Without CAP_SYS_NICE (as on most clusters) a SCHED_FIFO case is failed with the OS's reason and the
    campaign goes on; the other case is measured."""
    experiment = tmp_path / "refused.toml"
    experiment.write_text(REFUSED)
    run = subprocess.run(
        ["setpriv", "--bounding-set", "-sys_nice", sys.executable, str(ROOT / "scalebench"), "run",
         str(experiment), "--results-dir", str(tmp_path / "res"), "--name", "r", "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 1 and "1 repetitions ran, 1 failed" in run.stdout, run.stdout + run.stderr
    [failed] = (tmp_path / "res" / "r" / "raw").glob("*/rep-0.failed-*.json")
    reason = json.loads(failed.read_text())["reason"]
    assert reason == (
        "exit status 1: mandelbrot-c-pthreads: worker 1: SCHED_FIFO priority 1 refused by the OS: "
        "Operation not permitted (needs CAP_SYS_NICE or a matching RLIMIT_NICE/RTPRIO)"
    )
    status = run_cli("status", tmp_path / "res" / "r")
    assert "SCHED_FIFO priority 1 refused by the OS" in status.stdout


def test_confined_workers_outside_their_cpu_set_are_violations():
    from jobs.pinning import confinement_violations

    assert confinement_violations([0], [[0, 0], [0, 0]]) == []
    assert confinement_violations([0, 1], [[1, 0], [0, 2]]) == [
        {"worker": 1, "planned": [0, 1], "seen": [0, 2]}
    ]
