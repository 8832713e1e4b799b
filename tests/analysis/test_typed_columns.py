"""The records table's columns typed in C (analysis/records/typed_columns.py) are what pandas infers, from
Python values and from Arrow columns alike; the scheduling scenario's columns."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from analysis.records.derive import scenario_columns
from analysis.records.typed_columns import pandas_column, typed_column

VALUE_MIXES = {
    "whole numbers": [3, 1, 2],
    "numbers and None": [3, None, 2],
    "fractions": [0.5, 1.25, float("nan")],
    "whole numbers and fractions": [1, 2.5, None],
    "booleans": [True, False, True],
    "booleans and None": [True, None, False],
    "text": ["b", "a", "b", "c"],
    "text and None": ["b", None, "a"],
    "all None": [None, None],
    "nothing": [],
    "text and numbers": ["a", 1, None],
    "numbers and booleans": [1, True],
    "beyond int64": [2**70, 1],
    "non-ASCII text, sorted by code point": ["é", "e", "Z", "ä"],
}


@pytest.mark.parametrize("values", VALUE_MIXES.values(), ids=VALUE_MIXES.keys())
def test_arrow_typed_column_is_what_pandas_infers(values):
    expected = pd.Series(pandas_column(values), dtype=None)
    pd.testing.assert_series_equal(pd.Series(typed_column(values)), expected, check_exact=True)


ARROW_TYPED = {
    k: v
    for k, v in VALUE_MIXES.items()
    if k not in ("text and numbers", "numbers and booleans", "beyond int64")
}


@pytest.mark.parametrize("values", ARROW_TYPED.values(), ids=ARROW_TYPED.keys())
@pytest.mark.parametrize("dictionary", [False, True])
def test_an_arrow_column_is_typed_as_its_python_values(values, dictionary):
    """The columnar reader hands typed Arrow columns (text dictionary-encoded): typed as the same values
    given as Python objects."""
    array = pa.array(values)
    if dictionary and pa.types.is_string(array.type):
        array = array.dictionary_encode()
    expected = pd.Series(typed_column(list(values)))
    pd.testing.assert_series_equal(pd.Series(typed_column(array)), expected, check_exact=True)
    chunked = pa.chunked_array([array])
    pd.testing.assert_series_equal(pd.Series(typed_column(chunked)), expected, check_exact=True)


@pytest.mark.parametrize("values", VALUE_MIXES.values(), ids=VALUE_MIXES.keys())
def test_pandas_column_is_a_frame_column_with_text_as_categories(values):
    """The reference itself: what pd.DataFrame infers, text and other objects then made categorical."""
    column = pd.DataFrame({"c": list(values)})["c"]
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        column = column.astype("category")
    pd.testing.assert_series_equal(pd.Series(pandas_column(values), name="c"), column, check_exact=True)


@pytest.mark.parametrize("as_array", [False, True])  # counter columns come as object arrays
@pytest.mark.parametrize("values", [["a"] * 4, ("a", "a", "b"), ("a", "a", None), ["x"], ("1", 1)])
def test_one_text_in_every_row_is_typed_as_pandas_types_it(values, as_array):
    expected = pd.Series(pandas_column(values))
    if as_array:
        values = np.array(values, dtype=object)
    pd.testing.assert_series_equal(pd.Series(typed_column(values)), expected, check_exact=True)


def _sched(nice=None, workers=2, policy="other"):
    return {
        "nice": nice,
        "worker_nice": None,
        "worker_policy": None,
        "omp_wait_policy": None,
        "gomp_spincount": None,
        "applied": [[policy, 0, nice or 0]] * workers,
    }


@pytest.mark.parametrize(
    ("extra", "wait", "asked"),
    [
        ({"wait_policy": "auto", "wait_applied": "spin"}, "spin (auto)", "-"),
        ({"wait_policy": "auto", "wait_applied": "sleep"}, "sleep (auto)", "-"),
        ({"wait_policy": "sleep", "wait_applied": "sleep"}, "sleep", "wait_policy=sleep"),
        (
            {"wait_policy": None, "wait_applied": None, "omp_wait_policy": "PASSIVE"},
            "sleep",
            "omp_wait_policy=PASSIVE",
        ),
        ({"omp_wait_policy": "active"}, "spin", "omp_wait_policy=active"),
        ({"omp_wait_policy": "bogus"}, "OMP_WAIT_POLICY=bogus", "omp_wait_policy=bogus"),
        ({}, None, "-"),  # OpenMP's default, or a record from before the field
    ],
)
def test_wait_column_puts_pthreads_and_openmp_side_by_side(extra, wait, asked):
    row = scenario_columns(_sched() | extra, None)
    assert row["wait"] == wait and row["sched_asked"] == asked
