"""SMT gain and sibling detection by timing, checked against a topology's sibling groups."""

import pytest

from analysis.smt import compare_with_topology, siblings_by_timing, smt_gain


def test_smt_gain_matches_the_thesis_definition():
    assert smt_gain(1.0, 2.0) == pytest.approx(0.0)  # the pair needs exactly double: no gain
    assert smt_gain(1.0, 1.77) == pytest.approx(0.13, abs=0.01)  # the thesis's "almost 13 %"
    assert smt_gain(1.0, 1.0) == pytest.approx(1.0)  # two full cores


def test_siblings_found_by_timing_and_compared_with_topology():
    alone = {0: 1.0, 1: 1.0, 2: 1.02, 3: 0.99}
    pairs = {(0, 2): 1.8, (1, 3): 1.75, (0, 1): 1.03, (2, 3): 1.05, (0, 3): 1.0, (1, 2): 1.01}
    found = siblings_by_timing(alone, pairs)
    assert found == [(0, 2), (1, 3)]
    verdict = compare_with_topology(found, [[0, 2], [1, 3]])
    assert verdict == {"agree": [(0, 2), (1, 3)], "missed": [], "invented": []}
    wrong = compare_with_topology(found, [[0, 1], [2, 3]])
    assert wrong["missed"] == [(0, 1), (2, 3)] and wrong["invented"] == [(0, 2), (1, 3)]
