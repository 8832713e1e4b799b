"""Experiment keys of the seed scenarios: cpus, load, reference; one-line errors naming file, key, value."""

import json

import pytest

from ..jobs.conftest import run_cli

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
        ("", "cpus = [1]", "none", "sweep[0].cpus = 1: needs a pin strategy and 1..2 CPUs"),
        ("", "cpus = [3]", "cores", "sweep[0].cpus = 3: needs a pin strategy and 1..2 CPUs"),
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
