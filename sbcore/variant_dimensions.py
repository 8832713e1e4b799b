"""The parameters one variant of a measurement differs from another in: two cases that are the same
measurement but for exactly one of these are compared as variants (analysis/stats/variant_tests.py,
the comparison target of jobs/comparison_sampling.py), and a comparison family holds every value of
them (jobs/families.py)."""

VARIANT_DIMENSIONS = ("schedule", "sync")
