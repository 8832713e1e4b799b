"""The experiment files perf/perf_duet.py writes are accepted by `scalebench plan` and measure what the
benchmark says it compares: with `duet = true` each of its pairs is one duet of the runner (so the
benchmark cannot silently stop measuring duets), and in trials the A/A pair is one comparison family.
Planned against the real kernels (their options are checked); one small campaign per mode is run and
analysed, so that the benchmark's reading of the product's tables is checked too."""

import os
from pathlib import Path

import numpy as np
import pytest
import tomli_w

from jobs.campaign import load_cases
from tests.jobs.conftest import run_cli
from tests.perf_scripts import load_perf_script

perf_duet = load_perf_script("perf_duet")


def planned(tmp_path: Path, mode: str) -> list[dict]:
    path = tmp_path / f"{mode}.toml"
    path.write_bytes(tomli_w.dumps(perf_duet.experiment(mode, processes=3, seed=1)).encode())
    plan = run_cli("plan", path, "--write", "--name", mode, "--results-dir", tmp_path / "res")
    assert plan.returncode == 0, plan.stderr
    return load_cases(tmp_path / "res" / mode)


def sides(cases: list[dict]) -> dict[str, dict[str, dict]]:
    """pair -> side -> case, each (pair, side) planned exactly once."""
    found: dict[str, dict[str, dict]] = {}
    for case in cases:
        pair, side = perf_duet.pair_of(case)
        assert side not in found.setdefault(pair, {}), f"two cases are side {side} of {pair}"
        found[pair][side] = case
    assert {pair: sorted(s) for pair, s in found.items()} == {pair: ["a", "b"] for pair in perf_duet.PAIRS}
    return found


def test_with_duet_true_every_pair_is_one_duet_of_the_runner(tmp_path, bin_dir):
    cases = planned(tmp_path, "duet")
    assert len(cases) == 2 * len(perf_duet.PAIRS)
    duets = {pair: {case["duet"] for case in side.values()} for pair, side in sides(cases).items()}
    assert all(len(names) == 1 for names in duets.values()), duets
    assert len({name for names in duets.values() for name in names}) == len(perf_duet.PAIRS)
    assert {case["reps"] for case in cases} == {3}


def test_in_trials_the_a_a_copies_are_one_family_and_nothing_is_a_duet(tmp_path, bin_dir):
    cases = planned(tmp_path, "trials")
    assert not any(case.get("duet") for case in cases)
    found = sides(cases)
    aa = found["A/A: pi C serial twice"]
    assert aa["a"]["family"] == aa["b"]["family"]
    assert {case["reps"] for case in cases} == {3}


@pytest.mark.parametrize("mode", perf_duet.MODES)
def test_the_experiment_names_its_mode(mode):
    exp = perf_duet.experiment(mode, processes=4, seed=1)
    assert exp.get("duet", False) == (mode == "duet")
    assert exp.get("interleave", "none") == ("family" if mode == "trials" else "none")


def small(sweep: dict) -> dict:
    """The sweep on a problem small enough for a test."""
    params = dict(sweep["params"])
    params |= {"samples": [400000]} if "samples" in params else {"width": [32], "height": [32]}
    return sweep | {"params": params}


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a duet needs two CPUs")
@pytest.mark.parametrize("mode", perf_duet.MODES)
def test_the_benchmark_reads_a_ratio_of_every_pair_from_what_analyze_writes(
    tmp_path, bin_dir, monkeypatch, mode
):
    """Run and analysed by the real scalebench on a small problem: every pair gets a ratio with a CI,
    paired in duets and for the A/A copies in trials, unpaired for the pairs trials cannot pair."""
    pairs = {pair: [small(sweep) for sweep in sweeps] for pair, sweeps in perf_duet.PAIRS.items()}
    monkeypatch.setattr(perf_duet, "PAIRS", pairs)
    perf_duet.run_and_analyze(tmp_path, mode, perf_duet.experiment(mode, processes=4, seed=1))
    rows = perf_duet.figures(mode, tmp_path / mode, tmp_path / mode / "analysis", np.random.default_rng(1))
    assert sorted(rows) == sorted(pairs)
    for pair, row in rows.items():
        # a CI read for every pair (how wide is the host's business: a loaded one widens it past 1)
        assert row["ratio"] > 0 and np.isfinite(row["halfwidth"]) and row["halfwidth"] >= 0, (pair, row)
        assert row["paired"] == (mode == "duet" or pair.startswith("A/A")), (pair, row)
    # The SIMD pi kernel is faster than the scalar one: b/a below 1 tells the two sides apart.
    assert rows["pi scalar vs SIMD serial"]["ratio"] < 1
