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
