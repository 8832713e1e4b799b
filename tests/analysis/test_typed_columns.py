"""The records table's columns typed in C (analysis/records/typed_columns.py) are what pandas infers, and the
vectorised counter columns of flatten are what the per-record loop gave."""

import math

import msgspec
import numpy as np
import pandas as pd
import pytest

from analysis.records.decode import Record
from analysis.records.flatten import flatten_records, metric_column, scenario_columns
from analysis.records.joined_parts import count_per_part
from analysis.records.typed_columns import Spread, pandas_column, typed_column, typed_frame

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


@pytest.mark.parametrize("values", VALUE_MIXES.values(), ids=VALUE_MIXES.keys())
def test_pandas_column_is_a_frame_column_with_text_as_categories(values):
    """The reference itself: what pd.DataFrame infers, text and other objects then made categorical."""
    column = pd.DataFrame({"c": list(values)})["c"]
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        column = column.astype("category")
    pd.testing.assert_series_equal(pd.Series(pandas_column(values), name="c"), column, check_exact=True)


def test_a_spread_column_is_typed_like_its_values_row_by_row():
    spread = Spread(np.array([2, 0, 0, 1, 2]), ["x", None, "a"])
    assert list(spread) == ["a", "x", "x", None, "a"]
    assert spread[3] is None and len(spread) == 5
    frame = typed_frame({"spread": spread, "listed": list(spread)})
    pd.testing.assert_series_equal(frame["spread"], frame["listed"], check_names=False)
    numbers = Spread(np.array([1, 1, 0]), [7, None])
    assert math.isnan(typed_column(numbers)[0]) and typed_column(numbers)[2] == 7


def _record(rep: int, metrics: dict) -> Record:
    raw = {
        "schema": "scalebench.run/1",
        "kernel": "mandelbrot",
        "lang": "c",
        "model": "omp",
        "threads": 2,
        "ranks": 1,
        "params": {"width": 8},
        "rep": rep,
        "wall_s": 1.0,
        "checksum": "x",
        "case_id": "c",
        "status": "ok",
        "counters": {"status": "ok", "group": "G", "metrics": metrics},
    }
    return msgspec.json.decode(msgspec.json.encode(raw), type=Record)


def counter_columns_one_by_one(records: list[Record]) -> dict[str, list]:
    """The straightforward loop: record by record, metric by metric, later values overwrite."""
    col: dict[str, list] = {}
    for i, record in enumerate(records):
        for name, metric in record.counters.metrics.items():
            for stat in ("sum", "min", "max", "avg"):
                col.setdefault(f"ctr_{metric_column(name)}_{stat}", [None] * len(records))[i] = getattr(
                    metric, stat
                )
    return col


def test_counter_columns_equal_the_record_by_record_loop():
    records = [
        _record(0, {"CPI": {"sum": 1, "min": 0.5, "max": 0.6, "avg": 0.55}}),
        _record(1, {"L2 miss ratio": {"sum": 2.0, "min": 1, "max": 1, "avg": 1}, "CPI": {"sum": 3}}),
        # two names of one column in one record: the later one counts
        _record(2, {"L2 miss-ratio": {"sum": 7, "avg": 7}, "L2 miss ratio": {"sum": 8, "avg": 9}}),
        _record(3, {}),
    ]
    columns, _ = flatten_records(records)
    expected = counter_columns_one_by_one(records)
    got = {key: list(values) for key, values in columns.items() if key.startswith("ctr_")}
    assert list(got) == list(expected)  # the same columns in the same order
    assert got == expected
    assert got["ctr_l2_miss_ratio_sum"] == [None, 2.0, 8, None]


@pytest.mark.parametrize("byte", [b":", b","])
def test_bytes_counted_at_once_equal_those_counted_part_by_part(byte):
    rng = np.random.default_rng(5)
    parts = [
        bytes(rng.choice(list(b'{}":,0123.ab'), size=int(rng.integers(0, 40))).tolist()) for _ in range(300)
    ]
    parts += [b"", b":", b"::", b'{"0":1}']
    expected = [part.count(byte) for part in parts]
    assert count_per_part(b",".join(parts), parts, byte).tolist() == expected


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


@pytest.mark.parametrize("with_load", [False, True])
def test_scheduling_columns_equal_those_of_each_record(with_load):
    scheds = [_sched(), _sched(), None, _sched(5), _sched(workers=4, policy="fifo"), _sched()]
    loads = [None] * len(scheds)
    if with_load:
        loads[1] = {"profile": {"name": "cpu"}, "cpu_s": 0.5, "compute_cpu_share": 0.4}
    records = []
    for rep, (sched, load) in enumerate(zip(scheds, loads, strict=True)):
        raw = msgspec.json.decode(msgspec.json.encode(_record(rep, {})), type=dict)
        raw |= {"sched": sched, "load": load}
        records.append(msgspec.json.decode(msgspec.json.encode(raw), type=Record))
    columns, _ = flatten_records(records)
    rows = [scenario_columns(s, ld) for s, ld in zip(scheds, loads, strict=True)]
    for key in rows[0]:
        assert list(columns[key]) == [row[key] for row in rows], key


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
