"""The published figures as data (config/reference/seed-000.toml) say what the study printed, and the
comparison of factors picks the right cases, computes median ratios with CIs and judges them."""

import tomllib

import numpy as np
import pandas as pd
import pytest

from analysis.outputs.reference_doc import replace_section
from analysis.reference_data import REFERENCE_DIR
from analysis.stats.reference import Reference, compare, load_reference, verdict

SEED = tomllib.loads((REFERENCE_DIR / "seed-000.toml").read_text())


def test_every_test_case_has_published_rows_and_factors():
    assert sorted(SEED["cases"]) == [f"tc{n:02d}" for n in range(1, 11)]
    for name, case in SEED["cases"].items():
        assert case["title"] and case["shape"] and case["factors"], name
        assert case.get("published"), name


@pytest.mark.parametrize("name", ["tc08", "tc09", "tc10"])
def test_published_factors_are_the_published_times_divided(name):
    """Data entry check: each printed factor = 1-thread time / time on the same platform (and sync)."""
    rows = SEED["cases"][name]["published"]
    groups = {}
    for row in rows:
        groups.setdefault((row["cpus"], row.get("sync")), []).append(row)
    for group in groups.values():
        one = next(r for r in group if r["threads"] == 1)
        for row in group:
            assert row["factor"] == pytest.approx(one["time_s"] / row["time_s"], abs=0.011), row


@pytest.mark.parametrize("name", ["tc08", "tc09", "tc10"])
def test_compared_factors_are_the_published_ones(name):
    case = SEED["cases"][name]
    published = {(r["cpus"], r.get("sync"), r["threads"]): r["factor"] for r in case["published"]}
    for factor in case["factors"]:
        p = factor["point"]
        if factor["metric"] == "wall_s":
            assert factor["study"] == published[(p["cpus"], p.get("sync"), p["threads"])]
        else:  # the CPU-time factors are derived: 1-thread CPU time / CPU time, and say so
            assert factor["metric"] == "cpu_s" and "derived_from" in factor
            rows = {(r["cpus"], r.get("sync"), r["threads"]): r["cpu_time_s"] for r in case["published"]}
            one = rows[(p["cpus"], p.get("sync"), 1)]
            assert factor["study"] == pytest.approx(
                one / rows[(p["cpus"], p.get("sync"), p["threads"])], abs=6e-4
            )


def test_cpu_times_are_seconds_converted_from_m_ss():
    row = next(r for r in SEED["cases"]["tc09"]["published"] if r["sync"] == "coarse" and r["threads"] == 32)
    assert row["cpu_time_s"] == 127 and row["cpus"] == 1  # printed 2:07


def _case(cid, threads, cpus, **params):
    return {"case_id": cid, "binary": "mandelbrot-c-pthreads", "model": "pthreads", "threads": threads,
            "cpus": cpus, "params": params, "env": {}}  # fmt: skip


