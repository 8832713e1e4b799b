"""Every paired comparison left wider than the target, and why (analysis/stats/wide_comparisons.py):
on a synthetic campaign run in trials whose cases were planted too few trials, cut short below their
own minimum, or noisy with every trial run, through analyze into wide_comparisons.csv, the report and
summary.json; and the rule for each reason on hand-made rows."""

import json
from functools import partial

import pandas as pd
import pytest

from analysis.stats.wide_comparisons import REASONS, budgets_named, reason

BASE = {
    "trials": 12,
    "trials_run": 12,
    "own_trials": 12,
    "max_trials": 24,
    "trials_needed": 20,
    "spread_rel": 0.03,
    "left_out_across_phase": 1,
    "left_out_slow_transfer": 0,
    "left_out_apart": 0,
    "disturbed_kept": 2,
}


@pytest.mark.parametrize(
    ("change", "target", "expected", "words"),
    [
        (
            {"trials": 2, "trials_run": 3},
            True,
            "too_few_trials",
            "2 trials counted (3 run): an interval needs 3",
        ),
        ({"trials_run": 7, "trials": 7}, True, "cut_short", "cut short: 7 of its 12 trials ran"),
        ({}, True, "budget_ended", "a budget ended it after 12 trials (no budget named; room for 24; ~20 "),
        ({"trials_needed": 90}, True, "host_noise", "~90 trials would reach ±2 %, room for 24"),
        ({"trials_run": 24}, True, "host_noise", "per-trial ratios spread ±3.0 % over 12 trials"),
        ({}, False, "host_noise", "left out 1 across a phase change, 0 in a slow cache-line transfer"),
    ],
)
def test_each_reason_has_its_rule_and_its_sentence(change, target, expected, words):
    got, why = reason(BASE | change, target)
    assert got == expected and words in why


def test_the_sentences_name_the_budgets_in_force_with_their_values():
    both = budgets_named({"comparison": {"budget_s": 40}}, 205.0)
    assert both == (
        "the comparison target's (comparison_budget_s = 40 s) or the run's (run_budget_s = 205 s); "
        "the runner's log says which"
    )
    assert budgets_named({}, 205.0) == "the run's (run_budget_s = 205 s)"
    assert budgets_named({"comparison": "x"}, None) == "no budget (the run was interrupted)"
    _, why = reason(BASE | {"trials_run": 7, "trials": 7}, True, "", 205.0)
    assert "the run budget, run_budget_s = 205 s, ended the run, or it was interrupted" in why
    _, why = reason(BASE | {"trials_run": 7, "trials": 7}, True, "", None)
    assert "the run was interrupted or its processes failed: resume it" in why
    _, why = reason(BASE, True, both, 205.0)
    assert why.startswith("a budget ended it after 12 trials (the comparison target's (comparison_budget_s")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[campaign]\nrun_budget_s = 205\n", 205.0),
        ("[campaign]\nrun_budget_s = 12.5\n", 12.5),
        ("[campaign]\nname = 'x'\n", None),
        ("[campaign]\nrun_budget_s = 'soon'\n", None),
        ("[campaign]\nrun_budget_s = true\n", None),
        ("[campaign]\nrun_budget_s = -1\n", None),
        ("[campaign]\nrun_budget_s = nan\n", None),
        ("campaign = 3\n", None),
    ],
)
def test_the_run_budget_is_read_from_campaign_toml_only_when_it_is_a_positive_number(
    tmp_path, text, expected
):
    from analysis.campaign import read_campaign, run_budget_of

    (tmp_path / "campaign.toml").write_text(text)
    assert run_budget_of(read_campaign(tmp_path)) == expected


def test_a_campaign_in_trials_lists_its_wide_comparisons_with_their_reasons(tmp_path):
    from analysis.fail_on import FAIL_ON_KINDS
    from analysis.outputs.json_documents import analyze_document
    from analysis.outputs.report.render import write_report
    from analysis.pipeline import Options, analyze, write_tables
    from jobs.families import family_of
    from sbcore import layout
    from tests.synthetic_campaigns import rewrite_case, standard_campaign

    truth = standard_campaign(tmp_path, reps=12, seed=4)
    cases_file = layout.cases_path(truth.campaign_dir)
    cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line.strip()]
    rule = {"target_ci": 0.25, "min_reps": 12, "max_reps": 12}
    comparison = {"target_ci": 0.02, "budget_s": 40, "oversubscribed": False}
    cases = [c | {"family": family_of(c), "sampling": rule, "comparison": comparison} for c in cases]
    cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases))

    def member(sync: str) -> str:
        (case,) = [
            c
            for c in cases
            if c["node_type"] == "synth16"
            and c["binary"] == "mcpi-c-pthreads"
            and c["params"]["sync"] == sync
            and c["threads"] == 16
        ]
        return case["case_id"]

    # One process per trial; planted: 2 trials only, 6 of 12 with a +-10 % swing, 12 with it.
    few, short, noisy = member("none"), member("atomic"), member("fine")

    def planted(case_id: str, records: list[dict]) -> list[dict]:
        keep = {few: 2, short: 6}.get(case_id, 12)
        out = []
        for r in records:
            if r["rep"] >= keep:
                continue
            swing = 1.0 + (0.1 if r["rep"] % 2 else -0.1) if case_id in (short, noisy) else 1.0
            out.append(r | {"invocation": r["rep"], "wall_s": r["wall_s"] * swing})
        return out

    for stored in truth.campaign_dir.glob("raw/*/reps.csv"):
        rewrite_case(stored.parent, partial(planted, stored.parent.name))
    result = analyze(truth.campaign_dir, Options(n_resamples=200, seed=1))
    wide = result.wide_comparisons
    speedups = wide[wide["kind"] == "speedup"].set_index("case_b")
    assert speedups.loc[few, "reason"] == "too_few_trials"
    assert speedups.loc[short, "reason"] == "cut_short" and "6 of its 12 trials" in speedups.loc[short, "why"]
    assert speedups.loc[noisy, "reason"] == "host_noise"
    assert speedups.loc[noisy, "spread_rel"] > 0.05 and speedups.loc[noisy, "trials_run"] == 12
    assert not (wide["halfwidth_rel"] <= 0.02).any()  # only wide ones, and only counted ones
    assert (wide["workers"] <= 16).all()  # (synth16: 16 cores)
    counts = result.comparison_precision["wide"]
    assert set(counts) == set(REASONS) and sum(counts.values()) == len(wide)
    assert counts == {r: int((wide["reason"] == r).sum()) for r in REASONS}
    write_tables(result)
    table = pd.read_csv(result.out_dir / "wide_comparisons.csv")
    assert len(table) == len(wide) and set(table["reason"]) <= set(REASONS)
    doc = analyze_document(
        result, pd.DataFrame(), dict.fromkeys([*FAIL_ON_KINDS, "noisy", "implausible"], 0), ()
    )
    assert doc["comparison_precision"]["wide"] == counts
    text = write_report(result, [], ("md",))["md"].read_text()
    assert "left wider than ±2 % (wide_comparisons.csv)" in text
    assert "cut short: 6 of its 12 trials ran" in text


def test_a_campaign_toml_whose_campaign_is_no_table_is_named_and_left_out(tmp_path):
    from analysis.campaign import read_campaign

    (tmp_path / "campaign.toml").write_text("campaign = 3\n")
    campaign = read_campaign(tmp_path)
    assert ("campaign.toml", "campaign = 3: not a table; left out") in campaign.problems
    assert campaign.name == tmp_path.name
