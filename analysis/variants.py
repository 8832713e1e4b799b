"""The column lists that say which variant a row is, in one place: every table groups and labels by these.

A case is a kernel's problem (size, region, samples...) run by one variant (binary, schedule, sync, inner
loop, pinning, counter group, workers) on one node type.
"""

from sbcore import variant_pairs
from sbcore.variant_dimensions import VARIANT_PARAMS  # how a kernel runs, not what it computes

# What names a variant in every table, in this order (summary, speedup, models).
CASE_DESCRIPTION = [
    "node_type",
    "binary",
    "kernel",
    "lang",
    "model",
    *VARIANT_PARAMS,
    "pin",
    "counter_group",
]

# One variant at every worker count: a scaling series (speedup against `self`, model fits).
SCALING_SERIES = ["node_type", "binary", "params_json", "pin", "counter_group"]

# Two cases are the same measurement but for their schedule or sync (variant tests, variant plots): the
# rule the runner's comparison target shares (sbcore/variant_pairs.py).
SAME_MEASUREMENT = list(variant_pairs.SAME_MEASUREMENT)

# The same measurement on another node type or cluster: everything but where it ran agrees.
NODE_TYPE_MATCH = ["binary", "params_json", "pin", "counter_group", "threads", "ranks"]
