"""Trial groups (jobs/families.py): the families of one node type, kernel and problem that differ in
language and/or inner loop run in the same trials, each with its own baseline placed among its own
members; a group of one family runs as its family did before."""

import random

import numpy as np
import pandas as pd
import pytest

from analysis.stats.paired_cross import paired_cross_ratios
from jobs.campaign import load_cases
from jobs.families import family_of, repeat_baselines, trial_group_of, trials
from tests.jobs.conftest import run_cli, stand_in_bin_dir
from tests.jobs.test_trials import FAKE
from tests.records import case_records


def planned(binary: str, model: str, threads: int, params: dict) -> dict:
    lang = binary.split("-")[1]
    case = {"node_type": "ws", "kernel": binary.split("-")[0], "lang": lang, "binary": binary}
    case |= {"model": model, "threads": threads, "ranks": 1, "params": params, "reps": 12}
    case |= {"family": family_of(case), "trial_group": trial_group_of(case)}
    options = "-".join(f"{k}={v}" for k, v in sorted(params.items()))
    return case | {"case_id": f"{binary}-{threads}-{options}"}


def group_of_three_families(n: int = 1) -> list[dict]:
    """C scalar (a baseline and 9 members), C SIMD (a baseline and 3), Fortran (no baseline, 2)."""
    cases = [planned("k-c-serial", "serial", 1, {"n": n})]
    cases += [planned("k-c-omp", "omp", t, {"n": n, "schedule": s}) for t in (1, 2, 3) for s in "abc"]
    cases += [planned("k-c-serial", "serial", 1, {"n": n, "inner": "simd"})]
    cases += [planned("k-c-omp", "omp", t, {"n": n, "inner": "simd"}) for t in (1, 2, 3)]
    cases += [planned("k-f-omp", "omp", t, {"n": n}) for t in (1, 2)]
    return cases


def test_families_differing_in_language_or_inner_loop_share_a_group_and_keep_their_names():
    cases = group_of_three_families()
    assert len({c["family"] for c in cases}) == 3
    assert len({c["trial_group"] for c in cases}) == 1
    assert trial_group_of(planned("k-c-omp", "omp", 1, {"n": 2})) != cases[0]["trial_group"]  # problem
    assert trial_group_of(planned("q-c-omp", "omp", 1, {"n": 1})) != cases[0]["trial_group"]  # kernel


