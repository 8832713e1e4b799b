"""Which two cases are compared as variants: the same measurement (SAME_MEASUREMENT) but for exactly one
of the variant dimensions (schedule or sync, sbcore/variant_dimensions.py); a family's serial baseline
takes no part (it is compared through speedups). The rule the analysis' variant tests
(analysis/stats/variant_tests.py, over the summary's columns) and the runner's comparison target
(jobs/comparison_sampling.py, over the cases of `cases.jsonl`) share. A pair (a, b) is ordered by the
value of the dimension it differs in (a's before b's, as text, a missing value as MISSING), and its
ratio is b's time over a's (`ratio_b_over_a` of comparisons.csv and paired_variant_ratio.csv).
"""

from sbcore.variant_dimensions import VARIANT_DIMENSIONS, problem_params

# Columns of the analysis' summary that two variants agree in; a case of `cases.jsonl` has its fields and
# params, from which measurement_of takes the same values.
SAME_MEASUREMENT = ("node_type", "binary", "problem", "pin", "counter_group", "inner", "threads", "ranks")
BASELINE_MODEL = "serial"  # a comparison family's baseline (jobs/families.py), never a variant
MISSING = "<none>"  # a dimension a case does not give (a kernel without schedules): equal to another such


def variant_value(value) -> str:
    """A dimension's value as the pairs compare and order it."""
    return MISSING if value is None else str(value)


def differing_dimension(params_a: dict, params_b: dict) -> str | None:
    """The one variant dimension two cases' params differ in; None when they differ in none or more."""
    differ = [
        d for d in VARIANT_DIMENSIONS if variant_value(params_a.get(d)) != variant_value(params_b.get(d))
    ]
    return differ[0] if len(differ) == 1 else None


def measurement_of(case: dict) -> tuple:
    """A case's values of SAME_MEASUREMENT: its fields, its problem (params without the variant params,
    sorted) and its inner loop as its params give it."""
    derived = {
        "problem": sorted(problem_params(case["params"]).items()),
        "inner": case["params"].get("inner"),
    }
    return tuple(derived[k] if k in derived else case.get(k) for k in SAME_MEASUREMENT)


def variant_pairs(cases: list[dict]) -> list[tuple[dict, dict]]:
    """The cases of `cases.jsonl` compared as variants, as pairs (a, b) with a's value first."""
    others = [c for c in cases if c.get("model") != BASELINE_MODEL]
    pairs = []
    for i, a in enumerate(others):
        for b in others[i + 1 :]:
            dimension = differing_dimension(a["params"], b["params"])
            if dimension and measurement_of(a) == measurement_of(b):
                first = variant_value(a["params"].get(dimension)) < variant_value(b["params"].get(dimension))
                pairs.append((a, b) if first else (b, a))
    return pairs
