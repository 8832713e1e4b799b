"""Conducted trials (`conduct = true`, jobs/conduct.py): the real mcpi-c-omp on 2 threads runs with
mcpi-c-serial on each of its CPUs before every repetition; the conductor's order; a reference process
that dies fails the invocation with one line and stores nothing."""

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.stats.capacity import COLUMNS as CAPACITY_COLUMNS
from analysis.stats.paired import COLUMNS as PAIRED_COLUMNS
from jobs import conduct
from jobs.campaign import load_cases
from sbcore import layout
from tests.jobs.conftest import run_cli
from tests.records import case_records

TWO_CPUS = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="a conducted 2-thread case needs 2 CPUs"
)

EXPERIMENT = """
description = "a conducted trial"
interleave = "family"
conduct = true
repetitions = 3
warmup = 1
timeout_s = 60
seed = 4

[env]
OMP_PROC_BIND = "false"
OMP_WAIT_POLICY = "passive"

[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["compact"]
params = { samples = [300000], seed = [7] }

[[sweep]]
binary = ["mcpi-c-omp"]
threads = [2]
pin = ["compact"]
params = { samples = [300000], seed = [7], schedule = ["static"] }
"""


@TWO_CPUS
def test_a_conducted_member_carries_its_reference_times_from_its_own_cpus(tmp_path):
    experiment = tmp_path / "conduct.toml"
    experiment.write_text(EXPERIMENT)
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "c", "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "c"
    serial, omp = sorted(load_cases(campaign), key=lambda c: c["model"] != "serial")
    assert omp.get("conduct") is True and not serial.get("conduct")
    member = case_records(campaign, omp["case_id"])
    assert len(member) == 3
    for record in member:
        refs = record["ref_cpu_s"]
        assert len(refs) == 2 and all(t > 0 for t in refs)
        assert record["ref_static_s"] == pytest.approx(max(refs))
        assert record["ref_dynamic_s"] == pytest.approx(2 / (1 / refs[0] + 1 / refs[1]))
        assert sorted(record["pin"]["cpus"]) == [0, 1] or len(set(record["pin"]["cpus"])) == 2
    # The baseline's own repetitions stay its own: no reference time on them, its count unchanged.
    baseline = case_records(campaign, serial["case_id"])
    assert len(baseline) == serial["reps"] and all("ref_static_s" not in r for r in baseline)


def _fake(tmp_path: Path, body: str, placement: str = "") -> list[str]:
    """A stand-in kernel taking turns like the harness: waits for a byte, 'measures', answers."""
    script = tmp_path / f"fake{abs(hash(body + placement))}.py"
    script.write_text(
        "import json, os, sys, time\n"
        "r, w = map(int, sys.argv[sys.argv.index('--turns') + 1].split(','))\n"
        "reps = int(sys.argv[sys.argv.index('--reps') + 1])\n"
        "warm = int(sys.argv[sys.argv.index('--warmup') + 1])\n"
        "log = sys.argv[1]\n"
        "with open(log + '.pids', 'a') as f: f.write(str(os.getpid()) + '\\n')\n"
        "for i in range(warm + reps):\n"
        "    if os.read(r, 1) != b'g': sys.exit(0)\n"
        f"{body}"
        "    with open(log, 'a') as f: f.write(sys.argv[2] + ' ' + str(time.monotonic()) + '\\n')\n"
        "    record = {'schema': 'scalebench.run/1', 'warmup': i < warm, 'wall_s': 0.01 * (i + 1)}\n"
        f"{placement}"
        "    print(json.dumps(record), flush=True)\n"
        "    os.write(w, b'd')\n"
    )
    return [sys.executable, str(script)]


def test_the_references_take_every_turn_before_the_member(tmp_path, monkeypatch):
    fake = _fake(tmp_path, "")
    log = tmp_path / "order"
    events = []
    refs = [
        ([*fake, str(log), f"ref{i}", "--reps", "3", "--warmup", "1"], dict(os.environ), 0) for i in range(2)
    ]
    member = ([*fake, str(log), "member", "--reps", "2", "--warmup", "1"], dict(os.environ), None)
    outcome = conduct.conduct(member, refs, 3, 30, tmp_path, log=events.append)
    assert outcome.status == 0 and not outcome.timed_out
    # Warm-up turn of both references, then per member turn: both references, then the member.
    assert events == ["ref 0", "ref 1"] + ["ref 0", "ref 1", "member"] * 3
    done = [line.split()[0] for line in log.read_text().splitlines()]
    assert [d.startswith("ref") for d in done] == [True, True] + [True, True, False] * 3
    assert outcome.ref_times == [[0.02, 0.03, 0.04]] * 2
    fields = conduct.reference_fields([[1.0, 2.0, 4.0], [1.0, 4.0, 2.0]], 1, 1)
    assert fields == {
        "ref_static_s": 4.0,
        "ref_dynamic_s": pytest.approx(2 / (0.25 + 0.5)),
        "ref_cpu_s": [4.0, 2.0],
    }


