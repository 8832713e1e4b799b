"""P x R sampling and the precision target (sbcore.sampling), through the real runner and run-case with a
stand-in kernel whose wall times follow a known distribution."""

import math
from pathlib import Path

import pytest

from jobs.campaign import load_cases
from jobs.status import case_states
from sbcore import sampling
from tests.jobs.conftest import run_cli
from tests.records import case_records

FAKE = Path(__file__).resolve().parent / "sampling_fake" / "fake_kernel_distribution.py"


def test_median_ci_is_the_binomial_order_statistic_interval():
    xs = list(range(1, 11))  # n = 10: [x(2), x(9)], coverage 1 - 2 * 11/1024 = 0.9785
    assert sampling.median_ci(xs) == (2, 9)
    assert sampling.median_ci([5, 1, 4, 2, 6, 3]) == (1, 6)  # n = 6: the smallest n with a 95 % interval
    assert sampling.median_ci([1, 2, 3, 4, 5]) is None
    # n = 100: k = 40 (P(40 <= B <= 60) = 0.9648; k = 41 gives 0.9431)
    assert sampling.median_ci(range(100)) == (39, 60)
    assert math.isclose(sampling.relative_halfwidth([1.0] * 5 + [1.02]), 0.01)


def _records(walls, runner=1.0, per_process=1):
    return {
        k: {"wall_s": w, "invocation": k // per_process, "runner_wall_s": runner} for k, w in enumerate(walls)
    }


def test_progress_rules():
    fixed = sampling.Rule(reps=3, reps_per_process=2)
    assert sampling.progress(fixed, _records([1, 1])).done is False
    assert sampling.next_invocations(fixed, _records([1, 1])) == [1]
    assert sampling.progress(fixed, _records([1, 1, 1])).stop == "fixed"
    target = sampling.Rule(reps=20, reps_per_process=2, target_ci=0.02, min_reps=6, budget_s=100)
    assert sampling.next_invocations(target, {}) == [0, 1, 2]  # min_reps first, in one pass
    assert sampling.progress(target, _records([1.0] * 6)).stop == "target_met"
    wide = [1.0, 2.0] * 3
    assert sampling.progress(target, _records(wide)).done is False
    assert sampling.next_invocations(target, _records(wide)) == [3]  # then one invocation at a time
    assert sampling.progress(target, _records([1.0, 2.0] * 10)).stop == "max_reps"
    # Budget: runner time per invocation counts once, however many repetitions it measured.
    spent = sampling.progress(target._replace(budget_s=3.0), _records(wide, runner=1.0, per_process=2))
    assert spent.spent_s == 3.0 and spent.stop == "budget"


def test_comparison_trials_do_not_reopen_a_case_that_met_its_own_target():
    """A case met its target on 6 repetitions; 6 more from a comparison target's trials, far slower
    (a slow phase), widen the CI of all 12 but not the case's own verdict; without the mark they would."""
    target = sampling.Rule(reps=20, reps_per_process=1, target_ci=0.02, min_reps=6)
    records = _records([1.0] * 6 + [2.0] * 6)
    assert sampling.progress(target, records).done is False  # as own repetitions: sampled again
    for k in range(6, 12):
        records[k]["comparison_trial"] = True
    progress = sampling.progress(target, records)
    assert progress.stop == "target_met" and progress.n == 12 and progress.ci_rel > 0.02


EXPERIMENT = """
description = "adaptive sampling on a known distribution"
warmup = 1
target_ci = 0.02
min_reps = 6
max_reps = 12
reps_per_process = 3

[[sweep]]   # +-0.1 %: the target is met as soon as min_reps exist
binary = ["fakedist-py-serial"]
params = { spread = [0.001] }

[[sweep]]   # +-50 %: never within 2 % at 12 repetitions
binary = ["fakedist-py-serial"]
params = { spread = [0.5] }

[[sweep]]   # the same, but each invocation spends 0.3 s: out of budget long before max_reps
binary = ["fakedist-py-serial"]
params = { spread = [0.5], sleep = [0.3] }
reps_per_process = 1
min_reps = 3
budget_s = 0.75

[[sweep]]   # a fixed count still means exactly that many, in P x R = 2 x 2
binary = ["fakedist-py-serial"]
params = { spread = [0.5] }
target_ci = 0
repetitions = 4
reps_per_process = 2
"""


@pytest.fixture
def fake_bin_dir(tmp_path, monkeypatch) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    (directory / "fakedist-py-serial").symlink_to(FAKE)
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(directory))
    return directory


