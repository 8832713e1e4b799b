"""Which family gets the next trial of the comparison target (jobs/comparison_sampling.py): its paired
speedups and its variant ratios both count, from times put straight into the record cache."""

from jobs.comparison_sampling import CaseTimes, family_needs
from sbcore.trial_pairing import Run
from sbcore.variant_pairs import variant_pairs

TARGET = 0.02


def member(case_id: str, model: str, schedule: str | None = None, threads: int = 1, **extra) -> dict:
    params = {"preset": "asymmetric"} | ({"schedule": schedule} if schedule else {})
    return {
        "case_id": case_id,
        "family": "f",
        "model": model,
        "binary": f"mandelbrot-c-{model}",
        "pin": "compact",
        "counter_group": None,
        "threads": threads,
        "ranks": 1,
        "params": params,
        "reps": 24,
        "comparison": {"target_ci": TARGET, "budget_s": 10, "oversubscribed": False},
    } | extra


class Times:
    """A stand-in for the runner's RecordCache: case id -> time of its one process in each trial."""

    def __init__(self, times: dict[str, list[float]]):
        self.times = times

    def get(self, case: dict) -> CaseTimes:
        per_trial = self.times[case["case_id"]]
        trials = set(range(len(per_trial)))
        measured = set(range(len(per_trial) * case.get("trial_runs", 1)))  # the per-case rule's numbering
        return CaseTimes({t: [Run(0, x)] for t, x in enumerate(per_trial)}, trials, measured, {})


def test_a_variant_ratio_wider_than_the_target_gets_a_trial_of_its_two_cases():
    """base / a and base / b each within +-1.5 %, but a and b vary in opposite directions, so a / b
    spreads +-3 %: the family needs a trial for that ratio alone, which runs a and b (not the
    baseline); with the variant pair inside the target the family needs none."""
    wobble = [0.03 * (1 if t % 2 else -1) * (t % 5) / 4 for t in range(12)]
    cases = [member("base", "serial"), member("a", "omp", "static"), member("b", "omp", "dynamic,4")]
    opposite = Times(
        {"base": [1.0] * 12, "a": [0.5 * (1 + w) for w in wobble], "b": [0.5 * (1 - w) for w in wobble]}
    )
    trial = family_needs(opposite, cases, TARGET)[0].work
    assert trial is not None
    assert sorted((c["case_id"], p) for c, p in trial) == [("a", 12), ("b", 12)]
    together = Times(
        {"base": [1.0] * 12, "a": [0.5 * (1 + w) for w in wobble], "b": [0.5 * (1 + w) for w in wobble]}
    )
    assert family_needs(together, cases, TARGET) == []


def test_an_imprecise_speedup_brings_the_baseline_as_often_as_it_runs_in_a_trial():
    cases = [member("base", "serial", trial_runs=2, reps=48), member("a", "omp", "static")]
    noisy = [0.5 * (1 + 0.05 * ((t * 7) % 5 - 2)) for t in range(12)]
    times = Times({"base": [1.0] * 12, "a": noisy})
    (need,) = family_needs(times, cases, TARGET)
    assert sorted((c["case_id"], p) for c, p in need.work) == [("a", 12), ("base", 24), ("base", 25)]
    assert need.trial == 12


def test_a_family_gets_a_trial_while_its_cases_have_room_whatever_trial_numbers_its_group_used():
    """Another family of the trial group has used 30 trial numbers (the comparison target's trials of
    it: a number new to the group each), more than this family's cases have processes (24): the next
    trial is number 30, and each of its processes the lowest invocation its case has not used."""
    cases = [member("base", "serial"), member("a", "omp", "static")]
    cases = [c | {"trial_group": "g"} for c in cases]
    other = member("o", "omp", "static", threads=2, family="f-other", trial_group="g")
    noisy = [0.5 * (1 + 0.05 * ((t * 7) % 5 - 2)) for t in range(12)]
    times = Times({"base": [1.0] * 12, "a": noisy, "o": [0.5] * 30})
    (need,) = family_needs(times, [*cases, other], TARGET)
    assert need.trial == 30
    assert sorted((c["case_id"], p) for c, p in need.work) == [("a", 12), ("base", 12)]
    # Every one of a case's 24 processes used: no room, no trial.
    full = Times({"base": [1.0] * 24, "a": noisy * 2, "o": [0.5] * 30})
    assert family_needs(full, [*cases, other], TARGET) == []


