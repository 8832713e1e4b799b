"""Duets (`duet = true`, jobs/duets.py) through the real runner with a stand-in kernel on a synthetic
host with planted slow phases: the two alternatives run at the same time, one per CPU, swapping CPUs
between duets, and the analysis pairs them to the truth."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.stats.paired import paired_duet_ratios
from jobs.campaign import load_cases
from jobs.config import load_experiment, load_node_types
from jobs.duets import pair_cases
from jobs.plan import plan_cases
from sbcore.errors import UsageError
from tests.jobs.conftest import run_cli, stand_in_bin_dir
from tests.records import case_records

FAKE = Path(__file__).resolve().parent / "sampling_fake" / "fake_kernel_duet.py"

EXPERIMENT = """
description = "duets on a host with planted slow phases"
duet = true
repetitions = 8
warmup = 0
seed = 3

[[sweep]]
binary = ["fakeduet-py-serial"]
params = {{ timeline = ["{timeline}"], slow = ["1-3,5-6"] }}

[[sweep]]
binary = ["fakeduet-py-omp"]
threads = [{threads}]
params = {{ timeline = ["{timeline}"], slow = ["1-3,5-6"] }}
"""


@pytest.fixture
def fake_bin_dir(tmp_path, monkeypatch) -> Path:
    return stand_in_bin_dir(tmp_path / "bin", FAKE, ("fakeduet-py-serial", "fakeduet-py-omp"), monkeypatch)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a duet needs two CPUs")
def test_the_two_alternatives_run_at_once_swap_cpus_and_pair_to_the_truth(tmp_path, fake_bin_dir):
    experiment = tmp_path / "duet.toml"
    experiment.write_text(EXPERIMENT.format(timeline=tmp_path / "timeline", threads=1))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "d", "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "d"
    serial, omp = sorted(load_cases(campaign), key=lambda c: c["model"] != "serial")
    assert serial["duet"] == omp["duet"]
    records = {
        c["model"]: {r["invocation"]: r for r in case_records(campaign, c["case_id"])} for c in (serial, omp)
    }
    assert sorted(records["serial"]) == sorted(records["omp"]) == list(range(8))
    cpus = set()
    for p in range(8):
        a, b = records["serial"][p], records["omp"][p]
        # One duet: the two slots of the same duet of the host's timeline, started together.
        assert a["work"] // 2 == b["work"] // 2 and a["work"] != b["work"]
        assert abs(pd.Timestamp(a["started"]) - pd.Timestamp(b["started"])) < pd.Timedelta(seconds=0.25)
        assert (a["duet_partner"], b["duet_partner"]) == (omp["case_id"], serial["case_id"])
        assert a["trial"] == b["trial"] == p
        # Each on its own CPU, the one the record's placement saw; the CPUs swap from duet to duet.
        assert a["duet_cpu"] != b["duet_cpu"] and a["placement"] == [[a["duet_cpu"]] * 2]
        cpus.add((p % 2, a["duet_cpu"]))
    # The pair's first case (serial here) on the first of the two CPUs in even duets, the other in odd.
    assert serial["index"] < omp["index"]
    assert len(cpus) == 2 and dict(cpus)[0] != dict(cpus)[1]
    table = pd.DataFrame(
        [r | {"case_id": c["case_id"]} for c in (serial, omp) for r in case_records(campaign, c["case_id"])]
    )
    duets = {c["case_id"]: c["duet"] for c in (serial, omp)}
    row = paired_duet_ratios(duets, table, np.random.default_rng(1)).iloc[0]
    assert (row["case_a"], row["case_b"]) == (serial["case_id"], omp["case_id"])
    assert row["trials"] == 8 and row["paired_ratio_b_over_a"] == pytest.approx(0.8)
    assert row["paired_ci_low"] == pytest.approx(0.8) == row["paired_ci_high"]


def test_a_multi_worker_case_is_refused_in_one_line(tmp_path, fake_bin_dir):
    experiment = tmp_path / "duet.toml"
    experiment.write_text(EXPERIMENT.format(timeline=tmp_path / "timeline", threads=2))
    with pytest.raises(
        UsageError,
        match=r"duet.toml: duet = true: fakeduet-py-omp \(threads 2, ranks 1, inner scalar\) has more than "
        r"one worker",
    ):
        plan_cases(load_experiment(experiment, load_node_types()), load_node_types())


def case(binary: str, node_type: str = "n", env: dict | None = None, **params) -> dict:
    kernel, lang, model = binary.split("-")
    return {
        "env": env or {},
        "binary": binary,
        "kernel": kernel,
        "lang": lang,
        "model": model,
        "node_type": node_type,
        "threads": 1,
        "ranks": 1,
        "pin": "none",
        "params": params,
        "case_id": binary,
    }


def fail(key, value, problem):
    raise UsageError(f"x.toml: {key} = {value}: {problem}")


def test_pairs_are_alternatives_of_one_measurement():
    """C against Fortran serial and scalar against SIMD pair; the problem keeps them apart."""
    cases = [case("mandelbrot-c-serial", width=64), case("mandelbrot-f-serial", width=64)]
    cases += [case("mcpi-c-serial", samples=10), case("mcpi-c-serial", samples=10, inner="simd")]
    pair_cases(cases, {"n": 2}, fail)
    assert cases[0]["duet"] == cases[1]["duet"] != cases[2]["duet"] == cases[3]["duet"]


def test_an_a_a_pair_is_the_same_case_twice_told_apart_by_its_environment():
    """The same binary and options twice pair as one duet; the problem still keeps pairs apart."""
    cases = [case("mcpi-c-serial", env={"SB_AA_COPY": copy}, samples=10) for copy in "ab"]
    cases.append(case("mcpi-c-serial", env={"SB_AA_COPY": "a"}, samples=20))
    with pytest.raises(UsageError, match="1 cases would run as one duet"):
        pair_cases(cases, {"n": 2}, fail)
    pair_cases(cases[:2], {"n": 2}, fail)
    assert cases[0]["duet"] == cases[1]["duet"]


@pytest.mark.parametrize(
    ("cases", "cpus", "message"),
    [
        ([case("a-c-serial"), case("a-f-serial")], 1, "node type n has 1 CPU: a duet needs 2"),
        ([case("a-c-serial"), case("a-f-serial"), case("a-c-omp")], 2, "3 cases would run as one duet"),
        ([case("a-c-serial")], 2, "1 cases would run as one duet"),
    ],
)
def test_what_cannot_be_a_duet_is_refused(cases, cpus, message):
    with pytest.raises(UsageError, match=message):
        pair_cases(cases, {"n": cpus}, fail)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("duet = 1\n", "duet = 1: must be true or false"),
        ('duet = true\ninterleave = "family"\n', "duet = true: not with interleave = 'family'"),
    ],
)
def test_the_duet_key_is_checked(tmp_path, lines, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'description = "x"\n{lines}[[sweep]]\nbinary = ["mcpi-c-serial"]\n')
    with pytest.raises(UsageError, match=message):
        load_experiment(path, load_node_types())
