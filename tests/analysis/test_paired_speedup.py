"""Paired speedups from trials (analysis/stats/paired.py) on a synthetic host with planted slow phases:
a deterministic stand-in for the kernels whose every process takes twice as long inside planted
windows of the host's timeline (one process per second)."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.paired import paired_speedups
from tests.report_html import rendered_sections

EPOCH = pd.Timestamp("2026-01-01", tz="UTC")


def slow_phase(slot: int, windows) -> float:
    """The host's factor at one process slot: 2 inside a planted window, 1 outside."""
    return 2.0 if any(a <= slot < b for a, b in windows) else 1.0


def records_for(schedule, true_s, windows, noise=None) -> pd.DataFrame:
    """schedule: (case_id, invocation, slot) of each kernel process; one repetition per process."""
    rows = []
    for i, (case_id, invocation, slot) in enumerate(schedule):
        wall = true_s[case_id] * slow_phase(slot, windows) * (1.0 if noise is None else noise[i])
        started = (EPOCH + pd.Timedelta(seconds=slot)).isoformat()
        rows.append({"case_id": case_id, "invocation": invocation, "wall_s": wall, "started": started})
    return pd.DataFrame(rows).assign(disturbed=False)


def trial_schedule(cases, trials, rng) -> list:
    """Trials: one process of each case back to back in a fresh random order."""
    schedule, slot = [], 0
    for t in range(trials):
        for case_id in rng.permutation(cases):
            schedule.append((str(case_id), t, slot))
            slot += 1
    return schedule


def speedup_rows(pairs) -> pd.DataFrame:
    return pd.DataFrame(pairs, columns=["case_id", "baseline_case_id"])


WINDOWS = [(6, 22), (31, 33), (40, 47)]  # slow phases from 2 s to 16 s long


def test_paired_speedup_stays_on_the_truth_where_unpaired_does_not():
    true_s = {"serial": 1.0, "omp2": 0.5}  # the truth: 2.00x
    families = {"serial": "f", "omp2": "f"}
    schedule = trial_schedule(list(true_s), 24, np.random.default_rng(1))
    paired = records_for(schedule, true_s, WINDOWS)
    table = paired_speedups(speedup_rows([("omp2", "serial")]), paired, families, np.random.default_rng(2))
    row = table.iloc[0]
    # The trials whose two processes lie on either side of a window's edge give 1x or 4x: taken across
    # a change of phase (sbcore/slow_phase.py), left out and counted; every other trial pairs.
    across = {t for t in range(24) if len({slow_phase(s, WINDOWS) for _, p, s in schedule if p == t}) == 2}
    assert 0 < len(across) < 24 - 3
    assert row["left_out_across_phase"] == len(across)
    assert row["trials"] == 24 - len(across)
    assert abs(row["paired_speedup"] / 2.0 - 1) <= 0.02
    assert row["paired_ci_low"] <= 2.0 <= row["paired_ci_high"]
    assert row["paired_halfwidth_rel"] <= 0.02
    # The same processes in the shuffled order across a campaign: the baseline's 24 processes met the
    # first window, the case's came minutes later in a quiet phase. Ratio of medians: far off.
    unpaired_schedule = [("serial", t, t) for t in range(24)] + [("omp2", t, 100 + t) for t in range(24)]
    unpaired = records_for(unpaired_schedule, true_s, [(0, 16)])
    medians = unpaired.groupby("case_id")["wall_s"].median()
    assert abs(medians["serial"] / medians["omp2"] / 2.0 - 1) > 0.02


def test_disturbed_and_far_apart_trials_are_left_out_and_counted():
    true_s = {"a": 1.0, "b": 1.0}
    schedule = trial_schedule(["a", "b"], 12, np.random.default_rng(3))
    records = records_for(schedule, true_s, [])
    records.loc[(records["case_id"] == "b") & (records["invocation"] == 2), "disturbed"] = True
    late = (records["case_id"] == "b") & (records["invocation"].isin([5, 6]))
    records.loc[late, "started"] = (EPOCH + pd.Timedelta(hours=1)).isoformat()  # a resumed trial
    records.loc[late, "wall_s"] = 3.0  # would drag the ratio if it were paired
    row = paired_speedups(
        speedup_rows([("b", "a")]), records, {"a": "f", "b": "f"}, np.random.default_rng(4)
    ).iloc[0]
    assert (row["trials"], row["left_out_disturbed"], row["left_out_apart"]) == (9, 1, 2)
    assert row["trials_together"] == 10  # the disturbed trial counts there, the apart ones nowhere
    assert row["paired_speedup"] == pytest.approx(1.0)