@pytest.mark.parametrize("seed", range(5))
def test_a_group_trial_runs_all_its_families_back_to_back_each_baseline_among_its_own(seed):
    every = 4
    cases = group_of_three_families() + group_of_three_families(n=2)[:4]  # and another group
    repeat_baselines(cases, every)
    assert [c.get("trial_runs", 1) for c in cases if c["model"] == "serial"] == [4, 2, 2]
    work = [
        (c, t * c.get("trial_runs", 1) + j)
        for c in cases
        for t in (0, 1)
        for j in range(c.get("trial_runs", 1))
    ]
    ordered = trials(work, random.Random(seed))
    assert sorted((c["case_id"], p) for c, p, _ in ordered) == sorted((c["case_id"], p) for c, p in work)
    for group in {c["trial_group"] for c in cases}:
        members = [c for c in cases if c["trial_group"] == group]
        for t in (0, 1):
            where = [
                i
                for i, (c, p, place) in enumerate(ordered)
                if c["trial_group"] == group and place["trial"] == t
            ]
            assert where == list(range(where[0], where[0] + len(where)))  # back to back
            runs = [ordered[i] for i in where]
            assert [place for _, _, place in runs] == [
                {"trial": t, "trial_slot": s} for s in range(len(runs))
            ]
            assert len(runs) == sum(c.get("trial_runs", 1) for c in members)
            for family in {c["family"] for c in members}:
                own = [(c, p) for c, p, _ in runs if c["family"] == family]
                shown = "".join("B" if c["model"] == "serial" else "m" for c, _ in own)
                if "B" not in shown:
                    continue
                # Before its family's first member, after its last, at most `every` of them between.
                assert shown[0] == shown[-1] == "B" and max(map(len, shown.split("B"))) <= every
                baseline = [p for c, p in own if c["model"] == "serial"]
                assert baseline == sorted(baseline) and {p // len(baseline) for p in baseline} == {t}
    # The groups' members interleave: in some trial a SIMD or Fortran member runs between C members.
    big = cases[0]["trial_group"]
    lang_inner = [
        "".join(
            "x" if c["family"] != cases[0]["family"] else "c"
            for c, _, pl in ordered
            if c["trial_group"] == big and pl["trial"] == t
        )
        for t in (0, 1)
    ]
    assert any("cx" in s and "xc" in s for s in lang_inner)


def test_a_group_of_one_family_runs_as_its_family_did():
    """Cases whose group holds one family: the same trials, in the same order, with the same places,
    as the same cases planned before trial groups (no `trial_group`: grouped by family)."""
    cases = group_of_three_families()[:10] + group_of_three_families(n=2)[:10]
    assert len({c["trial_group"] for c in cases}) == len({c["family"] for c in cases}) == 2
    repeat_baselines(cases, 4)
    old = [{k: v for k, v in c.items() if k != "trial_group"} for c in cases]
    work = [(c, p) for c in cases for p in range(3 * c.get("trial_runs", 1))]
    work_old = [(c, p) for c in old for p in range(3 * c.get("trial_runs", 1))]
    grouped = [(c["case_id"], p, place) for c, p, place in trials(work, random.Random(7))]
    assert grouped == [(c["case_id"], p, place) for c, p, place in trials(work_old, random.Random(7))]


EXPERIMENT = """
description = "a trial group of two families: the scalar and the SIMD inner loop"
interleave = "family"
repetitions = 8
warmup = 0
seed = 5

[[sweep]]
binary = ["fakephase-py-serial"]
params = {{ timeline = ["{timeline}"], slow = ["5-13,30-47"], inner = ["scalar", "simd"] }}

[[sweep]]
binary = ["fakephase-py-omp"]
threads = [2]
params = {{ timeline = ["{timeline}"], slow = ["5-13,30-47"], inner = ["scalar", "simd"] }}
"""


def run_group(tmp_path, monkeypatch, experiment_text: str):
    """Runs an experiment of the fake phase kernels whose two families form one trial group:
    (campaign directory, its cases)."""
    stand_in_bin_dir(tmp_path / "bin", FAKE, ("fakephase-py-serial", "fakephase-py-omp"), monkeypatch)
    experiment = tmp_path / "group.toml"
    experiment.write_text(experiment_text.format(timeline=tmp_path / "timeline"))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "g", "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "g"
    cases = load_cases(campaign)
    assert len({c["family"] for c in cases}) == 2 and len({c["trial_group"] for c in cases}) == 1
    return campaign, cases


def test_the_runner_runs_a_group_in_shared_trials_and_the_cross_ratio_pairs_to_the_truth(
    tmp_path, monkeypatch
):
    campaign, cases = run_group(tmp_path, monkeypatch, EXPERIMENT)
    records = pd.DataFrame(
        [r | {"case_id": c["case_id"]} for c in cases for r in case_records(campaign, c["case_id"])]
    )
    # Each trial: the four cases' processes (each baseline twice) in consecutive slots of the host.
    for _, trial in records.groupby("trial"):
        assert sorted(trial["trial_slot"]) == list(range(6))
        assert sorted(trial["work"]) == list(range(trial["work"].min(), trial["work"].min() + 6))
        assert (trial["work"] - trial["trial_slot"]).nunique() == 1
    # Slow phases planted across trials: SIMD is 4x faster, paired within trials, exactly.
    table = paired_cross_ratios(cases, records, np.random.default_rng(1))
    assert len(table) == 2 and set(table["dimension"]) == {"inner"}
    assert np.allclose(table["paired_together_ratio_b_over_a"], 0.25)
    # (but a trial whose processes lie on either side of a window's edge: left out, sbcore/slow_phase.py)
    assert (table["trials_together"] + table["left_out_across_phase"] == 8).all()


NOISY_GROUP = """
description = "a trial group of two noisy families under a comparison target"
interleave = "family"
target_ci = 0.5
min_reps = 6
max_reps = 12
warmup = 0
seed = 5
baseline_every = 0
comparison_target_ci = 0.001
comparison_budget_s = 120

[[sweep]]
binary = ["fakephase-py-serial", "fakephase-py-omp"]
params = {{ timeline = ["{timeline}"], jitter = [0.1], inner = ["scalar", "simd"] }}
"""


def test_the_comparison_target_runs_each_case_to_its_max_reps_whatever_numbers_its_group_used(
    tmp_path, monkeypatch
):
    """Two families and their cross pairs, none precise enough after their cases' own 6 trials: each
    trial the target runs takes a number new to the group, so the group uses more trial numbers than
    a case may run processes (12); every case still runs all 12, numbered 0-11, one in each of 12
    trials."""
    campaign, cases = run_group(tmp_path, monkeypatch, NOISY_GROUP)
    trials_used = set()
    for case in cases:
        records = case_records(campaign, case["case_id"])
        assert sorted(r["invocation"] for r in records) == list(range(12)), case["case_id"]
        assert len({r["trial"] for r in records}) == 12  # one process per trial
        trials_used |= {r["trial"] for r in records}
    assert max(trials_used) >= 12


class Times:
    """A stand-in for comparison_sampling.RecordCache: each case's trials -> runs, as given."""

    def __init__(self, trials: dict[str, dict[int, list]]):
        self.trials = trials

    def get(self, case: dict):
        from jobs.comparison_sampling import CaseTimes

        runs = self.trials.get(case["case_id"], {})
        per = case.get("trial_runs", 1)  # invocations numbered by the per-case rule's trials
        measured = {p for t in runs for p in range(t * per, (t + 1) * per)}
        return CaseTimes(usable=runs, trials=set(runs), measured=measured, records={})


def test_a_comparison_trial_of_one_family_takes_a_number_new_to_its_whole_group():
    """The comparison target runs one family alone: its trial must not share a number with a trial
    of another family of the group, or the analysis would pair processes run apart."""
    from jobs.comparison_sampling import family_needs
    from sbcore.trial_pairing import Run

    cases = [c for c in group_of_three_families() if c["model"] == "omp" and c["threads"] == 1]
    cases = [c | {"reps": 40, "comparison": {"target_ci": 0.01}} for c in cases]
    fortran = next(c for c in cases if c["lang"] == "f")
    # Six trials of jittering times (their ratios too wide for the target); the Fortran case ten.
    times = {
        c["case_id"]: {t: [Run(0, 1 + 0.2 * ((t + i) % 3))] for t in range(6)} for i, c in enumerate(cases)
    }
    times[fortran["case_id"]] = {t: [Run(0, 1.0)] for t in range(10)}
    need = family_needs(Times(times), cases, 0.01)[0]
    assert need.work and need.trial == 10
    assert {p for _, p in need.work} == {6}  # each case's own next process
    assert fortran["case_id"] not in {c["case_id"] for c, _ in need.work}


def test_the_comparison_target_runs_an_imprecise_cross_pair_in_a_trial_of_its_own():
    """C against Fortran with too few common trials for the target: the next trial runs those two
    cases together (one trial of their group, a number new to it), and nothing else."""
    from jobs.comparison_sampling import family_needs
    from sbcore.trial_pairing import Run

    cases = [planned(f"k-{lang}-omp", "omp", 2, {"n": 1}) for lang in "cf"]
    cases = [c | {"reps": 40, "comparison": {"target_ci": 0.01}} for c in cases]
    c_case, f_case = cases
    times = {c_case["case_id"]: {t: [Run(0, 1 + 0.2 * (t % 3))] for t in range(6)}}
    times[f_case["case_id"]] = {t: [Run(0, 1.0)] for t in range(10)}
    need = family_needs(Times(times), cases, 0.01)[0]
    assert need.trial == 10
    assert sorted((c["case_id"], p) for c, p in need.work) == [
        (c_case["case_id"], 6),
        (f_case["case_id"], 10),
    ]
    # Precise enough: no trial.
    times[c_case["case_id"]] = {t: [Run(0, 1.0)] for t in range(6)}
    assert family_needs(Times(times), cases, 0.01) == []


def test_a_cross_pair_of_baselines_runs_one_process_of_each():
    """Scalar against SIMD of the serial kernel: both are their family's baseline, which runs 5 times in
    a trial of its family (baseline_every); a trial of just the pair runs each once."""
    from jobs.comparison_sampling import family_needs
    from sbcore.trial_pairing import Run

    cases = [planned("k-c-serial", "serial", 1, {"n": 1} | inner) for inner in ({}, {"inner": "simd"})]
    cases = [c | {"reps": 200, "trial_runs": 5, "comparison": {"target_ci": 0.01}} for c in cases]
    scalar, simd = cases
    times = {scalar["case_id"]: {t: [Run(0, 1 + 0.2 * (t % 3))] for t in range(6)}}
    times[simd["case_id"]] = {t: [Run(0, 0.1)] for t in range(6)}
    need = family_needs(Times(times), cases, 0.01)[0]
    assert need.trial == 6
    assert sorted((c["case_id"], p) for c, p in need.work) == sorted(
        [(scalar["case_id"], 30), (simd["case_id"], 30)]
    )  # each one's first unused invocation: 6 trials x 5


def test_make_bench_pairs_both_languages_and_both_inner_loops(tmp_path):
    """config/experiments/workstation.toml: every kernel's C/Fortran and scalar/SIMD twins are in one
    trial group, serial loops included."""
    from sbcore.cross_pairs import cross_pairs

    root = FAKE.parents[3]
    run = run_cli(
        "plan",
        root / "config/experiments/workstation.toml",
        "--write",
        "--name",
        "w",
        "--results-dir",
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    pairs = {(p.dimension, p.a["binary"], p.a["threads"]) for p in cross_pairs(load_cases(tmp_path / "w"))}
    for kernel in ("mandelbrot", "mcpi"):
        for dimension in ("lang", "inner"):
            assert {(dimension, f"{kernel}-c-serial", 1), (dimension, f"{kernel}-c-omp", 2)} <= pairs
