"""How the report writes its numbers: a value with its CI (analysis/outputs/report/blocks.py's
ci_text) with three significant digits, trailing zeros kept, so a column of speedups reads alike; a
fold that holds nothing says why."""

import math

from analysis.outputs.report.blocks import ci_text


def test_three_significant_digits_with_trailing_zeros():
    assert ci_text(2.0, 1.99, 2.0) == "2.00 [1.99–2.00]"
    assert ci_text(1.0, 0.99, 1.0) == "1.00 [0.990–1.00]"
    assert ci_text(26.8, 26.2, 27.2) == "26.8 [26.2–27.2]"
    assert ci_text(0.0479, math.nan, math.nan, " s") == "0.0479 s (no CI: one repetition)"
    assert ci_text(math.nan, 1, 2) == "n/a"


def test_the_amdahl_fold_says_why_it_has_no_fit():
    from types import SimpleNamespace

    import pandas as pd

    from analysis.outputs.report.sections.scaling import section

    fold = section(SimpleNamespace(models=pd.DataFrame()), [])[-1]
    title, inside = fold.value
    assert title == (
        "Amdahl fits (none: no series has 3 worker counts within the cores; 1/f bounds the speedup)"
    )
    assert inside[0].value == "No series has >= 3 worker counts within the cores: no fit."