def test_a_comparison_whose_every_trial_is_left_out_has_no_ratio():
    """Every trial of the case with a slow cache-line transfer: no trial left for either estimate (and
    none for the rule on ratios across a phase change, sbcore/slow_phase.py)."""
    true_s = {"serial": 1.0, "atomic2": 0.8}
    records = records_for(trial_schedule(list(true_s), 10, np.random.default_rng(8)), true_s, [])
    member = records["case_id"] == "atomic2"
    records["slow_transfer"] = member
    records.loc[member, "disturbed"] = True
    row = paired_speedups(
        speedup_rows([("atomic2", "serial")]), records, dict.fromkeys(true_s, "f"), np.random.default_rng(1)
    ).iloc[0]
    assert (row["trials"], row["trials_together"], row["left_out_across_phase"]) == (0, 0, 0)
    assert np.isnan(row["paired_together_speedup"])


def test_trials_in_a_slow_cache_line_transfer_phase_are_left_out_of_both_estimates():
    """A contended case on two CPUs whose cache-line transfer slowed (the host moved the vCPUs apart)
    runs 2.4x as long in those trials while its single-threaded baseline does not: pairing cannot
    cancel that, so the trials are left out of the estimate over every trial measured together too,
    and counted. Trials merely disturbed otherwise (a slow phase both members share) stay there."""
    true_s = {"serial": 1.0, "atomic2": 0.8}  # the truth: 1.25x
    schedule = trial_schedule(list(true_s), 16, np.random.default_rng(8))
    records = records_for(schedule, true_s, [])
    phase = (records["case_id"] == "atomic2") & records["invocation"].isin([4, 5, 6, 7, 8])
    records.loc[phase, "wall_s"] *= 2.4
    records["slow_transfer"] = phase
    records.loc[phase, "disturbed"] = True
    shared = records["invocation"] == 12  # a phase both members were in: disturbed, paired within it
    records.loc[shared, "disturbed"] = True
    records.loc[shared, "wall_s"] *= 1.5
    row = paired_speedups(
        speedup_rows([("atomic2", "serial")]),
        records,
        {"serial": "f", "atomic2": "f"},
        np.random.default_rng(9),
    ).iloc[0]
    assert (row["trials"], row["left_out_disturbed"], row["left_out_slow_transfer"]) == (10, 6, 5)
    assert row["trials_together"] == 11
    assert row["paired_together_speedup"] == pytest.approx(1.25)
    assert row["paired_together_halfwidth_rel"] == pytest.approx(0.0, abs=1e-9)
    # Without the transfer flag its 5 trials at 0.52x lie far outside the spread of the others: taken
    # for ratios across a change of the host's phase (sbcore/slow_phase.py), they are left out too.
    # Paired within, they would widen the interval far past the +-2 % the comparison aims at.
    unflagged = paired_speedups(
        speedup_rows([("atomic2", "serial")]),
        records.assign(slow_transfer=False),
        {"serial": "f", "atomic2": "f"},
        np.random.default_rng(9),
    ).iloc[0]
    assert (unflagged["trials_together"], unflagged["left_out_across_phase"]) == (11, 5)
    assert unflagged["paired_together_speedup"] == pytest.approx(1.25)


def test_no_pairing_across_families_or_without_one():
    records = records_for(
        trial_schedule(["a", "b", "c"], 6, np.random.default_rng(5)), {"a": 1, "b": 1, "c": 1}, []
    )
    table = paired_speedups(
        speedup_rows([("b", "a"), ("c", "a"), ("a", "a")]),
        records,
        {"a": "f", "b": "f", "c": "g"},
        np.random.default_rng(6),
    )
    assert list(table["case_id"]) == ["b"]


