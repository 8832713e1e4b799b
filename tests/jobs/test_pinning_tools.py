"""Pinning without the likwid-pin front end: by the harness itself from SB_PIN_CPUS (the default) and
through likwid's environment (LD_PRELOAD of liblikwidpin). The real kernels of every threaded model land
where the plan says, and a wrong placement is caught."""

import os
import shutil

import pytest

import jobs.runcase
from jobs.campaign import create_campaign, load_cases
from jobs.pinning import find_pin_library, harness_env, preload_env
from jobs.runcase import run_case
from jobs.status import case_states
from tests.records import case_record

pytestmark = pytest.mark.skipif(
    find_pin_library() is None or shutil.which("likwid-pin") is None,
    reason="likwid is not installed (scripts/setup.sh installs it)",
)

EXPERIMENT = """
description = "pinned without likwid-pin"
pin_tool = "{tool}"
repetitions = 2
reps_per_process = 2
warmup = 1
[[sweep]]
binary = ["mandelbrot-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp"]
threads = [2, 3]
pin = ["compact"]
params = { width = [48], height = [48], max_iter = [200] }
"""


def _campaign(tmp_path, tool):
    experiment = tmp_path / "pin.toml"
    experiment.write_text(EXPERIMENT.replace("{tool}", tool))
    return create_campaign(experiment, results_dir=tmp_path / "res")


@pytest.mark.parametrize("tool", ["harness", "preload"])
def test_every_threaded_model_is_placed_as_planned(tmp_path, bin_dir, tool):
    campaign = _campaign(tmp_path, tool)
    for case in load_cases(campaign):
        results = run_case(campaign, case["index"])
        assert [r["outcome"] for r in results] == ["ok"], results
        for k in range(2):
            record = case_record(campaign, case["case_id"], k)
            assert "likwid-pin" not in record["command"] and record["pin"]["tool"] == tool
            # compact on one socket: worker i on CPU i mod 2 (the third thread wraps to CPU 0)
            planned = [[w % 2, w % 2] for w in range(case["threads"])]
            assert record["placement"] == planned, (case["binary"], record["placement"])
            assert record["pin"]["violations"] == []
            assert "[pthread wrapper]" not in record["stderr_tail"]  # LIKWID_SILENT


def test_harness_pinning_preloads_nothing(tmp_path, bin_dir):
    campaign = _campaign(tmp_path, "harness")
    case = next(c for c in load_cases(campaign) if c["binary"] == "mandelbrot-c-pthreads")
    command = jobs.runcase.build_command(jobs.runcase.Context.for_campaign(campaign), case, 0)
    assert command.env.get("LD_PRELOAD") == os.environ.get("LD_PRELOAD")
    assert command.env["SB_PIN_CPUS"] == "0,1" and command.affinity is None


def test_a_wrong_harness_placement_is_caught(tmp_path, bin_dir, monkeypatch):
    # The kernel is handed the list reversed: worker 0 lands on CPU 1 and worker 1 on CPU 0.
    def reversed_list(cpus, threads, env):
        return harness_env(cpus[::-1], threads, env)

    monkeypatch.setattr(jobs.runcase, "harness_env", reversed_list)
    campaign = _campaign(tmp_path, "harness")
    case = next(
        c for c in load_cases(campaign) if c["binary"] == "mandelbrot-c-pthreads" and c["threads"] == 2
    )
    [result] = run_case(campaign, case["index"])
    assert result["outcome"] == "ok"
    violations = result["record"]["pin"]["violations"]
    assert [v["worker"] for v in violations] == [0, 1], result["record"]["placement"]


def test_a_wrong_placement_is_caught(tmp_path, bin_dir, monkeypatch):
    # The classic mistake: LIKWID_PIN in list order instead of likwid-pin's rotation (first CPU last):
    # liblikwidpin then puts the main thread (worker 0) on the last CPU and worker 1 on the first.
    def unrotated(cpus, threads, library, env):
        return preload_env(cpus, threads, library, env) | {"LIKWID_PIN": ",".join(map(str, cpus))}

    monkeypatch.setattr(jobs.runcase, "preload_env", unrotated)
    campaign = _campaign(tmp_path, "preload")
    case = next(c for c in load_cases(campaign) if c["binary"] == "mandelbrot-c-omp" and c["threads"] == 2)
    [result] = run_case(campaign, case["index"])
    assert result["outcome"] == "ok"
    violations = result["record"]["pin"]["violations"]
    assert [v["worker"] for v in violations] == [0, 1], result["record"]["placement"]
    state = next(s for s in case_states(campaign) if s["case_id"] == case["case_id"])
    assert state["pin_violations"] == 2
