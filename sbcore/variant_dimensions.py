"""The parameters one variant of a measurement differs from another in: two cases that are the same
measurement but for exactly one of these are compared as variants (analysis/stats/variant_tests.py,
the comparison target of jobs/comparison_sampling.py), and a comparison family holds every value of
them (jobs/families.py)."""

VARIANT_DIMENSIONS = ("schedule", "sync")

# What a trial group spans besides (jobs/families.py): the families of one node type, kernel and
# problem that differ in the kernel's language and/or inner loop run in the same trials, and the
# analysis pairs two cases that are the same measurement but for exactly one of these
# (sbcore/cross_pairs.py). `lang` is a case's field, `inner` one of its parameters.
CROSS_DIMENSIONS = ("lang", "inner")
DEFAULT_INNER = "scalar"  # the kernels' --inner when a case does not give it

# The parameters that choose how a kernel runs, not what it computes: every table of the analysis names
# a variant by them (analysis/variants.py), and a case's problem is its params without them.
VARIANT_PARAMS = (*VARIANT_DIMENSIONS, "inner")


def problem_params(params: dict) -> dict:
    """What a case computes (size, region, samples, seed...): its params without VARIANT_PARAMS."""
    return {k: v for k, v in params.items() if k not in VARIANT_PARAMS}
