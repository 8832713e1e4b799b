"""A case's shape (sbcore/case_shape.py): the one place of workers, oversubscription and usable cores,
on numbers and on columns alike."""

import math

import pandas as pd

from sbcore.case_shape import case_workers, oversubscribed, usable_cores, workers


def test_workers_are_threads_times_ranks_on_numbers_cases_and_columns():
    assert workers(3, 2) == 6
    assert case_workers({"threads": 4}) == 4 and case_workers({"threads": 2, "ranks": 3}) == 6
    assert workers(pd.Series([1, 2]), pd.Series([4, 3])).tolist() == [4, 6]


def test_oversubscribed_only_above_the_cores_and_never_with_unknown_cores():
    assert not oversubscribed(4, 4) and oversubscribed(5, 4)
    assert not oversubscribed(64, math.nan)
    cores = pd.Series([4.0, 4.0, math.nan])
    assert oversubscribed(pd.Series([4, 5, 99]), cores).tolist() == [False, True, False]


def test_usable_cores_are_the_fewer_of_workers_and_cores():
    assert usable_cores(2, 4) == 2 and usable_cores(8, 4) == 4
    assert usable_cores(8, math.nan) == 8  # unknown cores: the workers still bound the speedup
    got = usable_cores(pd.Series([2.0, 8.0, 8.0]), pd.Series([4.0, 4.0, math.nan]))
    assert got.tolist() == [2.0, 4.0, 8.0]