def test_a_a_false_difference_rate_within_the_binomial_bound():
    """40 families of two identical configurations under planted slow phases and 3 % process noise:
    at alpha = 5 % a CI that excludes 1 is a false difference; the binomial bound allows 5 of 40
    (P(X >= 6) < 0.05 for X ~ Binomial(40, 0.05))."""
    rng = np.random.default_rng(7)
    false = 0
    for family in range(40):
        start = int(rng.integers(0, 20))
        windows = [(start, start + int(rng.integers(3, 15))), (start + 25, start + 30)]
        schedule = trial_schedule(["a", "b"], 20, rng)
        noise = np.exp(rng.normal(0.0, 0.03, len(schedule)))
        records = records_for(schedule, {"a": 1.0, "b": 1.0}, windows, noise)
        row = paired_speedups(
            speedup_rows([("b", "a")]), records, {"a": f"f{family}", "b": f"f{family}"}, rng
        ).iloc[0]
        false += not (row["paired_ci_low"] <= 1.0 <= row["paired_ci_high"])
    assert false <= 5


def test_a_campaign_planned_in_families_gets_paired_speedups_and_a_report_section(tmp_path):
    """Wiring: cases.jsonl naming families -> analyze -> paired_speedup.csv and the report's section."""
    import json

    from analysis.outputs.report.render import write_report
    from analysis.pipeline import Options, analyze, write_tables
    from jobs.families import family_of
    from sbcore import layout
    from tests.synthetic_campaigns import rewrite_case, standard_campaign, trials_of

    truth = standard_campaign(tmp_path, reps=6, seed=4)
    cases_file = layout.cases_path(truth.campaign_dir)
    cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line.strip()]
    cases_file.write_text("".join(json.dumps(c | {"family": family_of(c)}) + "\n" for c in cases))
    for stored in truth.campaign_dir.glob("raw/*/reps.csv"):  # trials of 3 repetitions each
        rewrite_case(stored.parent, trials_of(3))
    result = analyze(truth.campaign_dir, Options(n_resamples=100, seed=1))
    paired = result.paired_speedup
    speedup = result.speedup.set_index("case_id")
    records = result.stats.records
    in_trials = set(records.loc[records["invocation"].notna(), "case_id"].astype(str))
    measured = speedup["speedup"].notna() & speedup.index.isin(in_trials)
    measured &= speedup["baseline_case_id"].isin(in_trials)  # (the old rep-<k>.json cases: no trials)
    compared = speedup[measured & (speedup.index != speedup["baseline_case_id"])]
    assert len(paired) == len(compared) > 0
    # Same records: paired and unpaired speedups agree within the noise (wide: 2 trials of 3 reps).
    unpaired = speedup.loc[paired["case_id"], "speedup"].to_numpy()
    assert np.allclose(paired["paired_speedup"].to_numpy(), unpaired, rtol=0.5)
    write_tables(result)
    assert (result.out_dir / "paired_speedup.csv").is_file()
    report = write_report(result, [], ("md", "html"))
    text = report["md"].read_text()
    assert "Paired speedups (trials)" in text and "have a CI half-width within" in text
    assert "paired comparisons:" in text  # the acceptance counts, as the console prints them
    assert result.comparison_precision["counted"] + result.comparison_precision["oversubscribed"] == (
        len(paired) + len(result.paired_variant_ratio)
    )
    assert len(result.paired_variant_ratio) > 0  # schedules and syncs of one family, paired
    assert (result.out_dir / "paired_variant_ratio.csv").is_file()
    assert "paired" in rendered_sections(report["html"])


def test_a_process_counts_its_clean_repetitions():
    """Three repetitions per process: one disturbed and slow repetition does not move the trial's time;
    a process with all three disturbed leaves its trial out."""
    rows = []
    for case_id, true_s in (("a", 1.0), ("b", 0.5)):
        for t in range(6):
            for k in range(3):
                slow = case_id == "b" and k == 0 and t < 4
                rows.append({"case_id": case_id, "invocation": t, "wall_s": true_s * (3 if slow else 1)})
    records = pd.DataFrame(rows).assign(disturbed=lambda d: d["wall_s"] == 1.5)
    records.loc[(records["case_id"] == "b") & (records["invocation"] == 5), "disturbed"] = True
    row = paired_speedups(
        speedup_rows([("b", "a")]), records, {"a": "f", "b": "f"}, np.random.default_rng(8)
    ).iloc[0]
    assert (row["trials"], row["left_out_disturbed"]) == (5, 1)
    assert row["paired_speedup"] == pytest.approx(2.0)
    # Shown separately: every trial measured together, the disturbed one too.
    assert row["trials_together"] == 6 and row["paired_together_speedup"] == pytest.approx(2.0)


