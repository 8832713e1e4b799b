"""The best estimate leads (analysis/stats/best_speedup.py): where a speedup was paired within trials
and has an interval, the speedup table, the headline, the findings table, the plots and the console
carry the paired figure, name it, and keep the ratio of medians beside it."""

import json

import numpy as np
import pandas as pd
import pytest

from analysis.stats.best_speedup import PAIRED, UNPAIRED, best_speedups, estimate_counts, estimate_text


def speedup_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": ["a", "b", "c"],
            "baseline_case_id": ["s", "s", "s"],
            "workers": [2, 2, 1],
            "speedup": [1.77, 1.90, 1.0],
            "speedup_ci_low": [1.47, 1.80, 0.98],
            "speedup_ci_high": [2.53, 2.00, 1.02],
            "efficiency": [0.885, 0.95, 1.0],
            "efficiency_ci_low": [0.735, 0.90, 0.98],
            "efficiency_ci_high": [1.265, 1.0, 1.02],
            "karp_flatt": [0.13, 0.05, np.nan],
        }
    )


def paired_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case_id": ["a", "b"],
            "baseline_case_id": ["s", "s"],
            "trials_together": [12, 2],
            "paired_together_speedup": [1.96, 1.95],
            "paired_together_ci_low": [1.94, np.nan],  # b: 2 trials, no interval
            "paired_together_ci_high": [1.98, np.nan],
        }
    )


def test_the_paired_estimate_replaces_the_unpaired_one_where_it_has_an_interval():
    sp = best_speedups(speedup_table(), paired_table()).set_index("case_id")
    a, b, c = sp.loc["a"], sp.loc["b"], sp.loc["c"]
    assert (a["estimate"], b["estimate"], c["estimate"]) == (PAIRED, UNPAIRED, UNPAIRED)
    assert (a["speedup"], a["speedup_ci_low"], a["speedup_ci_high"]) == (1.96, 1.94, 1.98)
    assert (a["unpaired_speedup"], a["unpaired_speedup_ci_low"], a["unpaired_speedup_ci_high"]) == (
        1.77,
        1.47,
        2.53,
    )
    assert a["efficiency"] == pytest.approx(0.98) and a["efficiency_ci_high"] == pytest.approx(0.99)
    assert a["karp_flatt"] == pytest.approx((1 / 1.96 - 1 / 2) / (1 - 1 / 2))
    assert b["speedup"] == 1.90 and b["unpaired_speedup"] == 1.90  # no interval: the unpaired one stays
    assert estimate_text(a) == "paired, 12 trials" and estimate_text(b) == "unpaired"
    assert estimate_counts(sp) == "1 paired within trials, 2 unpaired"


def test_without_trials_nothing_changes_but_the_labels():
    before = speedup_table()
    sp = best_speedups(before, pd.DataFrame())
    pd.testing.assert_frame_equal(sp[before.columns], before)
    assert set(sp["estimate"]) == {UNPAIRED}


def test_a_campaign_in_trials_leads_with_the_paired_estimate(tmp_path):
    from analysis.outputs.report.render import write_report
    from analysis.pipeline import Options, analyze, write_tables
    from jobs.families import family_of
    from sbcore import layout
    from tests.synthetic_campaigns import rewrite_case, standard_campaign, trials_of

    truth = standard_campaign(tmp_path, reps=6, seed=4)
    cases_file = layout.cases_path(truth.campaign_dir)
    cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line.strip()]
    cases_file.write_text("".join(json.dumps(c | {"family": family_of(c)}) + "\n" for c in cases))
    for stored in truth.campaign_dir.glob("raw/*/reps.csv"):  # 3 trials of 2 repetitions each
        rewrite_case(stored.parent, trials_of(2))
    result = analyze(truth.campaign_dir, Options(n_resamples=100, seed=1))
    sp = result.speedup.set_index("case_id")
    paired = result.paired_speedup.set_index("case_id")
    with_interval = paired[paired["paired_together_ci_low"].notna()]
    assert len(with_interval) > 0
    led = sp.loc[with_interval.index]
    assert (led["estimate"] == PAIRED).all()
    assert np.allclose(led["speedup"], with_interval["paired_together_speedup"])
    assert np.allclose(led["efficiency"], led["speedup"] / led["workers"])
    write_tables(result)
    table = pd.read_csv(result.out_dir / "speedup.csv")
    assert {"estimate", "estimate_trials", "unpaired_speedup"} <= set(table.columns)
    text = write_report(result, [], ("md",))["md"].read_text()
    assert "paired, 3 trials" in text  # the findings table and the headline name the estimate
    assert f"{estimate_counts(result.speedup)}" in text


def test_the_headline_names_the_estimate_it_took():
    from analysis.checks import HEADLINE_COLUMNS, headline

    sp = best_speedups(speedup_table(), paired_table()).assign(
        node_type="n", kernel="k", binary="k-c-omp", model="omp", plausibility="ok", usable_cores=2.0
    )
    sp = sp.assign(noisy=False, bimodal=False, baseline_noisy=False, baseline_bimodal=False)
    best = headline(sp)
    assert {"estimate", "estimate_trials"} <= set(HEADLINE_COLUMNS)
    row = best.iloc[0]
    assert row["case_id"] == "a" and estimate_text(row) == "paired, 12 trials"