def test_a_reference_that_dies_mid_trial_is_one_line(tmp_path, monkeypatch):
    dying = _fake(tmp_path, "    if i == 2 and sys.argv[2] == 'ref1': sys.exit(9)\n")
    log = tmp_path / "order"
    refs = [
        ([*dying, str(log), f"ref{i}", "--reps", "3", "--warmup", "1"], dict(os.environ), 0) for i in range(2)
    ]
    member = ([*dying, str(log), "member", "--reps", "2", "--warmup", "1"], dict(os.environ), None)
    with pytest.raises(conduct.ConductError) as err:
        conduct.conduct(member, refs, 3, 30, tmp_path)
    assert "reference process 1 on CPU 0" in str(err.value) and "exit status 9" in str(err.value)
    assert "\n" not in str(err.value)


def planned(tmp_path):
    """The conducted experiment planned (not run): (campaign, the serial case, the OpenMP member)."""
    experiment = tmp_path / "conduct.toml"
    experiment.write_text(EXPERIMENT)
    plan = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "res", "--name", "c")
    assert plan.returncode == 0, plan.stderr
    campaign = tmp_path / "res" / "c"
    serial, omp = sorted(load_cases(campaign), key=lambda c: c["model"] != "serial")
    return campaign, serial, omp


@TWO_CPUS
def test_a_dead_reference_stores_nothing_and_resume_completes(tmp_path, monkeypatch):
    from jobs import runcase

    campaign, serial, omp = planned(tmp_path)
    ctx = runcase.Context.for_campaign(campaign)
    real = runcase.reference_commands

    def killed_reference(*args, **kwargs):
        commands = real(*args, **kwargs)
        argv, env, cpu = commands[1]
        # The second reference process is killed after its warm-up and first repetition.
        wrapper = [sys.executable, "-c", KILLER, *argv]
        return [commands[0], (wrapper, env, cpu)]

    monkeypatch.setattr(runcase, "reference_commands", killed_reference)
    result = runcase.run_invocation(ctx, omp, 0, reference=serial)
    assert result["outcome"] == "failed"
    assert result["reason"].startswith("conducted trial: reference process 1 on CPU")
    assert "\n" not in result["reason"]
    assert case_records(campaign, omp["case_id"]) == []
    assert not layout.reps_path(campaign, omp["case_id"]).exists()
    # Resume: the run measures what is missing, conducted.
    monkeypatch.setattr(runcase, "reference_commands", real)
    run = run_cli("run", "--resume", campaign, "--no-progress")
    assert run.returncode == 0, run.stderr
    records = case_records(campaign, omp["case_id"])
    assert len(records) == 3 and all(r["ref_static_s"] > 0 for r in records)


# Runs the command with --turns passed through, but exits after forwarding two turns.
KILLER = """
import os, subprocess, sys
argv = sys.argv[1:]
r, w = map(int, argv[argv.index('--turns') + 1].split(','))
inner_r, outer_w = os.pipe()
outer_r, inner_w = os.pipe()
argv[argv.index('--turns') + 1] = f'{inner_r},{inner_w}'
proc = subprocess.Popen(argv, pass_fds=(inner_r, inner_w))
for _ in range(2):
    os.write(outer_w, os.read(r, 1))
    os.write(w, os.read(outer_r, 1))
proc.kill()
sys.exit(9)
"""


def test_a_reference_seen_on_another_cpu_fails_the_invocation(tmp_path):
    elsewhere = _fake(tmp_path, "", placement="    record['placement'] = [[1, 1]]\n")
    log = tmp_path / "order"
    refs = [([*elsewhere, str(log), "ref0", "--reps", "2", "--warmup", "1"], dict(os.environ), 0)]
    member = ([*elsewhere, str(log), "member", "--reps", "1", "--warmup", "1"], dict(os.environ), None)
    with pytest.raises(conduct.ConductError, match=r"reference process 0 on CPU 0 was seen on CPU \[1\]"):
        conduct.conduct(member, refs, 2, 30, tmp_path)