def _case_records(campaign: Path, case: dict) -> list[dict]:
    return sorted(case_records(campaign, case["case_id"]), key=lambda r: r["rep"])


def _check(campaign: Path):
    cases = load_cases(campaign)
    by_spread = {(c["params"]["spread"], c["params"].get("sleep")): c for c in cases if "sampling" in c}
    states = {s["case_id"]: s for s in case_states(campaign)}

    tight = _case_records(campaign, by_spread[0.001, None])
    assert [r["rep"] for r in tight] == list(range(6))
    assert [(r["invocation"], r["in_process_rep"]) for r in tight] == [
        (p, r) for p in (0, 1) for r in range(3)
    ]
    assert {r["reps_per_process"] for r in tight} == {3}
    # The invocation that completed the case (either one: a pass runs them in shuffled order) says so.
    last = [r["sampling"] for r in tight if r["sampling"]["n"] == 6]
    assert len(last) == 3 and all(v["stop"] == "target_met" and v["ci_rel"] <= 0.02 for v in last)
    assert states[by_spread[0.001, None]["case_id"]]["stop"] == "target_met"

    wide = _case_records(campaign, by_spread[0.5, None])
    assert len(wide) == 12 and wide[-1]["sampling"]["stop"] == "max_reps"
    assert all(r["sampling"]["stop"] is None for r in wide[:9])  # sampling went on after each of those
    assert states[by_spread[0.5, None]["case_id"]]["state"] == "done"

    budget = _case_records(campaign, by_spread[0.5, 0.3])
    spent = sum(r["runner_wall_s"] for r in budget)
    # The invocation that ran last (a pass runs in shuffled order: not necessarily the highest rep) says so.
    final = max(budget, key=lambda r: r["sampling"]["n"])
    assert final["sampling"]["stop"] == "budget" and len(budget) < 12
    assert spent >= 0.75 > spent - final["runner_wall_s"]  # stopped at the first invocation past the budget

    fixed = [c for c in cases if "sampling" not in c][0]
    counted = _case_records(campaign, fixed)
    assert [(r["invocation"], r["in_process_rep"]) for r in counted] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert sorted(r["sampling"]["stop"] or "" for r in counted) == ["", "", "fixed", "fixed"]
    assert all(s["state"] == "done" for s in states.values())


def test_runner_samples_each_case_to_its_rule(tmp_path, fake_bin_dir):
    experiment = tmp_path / "adaptive.toml"
    experiment.write_text(EXPERIMENT)
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "a", "--no-progress")
    assert run.returncode == 0, run.stderr
    _check(tmp_path / "res" / "a")


def test_array_task_samples_its_own_case_to_its_target(tmp_path, fake_bin_dir):
    experiment = tmp_path / "adaptive.toml"
    experiment.write_text(EXPERIMENT)
    plan = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "res", "--name", "t")
    assert plan.returncode == 0, plan.stderr
    campaign = tmp_path / "res" / "t"
    for index in range(4):
        task = run_cli("run-case", campaign, index)
        assert task.returncode == 0, task.stderr
    _check(campaign)
    status = run_cli("status", campaign)
    assert status.returncode == 0 and "target_met" in status.stdout, status.stdout


def test_analysis_completeness_uses_the_same_rule(tmp_path, bin_dir):
    from analysis.campaign import read_campaign
    from analysis.checks import case_table, completeness
    from analysis.records.load import load_records

    experiment = tmp_path / "target.toml"
    experiment.write_text(
        'description = "generous target"\nwarmup = 0\ntarget_ci = 0.9\nmin_reps = 6\nmax_reps = 12\n'
        'reps_per_process = 3\n[[sweep]]\nbinary = ["mcpi-c-serial"]\nparams = { samples = [20000] }\n'
    )
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "c", "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "c"
    loaded = load_records(campaign, processes=1, use_cache=False)
    assert len(loaded.records) == 6
    cases = case_table(read_campaign(campaign).cases, loaded.records)
    done = completeness(cases, loaded.records, loaded.failed)
    # The case met its target at 6 of at most 12 repetitions: complete, not "partial".
    assert (done["state"] == "done").all() and (done["missing"] == 0).all(), done.to_string()
