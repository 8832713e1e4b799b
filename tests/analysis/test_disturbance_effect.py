"""disturbance_effect: per kernel, inner loop and flag, how much slower the flagged repetitions of a
case were than its clean ones, from cases that have both."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.disturbance_effect import COLUMNS, disturbance_effect


def records(cases: dict[str, tuple[str, str, list[tuple[float, str]]]]) -> pd.DataFrame:
    """case_id -> (kernel, inner_path, [(wall_s, disturbed_reason), ...])."""
    rows = [
        {"case_id": cid, "kernel": k, "inner_path": inner, "wall_s": wall, "disturbed_reason": reason}
        for cid, (k, inner, reps) in cases.items()
        for wall, reason in reps
    ]
    return pd.DataFrame(rows)


def test_changes_are_per_case_medians_then_summarised_per_kernel_inner_and_flag():
    pipes = "shared FP pipes"
    frame = records(
        {
            # vector loop: 20 % and 40 % slower when the pipes are shared
            "a": ("mandelbrot", "avx2", [(1.0, ""), (1.0, ""), (1.2, pipes), (1.2, pipes), (1.2, pipes)]),
            "b": ("mandelbrot", "avx2", [(2.0, ""), (2.8, pipes)]),
            # scalar loop: the same flag costs nothing
            "c": ("mandelbrot", "scalar", [(3.0, ""), (3.0, pipes), (3.0, "slow probe")]),
            # every repetition flagged: no clean time to compare with, left out
            "d": ("mandelbrot", "scalar", [(9.0, pipes), (9.0, pipes)]),
            # never flagged: nothing to say
            "e": ("mcpi", "scalar", [(1.0, ""), (1.1, "")]),
        }
    )
    table = disturbance_effect(frame)
    assert list(table.columns) == COLUMNS
    rows = {(r.kernel, r.inner_path, r.reason): r for r in table.itertuples()}
    assert set(rows) == {
        ("mandelbrot", "avx2", pipes),
        ("mandelbrot", "scalar", pipes),
        ("mandelbrot", "scalar", "slow probe"),
    }
    vector = rows[("mandelbrot", "avx2", pipes)]
    assert (vector.cases, vector.reps_flagged, vector.reps_clean) == (2, 4, 3)
    assert vector.change_median == pytest.approx(0.3)
    assert (vector.change_min, vector.change_max) == (pytest.approx(0.2), pytest.approx(0.4))
    scalar = rows[("mandelbrot", "scalar", pipes)]
    assert (scalar.cases, scalar.reps_flagged, scalar.change_median) == (1, 1, 0.0)


def test_older_records_use_the_inner_loop_asked_for():
    frame = records({"a": ("mcpi", None, [(1.0, ""), (1.5, "slow probe")])})
    frame["inner"] = "scalar"
    table = disturbance_effect(frame)
    assert table["inner_path"].tolist() == ["scalar"] and table["change_median"].tolist() == [0.5]


@pytest.mark.parametrize(
    "frame",
    [pd.DataFrame(), records({"a": ("mcpi", "scalar", [(1.0, ""), (np.nan, "slow probe")])})],
    ids=["no records", "no flagged time"],
)
def test_nothing_to_compare_gives_an_empty_table(frame):
    table = disturbance_effect(frame)
    assert table.empty and list(table.columns) == COLUMNS


def test_flags_from_the_probe_and_their_cost_reach_the_report():
    from types import SimpleNamespace

    from analysis.outputs.report.sections.machine_state import disturbance_section
    from analysis.stats.disturbance import flag_disturbed

    from .test_disturbance import rows

    frame = pd.DataFrame(rows(pipes={3, 4, 5}))
    frame["kernel"], frame["inner_path"] = "mandelbrot", "avx2"
    frame.loc[frame["rep"].isin([3, 4, 5]), "wall_s"] = 0.125  # the vector loop lost a fifth
    flagged = flag_disturbed(frame)
    effect = disturbance_effect(flagged)
    assert effect[["reason", "cases", "reps_flagged", "reps_clean"]].values.tolist() == [
        ["shared FP pipes", 1, 3, 17]
    ]
    assert effect["change_median"].iloc[0] == pytest.approx(0.25)
    summary = pd.DataFrame({"n_disturbed": [3]}).iloc[:0]
    result = SimpleNamespace(
        stats=SimpleNamespace(records=flagged), summary=summary, disturbance_effect=effect
    )
    tables = [value for kind, value in disturbance_section(result) if kind == "table"]
    assert tables and tables[0]["change (median)"].tolist() == ["+25.0 %"]