@TWO_CPUS
def test_the_analysis_writes_a_capacity_speedup_beside_the_paired_one(tmp_path):
    experiment = tmp_path / "conduct.toml"
    experiment.write_text(EXPERIMENT.replace("repetitions = 3", "repetitions = 4"))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "c", "--no-progress")
    assert run.returncode == 0, run.stderr
    analyze = run_cli("analyze", tmp_path / "res" / "c")
    assert analyze.returncode in (0, 1), analyze.stderr
    campaign = tmp_path / "res" / "c"
    _, omp = sorted(load_cases(campaign), key=lambda c: c["model"] != "serial")
    table = pd.read_csv(campaign / "analysis" / "paired_speedup.csv")
    row = table.set_index("case_id").loc[omp["case_id"]]
    records = case_records(campaign, omp["case_id"])
    ratios = sorted(r["ref_static_s"] / r["wall_s"] for r in records)  # one repetition per process
    assert row["capacity_rule"] == "static" and row["capacity_trials"] == 4
    assert row["capacity_speedup"] == pytest.approx(np.median(ratios))
    assert row["capacity_ci_low"] <= row["capacity_speedup"] <= row["capacity_ci_high"]
    # The classic paired speedup's columns stay as they were, the capacity ones after them.
    assert list(table.columns) == [*PAIRED_COLUMNS, *CAPACITY_COLUMNS]
    report = (campaign / "analysis" / "report.md").read_text()
    assert f"Conducted (`conduct = true`), 1 of {len(table)}" in report
    assert "capacity (baseline on every CPU, ms before)" in report
    assert "1 case(s) ran conducted (`conduct = true`)" in report


@TWO_CPUS
def test_run_case_conducts_too(tmp_path):
    """A Slurm array task (`run-case`) conducts the member as the local runner does."""
    campaign, serial, omp = planned(tmp_path)
    run = run_cli("run-case", campaign, omp["index"])
    assert run.returncode == 0, run.stderr
    records = case_records(campaign, omp["case_id"])
    assert len(records) == 3 and all(len(r["ref_cpu_s"]) == 2 for r in records)
    assert case_records(campaign, serial["case_id"]) == []  # references are not the baseline's reps


def test_an_interrupt_mid_trial_ends_every_process_it_started(tmp_path):
    fake = _fake(tmp_path, "")
    log = tmp_path / "order"
    refs = [
        ([*fake, str(log), f"ref{i}", "--reps", "3", "--warmup", "1"], dict(os.environ), 0) for i in range(2)
    ]
    member = ([*fake, str(log), "member", "--reps", "2", "--warmup", "1"], dict(os.environ), None)
    events = []

    def interrupt(event):
        events.append(event)
        if len(events) == 6:  # after the member's first turn, before its second: Ctrl-C
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        conduct.conduct(member, refs, 3, 30, tmp_path, log=interrupt)
    pids = [int(p) for p in (tmp_path / "order.pids").read_text().split()]
    assert len(pids) == 3
    for pid in pids:  # killed and reaped: no process is left measuring
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_only_one_process_members_on_more_than_one_cpu_of_a_family_with_a_baseline_are_conducted():
    from jobs.conduct_plan import conducted_references, mark_conducted

    def case(name, model, threads=1, ranks=1, pin="compact", family="f", **more):
        shape = {"case_id": name, "model": model, "threads": threads, "ranks": ranks, "pin": pin}
        return shape | {"family": family, "node_type": "ws", **more}

    cases = [
        case("base", "serial"),
        case("two", "omp", 2),
        case("one", "omp", 1),
        case("over", "omp", 3),
        case("loose", "omp", 2, pin="none"),
        case("confined", "omp", 2, pin="none", cpus=2),
        case("mpi", "mpi", 1, 2),
        case("orphan", "omp", 2, family="g"),
    ]
    mark_conducted(cases, {"ws": 2})
    assert [c["case_id"] for c in cases if c.get("conduct")] == ["two", "confined"]
    refs = conducted_references(cases)
    assert set(refs) == {"two", "confined"} and refs["two"]["case_id"] == "base"
