"""Every seed-000 case whose POP decomposition the reproduction section states (the reference's
`decompose` selector, beside the study's `explains`) has the 1-worker case of its own variant in the
same experiment: the decomposition is against it (analysis/stats/pop_metrics.py), and without it the
section would say nothing for that case."""

import json
import tomllib

import pytest

from analysis.reference_data import REFERENCE_DIR
from analysis.stats.reference import case_dims, selects
from jobs.campaign import plan_experiment
from tests.jobs.conftest import ROOT

EXPERIMENTS = ROOT / "config" / "experiments"
SEED_000 = tomllib.loads((REFERENCE_DIR / "seed-000.toml").read_text())["cases"]


def _variant(case: dict) -> str:
    """What the 1-worker case must share (the scaling series: analysis/variants.py)."""
    keys = ("node_type", "binary", "pin", "counter_group", "params")
    return json.dumps({k: case[k] for k in keys}, sort_keys=True)


def _explained():
    for path in sorted(EXPERIMENTS.glob("seed-000-tc*.toml")):
        tc = tomllib.loads(path.read_text())["reference"].partition(":")[2]
        if SEED_000[tc].get("explains") and SEED_000[tc].get("decompose"):
            yield pytest.param(path, SEED_000[tc]["decompose"], id=tc)


@pytest.mark.parametrize(("experiment", "selector"), list(_explained()))
def test_each_decomposed_case_has_its_one_worker_case(experiment, selector):
    cases = plan_experiment(experiment)[1]
    ones = {_variant(c) for c in cases if c["threads"] * c["ranks"] == 1}
    chosen = [c for c in cases if c["threads"] * c["ranks"] > 1 and selects(case_dims(c), selector)]
    assert chosen, f"{experiment.name}: decompose {selector} selects no case with more than one worker"
    missing = [c["argv"] for c in chosen if _variant(c) not in ones]
    assert not missing, f"{experiment.name}: no 1-worker case of the same variant for {missing}"


def test_priority_cases_are_explained_and_decomposed():
    for tc in ("tc05", "tc06"):
        assert SEED_000[tc]["decompose"]["threads"] == 2, tc