def _records(times: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for cid, walls in times.items():
        for w in walls:
            rows.append({"case_id": cid, "wall_s": w, "cpu_user_s": w, "cpu_sys_s": 0.0, "ctx_voluntary": 1,
                         "ctx_involuntary": 2, "os_threads": 3, "threads": 2, "warmup": False})  # fmt: skip
    return pd.DataFrame(rows)


def test_factor_is_base_median_over_point_median_of_the_matching_case():
    ref = Reference(
        "seed-000:tc09",
        {},
        {
            "factors": [
                {"label": "coarse 1 CPU 2 threads", "point": {"sync": "coarse", "cpus": 1, "threads": 2},
                 "base": {"sync": "coarse", "cpus": 1, "threads": 1}, "study": 0.99},
                {"label": "coarse 1 CPU 8 threads", "point": {"sync": "coarse", "cpus": 1, "threads": 8},
                 "base": {"sync": "coarse", "cpus": 1, "threads": 1}, "study": 0.61},
            ]
        },
    )  # fmt: skip
    cases = [
        _case("a1", 1, 1, sync="coarse"),
        _case("a2", 2, 1, sync="coarse"),
        _case("b1", 1, 1, sync="fine"),  # same threads and CPUs, other sync: never the base
        _case("b2", 2, 2, sync="coarse"),  # other CPU count: never the point
    ]
    records = _records(
        {"a1": [1.0, 1.1, 0.9] * 2, "a2": [2.0, 2.2, 1.8] * 2, "b1": [9.0] * 6, "b2": [0.1] * 6}
    )
    table = compare(ref, cases, records)
    assert len(table) == 1  # no 8-thread case was run: that factor has no row
    two = table.iloc[0]
    assert (two["point_case"], two["base_case"]) == ("a2", "a1")
    assert two["measured"] == pytest.approx(0.5)
    assert two["ci_low"] <= 0.5 <= two["ci_high"] and two["n"] == 6 and two["coverage"] >= 0.9
    assert two["verdict"] == "differs" and two["pairing"] == "independent"  # 0.5 against 0.99 +- 10 %


def test_unmeasured_points_give_no_rows_and_missing_bases_say_so():
    ref = Reference("x:y", {}, {"factors": [
        {"label": "l", "point": {"threads": 2}, "base": {"threads": 1}, "study": 1.9},
        {"label": "m", "point": {"threads": 64}, "base": {"threads": 1}, "study": 1.9},
    ]})  # fmt: skip
    table = compare(ref, [_case("p", 2, 2)], _records({"p": [1.0, 1.0]}))
    assert list(table["label"]) == ["l"] and table.iloc[0]["verdict"] == "not measured"


def test_value_kind_compares_the_median_directly():
    ref = Reference("x:y", {}, {"factors": [
        {"kind": "value", "label": "extra", "metric": "extra_os_threads", "point": {"threads": 2},
         "study": 13},
    ]})  # fmt: skip
    table = compare(ref, [_case("p", 2, "all")], _records({"p": [1.0] * 5}))
    assert table.iloc[0]["measured"] == 1.0 and table.iloc[0]["verdict"] == "differs"
    table = compare(ref, [_case("p", 2, "all")], _records({"p": [1.0] * 3}))  # [min, max] of 3: 75 %
    assert table.iloc[0]["verdict"].startswith("inconclusive (too few trials")


@pytest.mark.parametrize(
    ("study", "measured", "low", "high", "margin", "expected"),
    [
        (1.9, 1.8, 1.75, 1.85, 0.10, "agrees"),  # the whole CI inside 1.71..2.09
        (1.9, 1.8, 1.7, 1.95, 0.10, "inconclusive"),  # the CI reaches below 1.71: no longer "within CI"
        (1.95, 1.17, 0.87, 1.5, 0.10, "differs"),  # the loaded TC1 run: wholly below the margin
        (0.54, 1.0, 0.98, 1.02, 0.10, "differs"),
        (1.0, np.nan, np.nan, np.nan, 0.10, "not measured"),
        (0.52, 0.59, 0.14, 1.08, 0.10, "inconclusive"),
        (1.9, 1.8, 1.7, 1.95, 0.15, "agrees"),  # the same CI inside a wider stated margin
        (0.96, 1.0, 0.99, 1.01, 0.10, "cannot decide at this margin"),  # a 4 % effect, +-10 %: 1 agrees too
        (0.948, 0.99, 0.98, 1.0, 0.10, "cannot decide at this margin"),
        (1.0, 1.0, 0.99, 1.01, 0.10, "agrees"),  # the study's figure is "no effect" itself
        (0.96, 0.5, 0.45, 0.55, 0.10, "differs"),  # a difference is still decided
        (1.9, 1.8, np.nan, np.nan, 0.10, "inconclusive (too few trials for a 90 % interval)"),
    ],
)
def test_verdicts_are_the_equivalence_rule(study, measured, low, high, margin, expected):
    assert verdict(study, measured, low, high, margin, n=5)[0] == expected


def test_inconclusive_says_how_many_repetitions_would_decide():
    # ratio 0.947 of the study, CI half-width 0.053 of it, 0.047 from the edge 0.9: about 5 x 1.27 = 7
    assert verdict(1.9, 1.8, 1.7, 1.9, 0.10, n=5) == ("inconclusive", 7.0)


def _loaded_records(shares: list[float]) -> pd.DataFrame:
    records = _records({"base": [1.0, 1.0, 1.01] * 2, "load": [1.2, 1.21, 1.2] * 2})
    records["load_cpu_share"] = [None] * 6 + shares * 2
    return records


@pytest.mark.parametrize(
    ("shares", "expected_share", "expected"),
    [
        ([0.6, 0.6, 0.6], 0.67, "agrees"),
        ([0.2, 0.1, 0.2], 0.67, "load not applied"),
        ([0.95, 0.95, 0.9], 0.67, "load above its share"),  # two-sided: far more is not the scenario
        ([0.0, 0.0, 0.01], 0.0, "agrees"),  # SCHED_FIFO: no share expected during the compute region
        ([0.39, 0.4, 0.39], 0.0, "load above its share"),
    ],
)
def test_a_load_off_its_expected_share_either_way_gives_no_verdict(shares, expected_share, expected):
    ref = Reference("x:y", {}, {"factors": [
        {"label": "l", "point": {"load": "small"}, "base": {"load": "none"}, "study": 0.83,
         "load_share": expected_share},
    ]})  # fmt: skip
    cases = [_case("base", 2, 2), {**_case("load", 2, 2), "load": {"name": "small"}}]
    table = compare(ref, cases, _loaded_records(shares))
    assert table.iloc[0]["verdict"] == expected
    assert table.iloc[0]["load_share_expected"] == expected_share


def test_a_binding_marked_not_comparable_says_why_and_gets_no_verdict():
    ref = Reference("x:y", {}, {"factors": [
        {"label": "l", "point": {"threads": 2}, "base": {"threads": 1}, "study": 2.0,
         "not_comparable": "the same weights either way"},
    ]})  # fmt: skip
    cases = [_case("one", 1, 2), _case("two", 2, 2)]
    row = compare(ref, cases, _records({"one": [2.0] * 6, "two": [1.0] * 6})).iloc[0]
    assert (row["verdict"], row["reason"], row["measured"]) == (
        "not comparable",
        "the same weights either way",
        2.0,
    )


def test_a_case_too_disturbed_to_judge_is_inconclusive_as_in_the_gate():
    ref = Reference("x:y", {}, {"factors": [
        {"label": "l", "point": {"threads": 2}, "base": {"threads": 1}, "study": 2.0},
    ]})  # fmt: skip
    cases = [_case("one", 1, 2), _case("two", 2, 2)]
    records = _records({"one": [2.0] * 6, "two": [1.0] * 6})
    row = compare(ref, cases, records, frozenset({"two"})).iloc[0]
    assert row["verdict"] == "inconclusive (host disturbed)"


def test_paired_trials_give_the_median_of_per_trial_ratios():
    """A slow phase that slows both members of a trial cancels: per-trial ratios are all 2."""
    ref = Reference("x:y", {}, {"factors": [
        {"label": "l", "point": {"threads": 2}, "base": {"threads": 1}, "study": 2.0},
    ]})  # fmt: skip
    cases = [{**_case("one", 1, 2), "family": "f"}, {**_case("two", 2, 2), "family": "f"}]
    slow = [1.0, 1.5, 3.0, 1.0, 2.0, 1.2]  # the host's phase in each of six trials
    records = _records({"one": [2 * s for s in slow], "two": slow})
    records["invocation"] = list(range(6)) * 2
    row = compare(ref, cases, records).iloc[0]
    assert (row["pairing"], row["n"], row["measured"]) == ("paired", 6, 2.0)
    assert (row["ci_low"], row["ci_high"], row["verdict"]) == (2.0, 2.0, "agrees")
    cases = [_case("one", 1, 2), _case("two", 2, 2)]  # no family: independent repetitions, wide CI
    row = compare(ref, cases, records).iloc[0]
    assert row["pairing"] == "independent" and row["ci_high"] - row["ci_low"] > 0.5


def test_reference_loading_and_doc_sections():
    ref = load_reference("seed-000:tc05")
    assert ref.case["title"].startswith("TC5") and ref.seed["id"] == "seed-000"
    text = "a\n<!-- generated by analyze: s:t -->\nold\n<!-- end of generated: s:t -->\nb\n"
    assert replace_section(text, "s:t", "new table") == (
        "a\n<!-- generated by analyze: s:t -->\nnew table\n<!-- end of generated: s:t -->\nb\n"
    )
    with pytest.raises(ValueError, match="no section markers for s:u"):
        replace_section(text, "s:u", "x")


def test_scenario_table_of_knobs_without_load():
    """As the loader gives it: text columns categorical, no load anywhere (all None)."""
    from analysis.outputs.report.sections.scenario import scenario_table

    records = pd.DataFrame(
        {"case_id": ["a", "a", "b"], "sched_asked": ["worker_nice=5", "worker_nice=5", "-"],
         "sched_applied": ["other nice 5 x2"] * 2 + ["other nice 0 x2"], "load_name": [None] * 3,
         "load_cpu_share": [None] * 3, "threads": [2, 2, 2], "wall_s": [1.0, 3.0, 1.0], "warmup": [False] * 3}
    ).astype({"case_id": "category", "sched_asked": "category", "load_name": "category"})  # fmt: skip
    table = scenario_table(records)
    row = table[table["case_id"] == "a"].iloc[0]
    assert (row["asked"], row["load"], row["applied"], row["median_s"], row["n"]) == (
        "worker_nice=5", "none", "other nice 5 x2", 2.0, 2
    )  # fmt: skip
    assert table["load_cpu_share"].isna().all()


def test_an_unmeasured_privileged_scenario_says_it_needs_root():
    ref = Reference("x:y", {}, {"factors": [
        {"label": "fifo", "point": {"worker_policy": "fifo:1", "threads": 2}, "base": {"threads": 1},
         "study": 1.0},
    ]})  # fmt: skip
    cases = [_case("one", 1, 2), {**_case("two", 2, 2), "params": {"worker_policy": "fifo:1"}}]
    row = compare(ref, cases, _records({"one": [1.0, 1.0]})).iloc[0]
    assert row["verdict"] == "not run: needs root or CAP_SYS_NICE"


def test_the_thread_limit_probe_reads_as_a_limit_or_a_lower_bound():
    from analysis.stats.reference import limit_row

    capped = pd.DataFrame({"threads_created": [10000, 10000], "limit_reached": [0, 0]})
    assert limit_row(capped, 7146)["verdict"] == "no limit up to 10000 (the probe's cap), above the study's"
    refused = pd.DataFrame({"threads_created": [5000, 5100], "limit_reached": [1, 1]})
    row = limit_row(refused, 7146)
    assert (row["measured"], row["verdict"]) == (5000, "limit 5000, below the study's")


def test_disturbed_repetitions_are_left_out_except_beside_a_competing_load():
    from analysis.stats.reference import judged_repetitions

    records = _records({"quiet": [1.0] * 6, "loaded": [2.0] * 6})
    records["load_name"] = ["none"] * 6 + ["large"] * 6
    # every repetition's probe chain twice as slow as the fastest: all flagged, but only "quiet" counts
    records["hostname"] = "h"
    records["probe_int_mul_min_s"] = 1.0
    records["probe_int_mul_max_s"] = ([1.0] + [2.0] * 5) * 2
    judged, disturbed = judged_repetitions(records)
    assert disturbed == frozenset({"quiet"})  # 1 undisturbed of 6: too few, judged "host disturbed"
    assert (judged["case_id"] == "loaded").sum() == 6  # beside the load: the probe cannot tell it apart