def test_variant_pairs_are_the_analysis_pairs():
    """Exactly one of schedule or sync differs, the same binary, pinning and workers; not serial; the
    pair ordered by the differing value ("dynamic,4" before "static"), as the analysis orders it."""
    base = member("base", "serial")
    a, b = member("a", "omp", "static"), member("b", "omp", "dynamic,4")
    c = member("c", "omp", "static", threads=2)
    d = member("d", "pthreads", "block") | {"binary": "mandelbrot-c-pthreads"}
    e = member("e", "omp", "dynamic,4", pin="none")
    assert [(x["case_id"], y["case_id"]) for x, y in variant_pairs([base, a, b, c, d, e])] == [("b", "a")]


def test_the_runners_variant_pairs_are_the_ones_the_analysis_tests():
    """The same cases as cases.jsonl (the runner's view) and as the analysis' summary rows: the runner's
    comparison target and analysis/stats/variant_tests.py pair exactly the same cases, in the same order."""
    import pandas as pd

    from analysis.campaign import problem_key
    from analysis.stats.variant_tests import candidate_pairs

    def case(case_id, schedule=None, sync=None, threads=2, **extra):
        params = {"size": 64} | {k: v for k, v in (("schedule", schedule), ("sync", sync)) if v}
        return member(case_id, "omp", threads=threads, node_type="n1") | {"params": params} | extra

    cases = [
        member("base", "serial", node_type="n1"),
        case("s", "static", "atomic"),
        case("d", "dynamic,4", "atomic"),
        case("g", "guided", "critical"),  # differs from s and d in both dimensions: no pair with them
        case("c", "static", "critical"),
        case("s4", "static", "atomic", threads=4),  # other workers: no pair with s
        case("x", "static", "atomic", pin="scatter"),
        case("o", params={"size": 128, "schedule": "dynamic,4", "sync": "atomic"}),  # another problem
        case("n", None, "critical"),  # without a schedule: one value more ("<none>", ordered first)
    ]
    summary = pd.DataFrame(
        [
            {
                "case_id": c["case_id"],
                "row": i,
                "n": 5,
                "median_s": 1.0,
                "valid": True,
                "model": c["model"],
                "node_type": c["node_type"],
                "binary": c["binary"],
                "problem": problem_key(c["params"]),
                "pin": c["pin"],
                "counter_group": c["counter_group"],
                "inner": c["params"].get("inner"),
                "threads": c["threads"],
                "ranks": c["ranks"],
                "schedule": c["params"].get("schedule"),
                "sync": c["params"].get("sync"),
            }
            for i, c in enumerate(cases)
        ]
    )
    analysis_pairs = candidate_pairs(summary)
    analysed = sorted(zip(analysis_pairs["case_a"], analysis_pairs["case_b"], strict=True))
    runner = sorted((a["case_id"], b["case_id"]) for a, b in variant_pairs(cases))
    assert analysed == sorted([("d", "s"), ("s", "c"), ("g", "c"), ("n", "c"), ("n", "g")])
    assert runner == analysed


def test_the_record_cache_reads_a_case_again_only_after_it_ran(monkeypatch, tmp_path):
    from jobs import comparison_sampling

    reads = []

    def ok_records(campaign_dir, case):
        reads.append(case["case_id"])
        return {0: {"wall_s": 1.0, "invocation": 0, "trial": 0, "trial_slot": 0}}

    monkeypatch.setattr(comparison_sampling, "ok_records", ok_records)
    cache = comparison_sampling.RecordCache(tmp_path)
    a, b = member("a", "omp", "static"), member("b", "omp", "dynamic,4")
    for _ in range(3):
        assert cache.get(a)[:3] == ({0: [Run(0, 1.0)]}, {0}, {0})
        cache.get(b)
    assert reads == ["a", "b"]
    cache.forget(a)
    cache.get(a)
    cache.get(b)
    assert reads == ["a", "b", "a"]