def test_variant_ratios_are_paired_within_trials_of_their_family():
    """static vs static,1 at 2 workers, b 30 % slower, under planted slow phases: the paired ratio of
    b's time over a's stays within 2 % of 1.30; a pair across families gets none."""
    from analysis.stats.paired import VARIANT_KEY, paired_variant_ratios

    true_s = {"serial": 1.0, "a": 0.5, "b": 0.65, "other": 0.5}
    schedule = trial_schedule(["serial", "a", "b"], 24, np.random.default_rng(11))
    schedule += [("other", t, slot) for t, slot in enumerate(range(200, 224))]
    records = records_for(schedule, true_s, WINDOWS)
    comparisons = pd.DataFrame(
        [
            ("ws", "k-omp", 2, 1, "schedule", "static", "static,1", "a", "b"),
            ("ws", "k-omp", 2, 1, "schedule", "static", "dynamic", "a", "other"),
        ],
        columns=VARIANT_KEY,
    )
    families = {"serial": "f", "a": "f", "b": "f", "other": "g"}
    table = paired_variant_ratios(comparisons, records, families, np.random.default_rng(12))
    assert list(table["case_b"]) == ["b"]
    row = table.iloc[0]
    assert row["trials_together"] + row["left_out_across_phase"] == 24  # (across a window's edge)
    assert abs(row["paired_together_ratio_b_over_a"] / 1.3 - 1) <= 0.02
    assert row["paired_together_ci_low"] <= 1.3 <= row["paired_together_ci_high"]


def family_schedule(members: int, every: int, trials: int, seed: int) -> list:
    """(case_id, invocation, slot, trial, place) of each process of a family of a baseline and
    `members` others in trials ordered as the runner orders them (jobs/families.py)."""
    import random

    from jobs.families import repeat_baselines
    from jobs.families import trials as order_trials

    cases = [{"case_id": "base", "family": "f", "model": "serial", "reps": trials}]
    cases += [{"case_id": f"m{i}", "family": "f", "model": "omp", "reps": trials} for i in range(members)]
    repeat_baselines(cases, every)
    runs = cases[0].get("trial_runs", 1)
    work = [(cases[0], p) for p in range(trials * runs)] + [(c, t) for c in cases[1:] for t in range(trials)]
    ordered = order_trials(work, random.Random(seed))
    return [
        (c["case_id"], p, slot, place["trial"], place["trial_slot"])
        for slot, (c, p, place) in enumerate(ordered)
    ]


def test_a_repeated_baseline_keeps_a_large_family_on_the_truth():
    """A family of 24 members (about the size of the Mandelbrot C family) on a host whose slow phases
    (x2) last 3-20 processes, 5-40 apart, and 0.5 % noise per process: with the baseline once per
    trial a member runs up to 24 processes from it, often across a step of the host; with a baseline
    run after every 8 members (the default, each member paired with the run nearest to it) every
    member's paired speedup is within +-2 % of the truth, and more of their intervals are within
    +-2 % (22 of 24 against 19 of 24 with these seeds)."""
    rng = np.random.default_rng(11)
    windows, start = [], 0
    while start < 2000:
        start += int(rng.integers(5, 40))
        length = int(rng.integers(3, 21))
        windows.append((start, start + length))
        start += length
    members = 24
    true_s = {"base": 1.0} | {f"m{i}": 0.5 for i in range(members)}
    pairs = speedup_rows([(f"m{i}", "base") for i in range(members)])
    families = dict.fromkeys(true_s, "f")
    tables = {}
    for every in (0, 8):
        schedule = family_schedule(members, every, 12, seed=5)
        noise = np.exp(np.random.default_rng(3).normal(0.0, 0.005, len(schedule)))
        records = records_for([(c, p, slot) for c, p, slot, _, _ in schedule], true_s, windows, noise)
        records["trial"] = [t for *_, t, _ in schedule]
        records["trial_slot"] = [s for *_, s in schedule]
        tables[every] = paired_speedups(pairs, records, families, np.random.default_rng(2))
    assert (abs(tables[8]["paired_speedup"] / 2.0 - 1) <= 0.02).all()
    assert ((tables[8]["paired_ci_low"] <= 2.0) & (tables[8]["paired_ci_high"] >= 2.0)).all()
    precise = {every: int((t["paired_halfwidth_rel"] <= 0.02).sum()) for every, t in tables.items()}
    assert precise[8] > precise[0]
    assert tables[8]["paired_halfwidth_rel"].median() < tables[0]["paired_halfwidth_rel"].median()


