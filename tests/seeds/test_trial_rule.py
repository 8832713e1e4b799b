"""Every seed experiment runs the trial count the one rule gives (analysis/stats/trial_rule.py), from its
case's planning spread and the smallest margin of its factors: decided before the run, never raised after
an inconclusive result."""

import tomllib

import pytest

from analysis.reference_data import REFERENCE_DIR
from analysis.stats.trial_rule import trials_needed
from analysis.stats.verdicts import DEFAULT_MARGIN
from sbcore.install import source_root

SEED = tomllib.loads((REFERENCE_DIR / "seed-000.toml").read_text())
EXPERIMENTS = source_root() / "config" / "experiments"
TIMED = sorted(name for name, case in SEED["cases"].items() if "planning_spread" in case)


def test_every_case_with_judged_factors_states_its_planning_spread():
    judged = {
        n for n, c in SEED["cases"].items() if any(f.get("kind", "factor") == "factor" for f in c["factors"])
    }
    assert judged == set(TIMED)


@pytest.mark.parametrize("name", TIMED)
def test_the_experiment_runs_the_trials_the_rule_gives(name):
    case = SEED["cases"][name]
    margin = min(
        f.get("margin", DEFAULT_MARGIN) for f in case["factors"] if f.get("kind", "factor") == "factor"
    )
    experiment = tomllib.loads((EXPERIMENTS / f"seed-000-{name}.toml").read_text())
    assert experiment["reference"] == f"seed-000:{name}"
    disturbed = SEED["seed"]["planning_disturbed"]
    assert experiment["repetitions"] == trials_needed(case["planning_spread"], margin, disturbed), name
    assert experiment.get("interleave") == "family"  # paired trials: the per-trial ratios the rule counts
