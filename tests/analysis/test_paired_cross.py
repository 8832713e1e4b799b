"""Paired ratios across a trial group (analysis/stats/paired_cross.py): C against Fortran and scalar
against SIMD, paired within the trials the group's families share, on a synthetic host with planted
slow phases (the stand-in of tests/analysis/test_paired_speedup.py)."""

import re

import numpy as np
import pandas as pd
import pytest

from analysis.outputs.report.sections import paired_cross as report_text
from analysis.stats.comparison_precision import CROSS_KIND, comparison_precision, variant_comparisons
from analysis.stats.paired_cross import COLUMNS, paired_cross_ratios
from tests.analysis.test_paired_speedup import WINDOWS, records_for, trial_schedule

# The truth: SIMD takes a fifth of the scalar loop's time; the Fortran twin 4 % longer than C.
TRUE_S = {"c-serial": 1.0, "c-omp2": 0.5, "simd-serial": 0.2, "simd-omp2": 0.1, "f-omp2": 0.52}


def case(case_id: str, lang: str, model: str, threads: int, inner: str | None, group: str | None) -> dict:
    params = {"preset": "asymmetric", **({"schedule": "dynamic,1"} if model == "omp" else {})}
    if inner:
        params["inner"] = inner
    line = {
        "case_id": case_id,
        "node_type": "ws",
        "binary": f"mandelbrot-{lang}-{model}",
        "kernel": "mandelbrot",
        "lang": lang,
        "model": model,
        "threads": threads,
        "ranks": 1,
        "pin": "compact",
        "counter_group": None,
        "params": params,
        "family": f"mandelbrot-{lang}-{inner or 'scalar'}",
    }
    return line | ({"trial_group": group} if group else {})


def group_cases(group: str | None = "mandelbrot-g") -> list[dict]:
    return [
        case("c-serial", "c", "serial", 1, None, group),
        case("c-omp2", "c", "omp", 2, None, group),
        case("simd-serial", "c", "serial", 1, "simd", group),
        case("simd-omp2", "c", "omp", 2, "simd", group),
        case("f-omp2", "f", "omp", 2, None, group),
    ]


def test_a_slow_phase_cancels_in_the_paired_cross_ratio_not_in_the_unpaired_one():
    """In the trials of one group each ratio stays within 2 % of the truth under slow phases of 2 s to
    16 s; the same cases measured in trials of their own family (as before trial groups: the scalar
    family's trials in a slow phase, the SIMD family's later in a quiet one) are far off unpaired and
    are not paired at all."""
    schedule = trial_schedule(list(TRUE_S), 24, np.random.default_rng(21))
    table = paired_cross_ratios(
        group_cases(), records_for(schedule, TRUE_S, WINDOWS), np.random.default_rng(3)
    )
    assert list(table.columns) == COLUMNS
    rows = {(r.dimension, r.case_a, r.case_b): r for r in table.itertuples()}
    assert set(rows) == {
        ("inner", "c-serial", "simd-serial"),
        ("inner", "c-omp2", "simd-omp2"),
        ("lang", "c-omp2", "f-omp2"),
    }
    for (_, a, b), row in rows.items():
        truth = TRUE_S[b] / TRUE_S[a]
        # (less the trials whose two processes lie on either side of a window's edge, sbcore/slow_phase.py)
        assert row.trials_together + row.left_out_across_phase == 24 and row.trial_group == "mandelbrot-g"
        assert abs(row.paired_together_ratio_b_over_a / truth - 1) <= 0.02
        assert row.paired_together_ci_low <= truth <= row.paired_together_ci_high
    assert rows["inner", "c-omp2", "simd-omp2"].variant_b == "simd"
    assert (rows["lang", "c-omp2", "f-omp2"].variant_a, rows["lang", "c-omp2", "f-omp2"].variant_b) == (
        "c",
        "f",
    )
    # One slow trial: only one of its processes in the phase. The paired median does not move.
    slow_trial = [(c, t, slot) for c, t, slot in schedule if t == 5]
    window = [(slow_trial[2][2], slow_trial[2][2] + 1)]
    one = paired_cross_ratios(group_cases(), records_for(schedule, TRUE_S, window), np.random.default_rng(3))
    assert np.allclose(
        one["paired_together_ratio_b_over_a"],
        [TRUE_S[b] / TRUE_S[a] for a, b in zip(one["case_a"], one["case_b"], strict=True)],
    )
    # Before trial groups: the families' trials apart in time (scalar first, in the first window).
    apart = [(c, t, t) for c in ("c-serial", "c-omp2") for t in range(24)]
    apart += [(c, t, 100 + t) for c in ("simd-serial", "simd-omp2") for t in range(24)]
    records = records_for(apart, TRUE_S, [(0, 16)])
    medians = records.groupby("case_id")["wall_s"].median()
    assert abs(medians["simd-omp2"] / medians["c-omp2"] / 0.2 - 1) > 0.02
    assert paired_cross_ratios(group_cases(None), records, np.random.default_rng(3)).empty


