"""warmup_effect: per case, the repetition measured right after a process's warm-ups over the last of
them, over the case's processes; a case whose interval lies above 1.02 ran slower after its warm-up, and
the report says so."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.outputs.report.sections.findings import warning_lines
from analysis.outputs.report.sections.machine_state import warmup_blocks
from analysis.stats.warmup_effect import COLUMNS, SLOWER, warmup_effect


def processes(case_id: str, ratios, **extra) -> list[dict]:
    """One process per ratio: a warm-up of 1 s, then its first measured repetition (ratio x 1 s) and a
    second one that is never compared (the warm-up lies before the first only)."""
    rows = []
    for p, ratio in enumerate(ratios):
        common = {"case_id": case_id, "kernel": "mandelbrot", "lang": "c", "model": "omp", "threads": 2}
        rows.append(common | {"in_process_rep": 0, "warmup_last_s": 1.0, "wall_s": ratio, "invocation": p})
        rows.append(common | {"in_process_rep": 1, "warmup_last_s": None, "wall_s": 5.0, "invocation": p})
    return [r | extra for r in rows]


def frame(*groups) -> pd.DataFrame:
    table = pd.DataFrame([r for g in groups for r in g])
    table["disturbed"] = table.get("disturbed", pd.Series(False, index=table.index)).fillna(False)
    return table


def test_a_case_slower_after_its_warm_up_is_found_and_one_as_fast_is_not():
    rng = np.random.default_rng(1)
    slower = 1.09 + rng.normal(0, 0.01, 10)
    same = 1.0 + rng.normal(0, 0.01, 10)
    table = warmup_effect(frame(processes("slow", slower), processes("same", same)))
    assert list(table.columns) == COLUMNS
    rows = table.set_index("case_id")
    assert rows.loc["slow", "slower"] and not rows.loc["same", "slower"]
    assert rows.loc["slow", "ratio_median"] == pytest.approx(np.median(slower))
    assert rows.loc["slow", "ratio_ci_low"] > 1 + SLOWER and rows.loc["slow", "processes"] == 10
    assert rows.loc["same", "ratio_ci_low"] < 1 < rows.loc["same", "ratio_ci_high"]
    assert rows.loc["slow", "coverage"] >= 0.95


def test_too_few_processes_or_a_few_slow_ones_give_no_finding():
    # five processes 10 % slower: no distribution-free 95 % interval below six, so no finding
    few = processes("few", [1.1] * 5)
    # ten processes, two of them hit by something else (50 % slower): the median is not moved
    hit = processes("hit", [1.5, 1.5] + [1.0] * 8)
    table = warmup_effect(frame(few, hit)).set_index("case_id")
    assert np.isnan(table.loc["few", "ratio_ci_low"]) and not table.loc["few", "slower"]
    assert table.loc["hit", "processes"] == 10 and table.loc["hit", "ratio_median"] == 1.0
    assert not table.loc["hit", "slower"]


def test_records_without_warm_ups_give_an_empty_table():
    none = pd.DataFrame([{"case_id": "a", "wall_s": 1.0, "in_process_rep": 0, "warmup_last_s": None}])
    assert warmup_effect(none).empty and list(warmup_effect(none).columns) == COLUMNS
    assert warmup_effect(pd.DataFrame({"case_id": ["a"], "wall_s": [1.0]})).empty  # an older table


def test_the_report_names_the_slower_cases_and_only_those():
    table = warmup_effect(frame(processes("slow", [1.08] * 8), processes("same", [1.0] * 8)))
    blocks = warmup_blocks(table)
    assert [kind for kind, _ in blocks] == ["p", "table"]
    assert "Slower after the warm-up" in blocks[0][1] and list(blocks[1][1]["case_id"]) == ["slow"]
    assert blocks[1][1]["ratio"].iloc[0].startswith("1.080 [")
    assert warmup_blocks(table[table["case_id"] == "same"]) == []
    result = SimpleNamespace(  # a campaign with nothing else to warn of
        summary=pd.DataFrame({"case_id": [], "valid": [], "bimodal": [], "noisy": []}, dtype=bool),
        completeness=pd.DataFrame({"case_id": [], "state": []}),
        speedup=pd.DataFrame({"plausibility": []}),
        violations=pd.DataFrame({"case_id": []}),
        loaded=SimpleNamespace(problems=pd.DataFrame()),
        options=SimpleNamespace(noise_threshold=0.05),
        counters=pd.DataFrame(),
        warmup_effect=table,
    )
    lines = [line for line in warning_lines(result) if "warm-up" in line]
    assert len(lines) == 1 and lines[0].startswith("1 case(s) ran slower") and "1.080-1.080" in lines[0]
