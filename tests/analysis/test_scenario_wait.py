"""The report's scheduling-scenario table shows how waiting workers waited beside what was asked, and
- where nothing was read back (never nan)."""

import pandas as pd

from analysis.outputs.report.sections.scenario import scenario_table


def test_scenario_table_shows_the_wait_of_pthreads_and_openmp_cases():
    records = pd.DataFrame(
        {
            "case_id": ["pt-sleep", "pt-sleep", "omp-passive", "pt-default", "program"],
            "warmup": [False] * 5,
            "threads": [2] * 5,
            "sched_asked": ["wait_policy=sleep", "wait_policy=sleep", "omp_wait_policy=passive", "-", "-"],
            "sched_applied": ["other nice 0 x2"] * 4 + [None],  # a program: nothing read back
            "wait": ["sleep", "sleep", "sleep", "spin (auto)", None],
            "load_name": [None] * 4 + ["hog"],
            "load_cpu_share": [None] * 4 + [0.5],
            "wall_s": [0.1, 0.3, 0.2, 0.05, 0.4],
        }
    )
    table = scenario_table(records).set_index("case_id")
    assert list(table.index) == ["omp-passive", "program", "pt-default", "pt-sleep"]
    assert table.loc["program", "applied"] == "-" and table.loc["program", "wait"] == "-"
    assert table.loc["pt-sleep", "applied"] == "other nice 0 x2"
    assert table.loc["pt-default", "asked"] == "-" and table.loc["pt-default", "wait"] == "spin (auto)"
    assert table.loc["pt-sleep", "wait"] == "sleep" and table.loc["pt-sleep", "median_s"] == 0.2
    assert table.loc["omp-passive", "wait"] == "sleep"
    assert table.loc["omp-passive", "asked"] == "omp_wait_policy=passive"
