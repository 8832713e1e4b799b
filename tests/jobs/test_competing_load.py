"""Competing load: stress-ng runs pinned, at its nice value, for exactly one kernel invocation; its CPU
time is measured; nothing of it outlives the invocation, also when the kernel crashes or hangs."""

import json
import os
import time
from pathlib import Path

import pytest

from jobs.competing_load import LoadError, LoadRun, check_profiles, group_alive
from jobs.config_decode import Checker
from sbcore.errors import UsageError
from tests.records import campaign_records

from .conftest import run_cli

PROFILE = {"name": "hog", "workers": 1, "intensity": 100, "cpus": [1], "nice": 7, "policy": "batch"}
PROFILE |= {"method": "int64", "settle_s": 0.2}


def group_members(pgid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(stat[stat.rindex(")") + 2 :].split()[2]) == pgid:
            pids.append(int(entry.name))
    return pids


def test_load_runs_pinned_at_its_nice_and_policy_and_is_gone_afterwards():
    with LoadRun(PROFILE, timeout_s=10) as load:
        time.sleep(0.6)
        pgid = load.proc.pid
        workers = [p for p in group_members(pgid) if p != pgid]
        assert workers, "stress-ng started no worker"
        for pid in workers:
            status = Path(f"/proc/{pid}/status").read_text()
            assert "Cpus_allowed_list:\t1\n" in status
            assert os.getpriority(os.PRIO_PROCESS, pid) == 7
            assert os.sched_getscheduler(pid) == os.SCHED_BATCH
        end = time.monotonic()
    assert load.problem is None and not group_alive(pgid) and group_members(pgid) == []
    record = load.record
    assert record["pgid"] == pgid and record["profile"]["cpus"] == [1]
    assert record["wall_s"] >= 0.8
    # One hog gets at most one CPU; how much less depends on what else runs (the machine is shared).
    assert 0 < record["cpu_s"] <= 1.1 * record["wall_s"]
    assert record["cpu_share"] == pytest.approx(record["cpu_s"] / record["wall_s"], rel=0.01)
    # The CPU time inside a window (the kernel's compute region in run-case): the last 0.3 s before `end`.
    load.compute_window(end, 0.3)
    assert 0 <= record["compute_cpu_s"] <= 0.3 * 1.05
    assert record["compute_cpu_share"] == pytest.approx(record["compute_cpu_s"] / 0.3, rel=0.01)
    assert record["compute_cpu_s"] <= record["cpu_s"]
    load.compute_window(end, 0.05)  # too short for 10 ms samples: the earlier window stays, none is added
    assert record["compute_cpu_share"] == pytest.approx(record["compute_cpu_s"] / 0.3, rel=0.01)


def test_no_load_is_no_process():
    with LoadRun(None, timeout_s=10) as load:
        pass
    assert load.record is None and load.problem is None


def test_refused_setting_is_a_load_error_naming_it():
    refused = pytest.raises(LoadError, match=r"affinity to CPUs \[4095\] refused: Invalid argument")
    with refused, LoadRun(PROFILE | {"cpus": [4095]}, timeout_s=10):
        pass


def test_load_that_dies_early_is_a_problem():
    with LoadRun({k: v for k, v in PROFILE.items() if k != "cpus"}, timeout_s=10) as load:
        os.killpg(load.proc.pid, 9)
        time.sleep(0.1)
    assert load.problem and "stress-ng ended before the kernel did" in load.problem


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"x": {"intensity": 120}}, "load.x.intensity = 120: a percentage: 1..100"),
        ({"x": {"policy": "fifo"}}, "load.x.policy = 'fifo': must be other, batch, idle, fifo:P or rr:P"),
        ({"x": {"cpus": [-1]}}, "load.x.cpus[0] = -1: must be >= 0"),
        ({"x": {"speed": 3}}, "load.x.speed = 3: unknown key"),
        ({"none": {}}, "load.none = {...}: 'none' means no load"),
    ],
)
def test_bad_profiles_are_one_line_naming_key_and_value(table, message):
    with pytest.raises(UsageError, match="^e.toml: " + message.replace("[", r"\[").replace("]", r"\]")):
        check_profiles(Checker("e.toml"), table)


EXPERIMENT = """
description = "load around crashing and hanging kernels"
repetitions = 1
warmup = 0
timeout_s = 2
seed = 3

[load.hog]
workers = 2
settle_s = 0.1

[[sweep]]
binary = ["failinject-sh-crash", "failinject-sh-hang"]
load = ["hog"]

[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [1000] }
load = ["hog", "nope"]
"""


def test_unknown_load_profile_is_a_config_error(tmp_path):
    experiment = tmp_path / "e.toml"
    experiment.write_text(EXPERIMENT)
    plan = run_cli("plan", experiment)
    assert plan.returncode == 2
    assert "sweep[1].load[1] = 'nope': unknown load profile (known: none, hog)" in plan.stderr


@pytest.mark.slow
def test_no_load_process_outlives_a_crashing_or_hanging_kernel(tmp_path, injection_bin_dir):
    experiment = tmp_path / "e.toml"
    experiment.write_text(EXPERIMENT.replace('load = ["hog", "nope"]', 'load = ["hog"]'))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "l", "--no-progress")
    assert run.returncode == 1, run.stderr
    campaign = tmp_path / "res" / "l"
    failed = [json.loads(p.read_text()) for p in (campaign / "raw").glob("*/rep-0.failed-*.json")]
    records = campaign_records(campaign) + failed
    reasons = sorted(r.get("reason", "ok") for r in records)
    assert reasons == ["killed by signal SIGSEGV", "ok", "timeout after 2 s"]
    for record in records:
        assert record["load"]["profile"]["name"] == "hog" and record["load"]["cpu_s"] > 0
        assert group_members(record["load"]["pgid"]) == []
