"""How the report writes a value with its CI (analysis/outputs/report/blocks.py's ci_text): three
significant digits, trailing zeros kept, so a table column of speedups and efficiencies reads alike."""

import math

from analysis.outputs.report.blocks import ci_text


def test_three_significant_digits_with_trailing_zeros():
    assert ci_text(2.0, 1.99, 2.0) == "2.00 [1.99–2.00]"
    assert ci_text(1.0, 0.99, 1.0) == "1.00 [0.990–1.00]"
    assert ci_text(26.8, 26.2, 27.2) == "26.8 [26.2–27.2]"
    assert ci_text(0.0479, math.nan, math.nan, " s") == "0.0479 s (no CI: one repetition)"
    assert ci_text(math.nan, 1, 2) == "n/a"