def test_a_a_false_differences_with_a_repeated_baseline_within_the_binomial_bound():
    """40 families of a baseline and 9 members, one of them identical to the baseline (an A/A pair),
    under planted slow phases and 3 % process noise, a baseline run after every 4 members: at most
    5 of 40 A/A intervals exclude 1 (the binomial bound at alpha = 5 %)."""
    rng = np.random.default_rng(13)
    false = 0
    true_s = {"base": 1.0} | {f"m{i}": 1.0 if i == 0 else 0.5 for i in range(9)}
    for family in range(40):
        start = int(rng.integers(0, 40))
        windows = [(start, start + int(rng.integers(3, 15))), (start + 60, start + 75)]
        schedule = family_schedule(9, 4, 16, seed=family)
        noise = np.exp(rng.normal(0.0, 0.03, len(schedule)))
        records = records_for([(c, p, slot) for c, p, slot, _, _ in schedule], true_s, windows, noise)
        records["trial"] = [t for *_, t, _ in schedule]
        records["trial_slot"] = [s for *_, s in schedule]
        row = paired_speedups(
            speedup_rows([("m0", "base")]), records, dict.fromkeys(true_s, f"f{family}"), rng
        ).iloc[0]
        assert row["trials"] + row["left_out_across_phase"] == 16
        false += not (row["paired_ci_low"] <= 1.0 <= row["paired_ci_high"])
    assert false <= 5


def test_a_campaign_planned_in_duets_gets_duet_ratios_and_a_report_section(tmp_path):
    """Wiring: cases.jsonl naming a duet pair, records naming their partner and duet -> analyze ->
    paired_duet_ratio.csv and the report's section "Duets"."""
    import json

    from analysis.outputs.report.render import write_report
    from analysis.pipeline import Options, analyze, write_tables
    from sbcore import layout
    from tests.synthetic_campaigns import rewrite_case, standard_campaign

    truth = standard_campaign(tmp_path, reps=6, seed=4)
    cases_file = layout.cases_path(truth.campaign_dir)
    cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line.strip()]
    a, b = [c for c in cases if c["threads"] * c["ranks"] == 1][:2]
    for c in (a, b):
        c["duet"] = "duet-x"
    cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases))
    for c, partner in ((a, b), (b, a)):
        duet = {"duet_partner": partner["case_id"]}
        rewrite_case(
            layout.case_dir(truth.campaign_dir, c["case_id"]),
            lambda records, duet=duet: [
                r | {"invocation": r["rep"], "trial": r["rep"]} | duet for r in records
            ],
        )
    result = analyze(truth.campaign_dir, Options(n_resamples=100, seed=1))
    row = result.paired_duet_ratio.iloc[0]
    assert (row["case_a"], row["case_b"], row["trials_together"]) == (a["case_id"], b["case_id"], 6)
    times = result.stats.records.groupby("case_id")["wall_s"].median()
    assert row["paired_together_ratio_b_over_a"] == pytest.approx(
        times[b["case_id"]] / times[a["case_id"]], rel=0.5
    )
    write_tables(result)
    assert (result.out_dir / "paired_duet_ratio.csv").is_file()
    report = write_report(result, [], ("md", "html"))
    assert "b / a, clean duets only" in report["md"].read_text()
    assert "duets" in rendered_sections(report["html"])
