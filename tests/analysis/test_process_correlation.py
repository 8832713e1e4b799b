"""within_process_correlation: the intraclass correlation of repetitions within kernel processes, with
differences between cases never counted as correlation."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.process_correlation import within_process_correlation


def campaign(rng, icc: float, cases=60, processes=6, reps=3, sd=0.05) -> pd.DataFrame:
    """Log times = case level (large, different per case) + process effect + repetition noise, with
    var(process) / (var(process) + var(noise)) = icc."""
    rows = []
    for case in range(cases):
        level = np.log(0.1 * (case + 1))  # cases differ by up to 60x: must not look like correlation
        for process in range(processes):
            shift = rng.normal(0, sd * np.sqrt(icc))
            for rep in range(reps):
                noise = rng.normal(0, sd * np.sqrt(1 - icc))
                rows.append(
                    {
                        "case_id": f"c{case}",
                        "invocation": process,
                        "rep": process * reps + rep,
                        "wall_s": float(np.exp(level + shift + noise)),
                    }
                )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("icc", [0.0, 0.3, 0.7])
def test_the_estimate_finds_the_planted_correlation(icc):
    c = within_process_correlation(campaign(np.random.default_rng(7), icc))
    assert c is not None and (c.processes, c.cases, c.reps_per_process) == (360, 60, 3.0)
    assert c.icc == pytest.approx(icc, abs=0.08)
    assert c.design_effect == pytest.approx(1 + 2 * c.icc)
    assert c.ci_narrowing == pytest.approx(np.sqrt(1 + 2 * c.icc))


def test_processes_of_one_repetition_and_cases_of_one_process_are_left_out():
    frame = campaign(np.random.default_rng(8), 0.5, cases=10)
    single_process = frame[frame["case_id"] == "c0"].assign(case_id="lonely", invocation=0)
    one_rep = frame[frame["case_id"] == "c1"].drop_duplicates("invocation").assign(case_id="short")
    c = within_process_correlation(pd.concat([frame, single_process, one_rep]))
    assert (c.cases, c.processes) == (10, 60)


def test_nothing_to_estimate():
    assert within_process_correlation(pd.DataFrame()) is None
    frame = campaign(np.random.default_rng(9), 0.5, cases=3)
    assert within_process_correlation(frame.drop(columns=["invocation"])) is None
    assert within_process_correlation(frame.assign(invocation=None)) is None
