"""Every sentence of explanation beside a seed table is either the study's, in its words, or marked as
ours; every trend sentence names the rows it rests on, and its figures are those rows' study values in
the table (config/reference/seed-000.toml: `explains`, `on_linux`, `trends`)."""

import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from analysis.outputs.report.sections.reference import display_table, trend_lines
from analysis.reference_data import REFERENCE_DIR
from analysis.stats.reference import Reference

SEED = tomllib.loads((REFERENCE_DIR / "seed-000.toml").read_text())
ROOT = Path(__file__).resolve().parents[2]
# The seed guide lives beside the repository (read only, never copied in); skip where it is absent.
GUIDES = [base / "shared" / "seed-experiments.md" for base in (ROOT.parent, ROOT.parent.parent)]
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", sorted(n for n, c in SEED["cases"].items() if c.get("explains")))
def test_the_studys_explanation_is_quoted_from_its_reading(name):
    guide = next((g for g in GUIDES if g.is_file()), None)
    if guide is None:
        pytest.skip("the seed guide is not beside this checkout")
    assert _words(SEED["cases"][name]["explains"]) in _words(guide.read_text()), name


def test_no_explanation_states_a_mechanism_the_study_does_not_name():
    """The review's example: the study names lock contention, not lock hand-off among preempted threads."""
    for name, case in SEED["cases"].items():
        assert "hand-off" not in case.get("explains", ""), name
        assert "grows with the thread count" not in case.get("on_linux", ""), name
        assert "nearly flat" not in case.get("on_linux", ""), name


def _table(case: dict) -> pd.DataFrame:
    rows = [{"label": f["label"], "kind": "factor", "study": float(f["study"]), "measured": 1.0,
             "ci_low": 0.9, "ci_high": 1.1, "coverage": 0.94, "n": 6, "pairing": "paired", "margin": 0.1,
             "verdict": "agrees", "needed_n": 0, "scenario": "", "metric": f.get("metric", "wall_s"),
             "load_cpu_share": float("nan"), "load_share_expected": float("nan"), "reason": None}
            for f in case["factors"] if f.get("kind", "factor") == "factor"]  # fmt: skip
    return pd.DataFrame(rows)


TRENDS = [(n, t) for n, c in SEED["cases"].items() for t in c.get("trends", [])]


@pytest.mark.parametrize(("name", "trend"), TRENDS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(TRENDS)])
def test_a_trend_sentences_figures_are_its_rows_study_values_in_the_table(name, trend):
    case = SEED["cases"][name]
    table = _table(case)
    shown = display_table(table.assign(kind="factor"))
    named = shown[shown["comparison"].isin(trend["rows"])]
    assert len(named) == len(trend["rows"]), f"{name}: a row the trend names is not in the table"
    studies = set(named["study"])
    threads = {m for label in trend["rows"] for m in re.findall(r"(\d+) threads?", label)}
    for figure in NUMBER.findall(trend["text"]):
        if "." in figure:
            assert any(float(figure) == float(s) for s in studies), f"{name}: {figure} not in rows {studies}"
        else:
            assert figure in threads, f"{name}: {figure} is no thread count of the rows named"
    assert trend_lines(Reference("seed-000:" + name, {}, case), table) != []


def test_a_trend_with_figures_not_in_its_rows_is_caught():
    case = {"factors": [{"label": "a", "study": 1.97}], "trends": [{"text": "falls to 1.5", "rows": ["a"]}]}
    shown = display_table(_table(case))
    assert "1.5" not in set(shown["study"])


def test_a_trend_whose_rows_are_missing_is_not_printed():
    case = {"factors": [{"label": "a", "study": 1.97}], "trends": [{"text": "x", "rows": ["a", "b"]}]}
    assert trend_lines(Reference("s:t", {}, case), _table(case)) == []
