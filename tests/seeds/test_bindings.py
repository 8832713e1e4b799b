"""Every published figure is bound to the cases of its shipped experiment that measure the same thing:
each binding is read, the experiment planned (nothing run), and the cases it selects are checked to be
there, unique, and of the right kind; figures that cannot be measured here say why."""

import tomllib

import pandas as pd
import pytest

from analysis.reference_data import MICRO_REFERENCE_FILES, REFERENCE_DIR
from analysis.stats.micro import _matching
from analysis.stats.reference import case_dims, metric_values, same_dims, scenario_text, selects
from jobs.campaign import plan_experiment
from tests.jobs.conftest import ROOT

EXPERIMENTS = ROOT / "config" / "experiments"
SEED_000 = tomllib.loads((REFERENCE_DIR / "seed-000.toml").read_text())
METRICS = set(metric_values(pd.DataFrame(
    {"case_id": ["a"], "wall_s": [1.0], "cpu_user_s": [1.0], "cpu_sys_s": [0.0], "ctx_voluntary": [1],
     "ctx_involuntary": [1], "os_threads": [2], "threads": [1], "warmup": [False]}
)).columns) - {"case_id", "load_cpu_share", "sched_asked", "sched_applied", "invocation"}  # fmt: skip


def _planned(name: str) -> list[dict]:
    return plan_experiment(EXPERIMENTS / f"{name}.toml")[1]


def _seed_000_factors():
    for path in sorted(EXPERIMENTS.glob("seed-000-tc*.toml")):
        tc = tomllib.loads(path.read_text())["reference"].partition(":")[2]
        for factor in SEED_000["cases"][tc]["factors"]:
            yield pytest.param(path.stem, factor, id=f"{tc}-{factor['label']}")


@pytest.mark.parametrize(("experiment", "factor"), list(_seed_000_factors()))
def test_each_seed_000_factor_selects_its_cases_and_one_base_each(experiment, factor):
    cases = _planned(experiment)
    dims = {c["case_id"]: case_dims(c) for c in cases}
    points = [cid for cid, d in dims.items() if selects(d, factor["point"])]
    assert points, f"{factor['label']}: no planned case of {experiment} is its point"
    kind = factor.get("kind", "factor")
    if kind != "mapping":
        assert factor["metric"] in METRICS, factor["metric"]
        assert 0 < factor.get("margin", 0.1) < 1
    env = {c["case_id"]: c["env"] for c in cases}
    texts = [scenario_text(dims[p], [*factor["point"], *factor.get("base", {})], env[p]) for p in points]
    if kind != "mapping":  # (a mapping row adds what was asked to its scenario)
        assert len(set(texts)) == len(texts), f"{factor['label']}: two rows would read alike: {texts}"
    for point in points:
        loaded = dims[point]["load"] != "none"
        assert loaded == ("load_share" in factor), f"{factor['label']}: load {dims[point]['load']}"
        if kind != "factor":
            continue
        wanted = dims[point] | {k: str(v) for k, v in factor["base"].items()}
        bases = [b for b, d in dims.items() if same_dims(d, wanted)]
        assert len(bases) == 1, f"{factor['label']}: {len(bases)} base cases for {texts}"
        assert bases[0] != point


def test_derived_seed_000_factors_are_marked():
    """TC5-TC7 print times only (apart from 'factor small/large'): what we compare is derived from them."""
    for tc in ("tc05", "tc06", "tc07"):
        for factor in SEED_000["cases"][tc]["factors"]:
            own = "(the study's factor)" in factor["label"]
            assert own != ("derived_from" in factor), factor["label"]


MICRO_EXPERIMENTS = {"001": "seed-001-osbench", "003": "seed-003-timing", "004": "seed-004-smt"}
KINDS = {"osbench": {"mean", "smallest_step"}, "timing": {"mean", "ratio"}, "smt": {"ht_speedup", "slowdown"}}


def _micro_figures():
    for name in MICRO_REFERENCE_FILES:
        data = tomllib.loads((REFERENCE_DIR / name).read_text())
        for figure in data["figure"]:
            yield pytest.param(data["seed"], figure, id=f"{data['seed']}-{figure['what']}")


def _case_table(cases: list[dict]) -> pd.DataFrame:
    rows = [
        {
            "node_type": c["node_type"],
            "kernel": c["kernel"],
            "threads": c["threads"],
            **{f"param_{k}": str(v) for k, v in c["params"].items()},
        }
        for c in cases
        if c["lang"] != "tool"
    ]
    return pd.DataFrame(rows)  # fmt: skip


@pytest.mark.parametrize(("seed", "figure"), list(_micro_figures()))
def test_each_micro_figure_selects_one_case_of_its_kind_or_says_why_not(seed, figure):
    if figure.get("not_reproducible"):
        assert len(figure["not_reproducible"]) > 20  # a reason, not a flag
        return
    for node_type, table in _case_table(_planned(MICRO_EXPERIMENTS[seed])).groupby("node_type"):
        kernel = table["kernel"].iloc[0]
        assert figure["stat"] in KINDS[kernel], f"{figure['what']}: stat {figure['stat']} on {kernel}"
        where = f"{figure['what']} on {node_type}"
        if figure["stat"] in ("ht_speedup", "slowdown"):
            assert figure.get("requires") == "smt"
            alone = _matching(table, {k: v.split(",")[0] for k, v in figure["match"].items()}, threads=1)
            assert len(alone) == 1 and len(_matching(table, figure["match"], threads=2)) == 1, where
        else:
            assert len(_matching(table, figure["match"])) == 1, f"{where}: not one case for {figure['match']}"
