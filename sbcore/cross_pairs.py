"""Which two cases of a trial group (jobs/families.py) are compared across it: the same measurement but
for exactly one of language or inner loop (CROSS_DIMENSIONS), e.g. mandelbrot-c-omp static x2 with
--inner scalar against --inner simd, or mcpi-c-omp x2 against mcpi-f-omp x2. The rule the analysis'
paired cross ratios (analysis/stats/paired_cross.py) and the runner's comparison target
(jobs/comparison_sampling.py) share; it reads the cases of `cases.jsonl`.
"""

import itertools
import json
from typing import NamedTuple

from sbcore.variant_dimensions import CROSS_DIMENSIONS, DEFAULT_INNER

# With the trial group (node type, kernel and problem) and the parameters other than the inner loop
# (schedule, sync): the same measurement. Not in it: the binary and language (one of the dimensions),
# the case's repetitions and sampling (a family's baseline runs more often), its family and id.
SAME_MEASUREMENT = (
    "model",
    "threads",
    "ranks",
    "pin",
    "pin_tool",
    "counter_group",
    "env",
    "load",
    "cpus",
    "warmup",
    "reps_per_process",
)


class CrossPair(NamedTuple):
    dimension: str  # "lang" or "inner"
    a: dict  # the case with the lower value of the dimension ("c" before "f", "scalar" before "simd")
    b: dict


def numbering_group(case: dict) -> str | None:
    """The group a case's trials are numbered and run in: its trial group, else (cases planned before
    trial groups) its family; None for a case of no family."""
    return case.get("trial_group") or case.get("family")


def cross_values(case: dict) -> dict:
    """The case's value of each cross dimension."""
    return {"lang": case["lang"], "inner": case["params"].get("inner", DEFAULT_INNER)}


def measurement_key(case: dict) -> str:
    params = {k: v for k, v in case["params"].items() if k != "inner"}
    key = [case.get("trial_group"), [case.get(k) for k in SAME_MEASUREMENT], params]
    return json.dumps(key, sort_keys=True, default=str)


def cross_pairs(cases: list[dict]) -> list[CrossPair]:
    """Every pair of cases of one trial group that differ in exactly one cross dimension, in the order
    of `cases`; cases without a trial group take no part."""
    by_measurement: dict[str, list[dict]] = {}
    for case in cases:
        if case.get("trial_group"):
            by_measurement.setdefault(measurement_key(case), []).append(case)
    pairs = []
    for members in by_measurement.values():
        for a, b in itertools.combinations(members, 2):
            va, vb = cross_values(a), cross_values(b)
            differ = [d for d in CROSS_DIMENSIONS if va[d] != vb[d]]
            if len(differ) == 1:
                dimension = differ[0]
                pairs.append(CrossPair(dimension, *((a, b) if va[dimension] < vb[dimension] else (b, a))))
    return pairs