def test_cross_ratios_join_the_precision_count_and_the_report():
    schedule = trial_schedule(list(TRUE_S), 12, np.random.default_rng(5))
    table = paired_cross_ratios(
        group_cases(), records_for(schedule, TRUE_S, WINDOWS), np.random.default_rng(6)
    )
    comparisons = variant_comparisons(table, {"ws": 2}, kind=CROSS_KIND)
    assert list(comparisons["kind"]) == [CROSS_KIND] * 3
    precision = comparison_precision(comparisons, leads=pd.DataFrame(), cores={"ws": 2})
    assert precision["by_kind"][CROSS_KIND]["counted"] == 3
    summary = pd.DataFrame(
        {
            "case_id": list(TRUE_S),
            "schedule": [None, "dynamic,1", None, "dynamic,1", "dynamic,1"],
            "sync": None,
        }
    )
    text = [b.value for b in report_text.blocks(table, summary) if b.kind == "p"]
    simd = next(t for t in text if t.startswith("SIMD") and "2 threads" in t)
    assert simd.startswith("SIMD is 5.00x [")
    row = table[(table["case_a"] == "c-omp2") & (table["case_b"] == "simd-omp2")].iloc[0]
    trials = row["trials_together"]  # (12, less any across a window's edge: sbcore/slow_phase.py)
    assert trials + row["left_out_across_phase"] == 12
    assert (
        f"faster than scalar for mandelbrot-c-omp dynamic,1 on 2 threads, paired over {trials} trials" in simd
    )
    fortran = next(t for t in text if t.startswith("Fortran"))
    assert "slower than C for mandelbrot omp dynamic,1 on 2 threads" in fortran
    assert any(t.startswith("SIMD is") and "mandelbrot-c-serial on 1 thread," in t for t in text)


@pytest.mark.parametrize(
    "differ", [{"threads": 1}, {"pin": "scatter"}, {"params": {"preset": "x", "inner": "simd"}}]
)
def test_cases_that_differ_in_more_than_language_or_inner_loop_are_not_paired(differ):
    cases = [case("c-omp2", "c", "omp", 2, None, "g"), case("simd-omp2", "c", "omp", 2, "simd", "g") | differ]
    schedule = trial_schedule(["c-omp2", "simd-omp2"], 6, np.random.default_rng(1))
    assert paired_cross_ratios(cases, records_for(schedule, TRUE_S, []), np.random.default_rng(1)).empty


def test_analyze_writes_the_cross_ratios_counts_them_and_says_them(tmp_path):
    """Wiring: cases.jsonl naming families and trial groups -> analyze -> paired_cross_ratio.csv, the
    precision count and the report's sentence (the synthetic campaign's C and Fortran serial kernels)."""
    import json

    from analysis.outputs.report.render import write_report
    from analysis.pipeline import Options, analyze, write_tables
    from jobs.families import family_of, trial_group_of
    from sbcore import layout
    from tests.synthetic_campaigns import rewrite_case, standard_campaign, trials_of

    truth = standard_campaign(tmp_path, reps=6, seed=4)
    cases_file = layout.cases_path(truth.campaign_dir)
    cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line.strip()]
    grouped = [c | {"family": family_of(c), "trial_group": trial_group_of(c)} for c in cases]
    cases_file.write_text("".join(json.dumps(c) + "\n" for c in grouped))
    for stored in truth.campaign_dir.glob("raw/*/reps.csv"):  # trials of 3 repetitions each
        rewrite_case(stored.parent, trials_of(3))
    result = analyze(truth.campaign_dir, Options(n_resamples=100, seed=1))
    cross = result.paired_cross_ratio
    assert list(cross["dimension"]) == ["lang"] and list(cross["binary_b"]) == ["mandelbrot-f-serial"]
    assert cross["trials_together"].iloc[0] == 2
    precision = result.comparison_precision
    assert precision["by_kind"][CROSS_KIND]["counted"] == 1
    assert precision["counted"] + precision["oversubscribed"] == (
        len(result.paired_speedup) + len(result.paired_variant_ratio) + len(cross)
    )
    write_tables(result)
    written = pd.read_csv(result.out_dir / "paired_cross_ratio.csv")
    assert list(written.columns) == COLUMNS and len(written) == 1
    text = write_report(result, [], ("md",))["md"].read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("Fortran is")]
    assert "(no interval: too few trials)" in line and "than C for mandelbrot serial" in line
    assert re.search(r"on 1 thread, paired over 2 trials \(unpaired: [\d.]+x (faster|slower)\)\.$", line)


def test_a_sentence_says_as_fast_when_the_interval_holds_one_and_keeps_three_digits():
    from types import SimpleNamespace

    from analysis.outputs.report.sections.paired_cross import sentence

    def row(ratio, low, high, unpaired):
        return SimpleNamespace(
            paired_together_ratio_b_over_a=ratio,
            paired_together_ci_low=low,
            paired_together_ci_high=high,
            unpaired_ratio_b_over_a=unpaired,
            variant_a="c",
            variant_b="f",
            dimension="lang",
            kernel="mandelbrot",
            model="serial",
            binary_a="mandelbrot-c-serial",
            case_a="a",
            threads=1,
            ranks=1,
            trials_together=12,
        )

    even = sentence(row(0.996, 0.991, 1.01, 0.995), {})
    assert even == (
        "Fortran is as fast as C (time ratio 0.996 [0.991–1.01]) for mandelbrot serial on 1 thread, "
        "paired over 12 trials (unpaired: 0.995)."
    )
    slower = sentence(row(1.03, 1.01, 1.04, 1.0), {})
    assert (
        slower.startswith("Fortran is 1.03x [1.01–1.04] slower than C")
        and "(unpaired: 1.00x slower)" in slower
    )
