"""The compiled CSV writer against Arrow's, the reference: byte for byte the same file."""

import numpy as np
import pandas as pd
import pytest

from analysis.outputs.tables import _native_columns, _write_native, write_csv
from analysis.records import native_library


def _both(frame: pd.DataFrame, tmp_path, monkeypatch) -> tuple[bytes, bytes]:
    assert native_library.load() is not None, "make native"
    assert _native_columns(frame) is not None, "the compiled writer would not take this table"
    write_csv(frame, tmp_path / "native.csv")
    monkeypatch.setenv("SCALEBENCH_NATIVE", "0")
    write_csv(frame, tmp_path / "arrow.csv")
    monkeypatch.delenv("SCALEBENCH_NATIVE")
    return (tmp_path / "native.csv").read_bytes(), (tmp_path / "arrow.csv").read_bytes()


def test_doubles_of_every_magnitude_are_written_as_arrow_writes_them(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    exponents = rng.integers(-320, 308, 200_000)
    mantissas = rng.random(200_000) * 10
    values = mantissas * 10.0 ** exponents.astype(float)
    special = [0.0, -0.0, 1.0, 100.0, 1e9, 1e10, 9999999999.0, 1e-6, 1e-7, 1.5e-6, 0.1, 1 / 3, 5e-324]
    special += [1.7976931348623157e308, -2.5, np.inf, -np.inf, np.nan, 123456789.0, 0.00001, 2**53, 2**60]
    # the doubles on either side of the ends of the decimal range, both signs
    ends = [np.nextafter(end, toward) for end in (1e-6, 1e10) for toward in (0, np.inf)]
    special += ends + [-e for e in ends] + [-1e-6, -1e10]
    rounded = np.round(rng.random(20_000) * 10 ** rng.integers(0, 12, 20_000))  # whole numbers
    scale = 10.0 ** rng.integers(1, 8, 20_000)
    short = np.round(rng.random(20_000) * scale) / scale  # few digits, as measured
    # decimals of 0 to 13 places at every magnitude of the decimal range (the writer's short path),
    # and the doubles next to them (not such decimals: the shortest-digits search)
    places = [
        np.round(rng.random(2_000) * 10.0 ** rng.integers(-6, 11, 2_000), p) * rng.choice([-1, 1], 2_000)
        for p in range(14)
    ]
    decimals = np.concatenate(places)
    beside = np.nextafter(decimals, np.inf)
    parts = [values, special, rounded, short, -values[:1000], decimals, beside]
    frame = pd.DataFrame({"x": np.concatenate(parts)})
    native, arrow = _both(frame, tmp_path, monkeypatch)
    assert native == arrow


def test_every_column_kind(tmp_path, monkeypatch):
    n = 7
    frame = pd.DataFrame(
        {
            "i64": np.arange(n, dtype=np.int64) - 3,
            "i32": np.arange(n, dtype=np.int32) * 1000,
            "i16": np.arange(n, dtype=np.int16),
            "i8": np.arange(n, dtype=np.int8) - 100,
            "flag": np.arange(n) % 2 == 0,
            "text": pd.Categorical(['a"b', "c,d", None, "e\nf", "ünï", "", "x"]),
            "none": pd.Categorical([None] * n, categories=pd.Index([], dtype=object)),
            "str": pd.Series(["p", None, "q", "p", "r", None, 'say "hi"'], dtype="str"),
            # codes of 16 and 32 bits (pandas picks the width by the number of categories)
            "wide": pd.Categorical.from_codes(
                [0, 299, -1, 5, 7, 1, 2], categories=[f"w{i}" for i in range(300)]
            ),
            "wider": pd.Categorical.from_codes(
                [69_999, 0, 1, -1, 3, 4, 5], categories=[f"x{i}" for i in range(70_000)]
            ),
            "f": [1.5, np.nan, -0.0, 1e-7, 3.0, np.inf, 2.5e10],
            'odd "name", too': np.ones(n),
        }
    )
    assert [frame[c].cat.codes.dtype.itemsize for c in ("text", "wide", "wider")] == [1, 2, 4]
    native, arrow = _both(frame, tmp_path, monkeypatch)
    assert native == arrow


STAGED = 8 << 20  # csv_writer.cpp: bytes per O_DIRECT write


@pytest.mark.parametrize("rows", [2 * (STAGED // 8) - 2, 2 * (STAGED // 8) - 1, 2 * (STAGED // 8)])
def test_a_file_of_whole_direct_writes_and_a_tail_past_them(tmp_path, monkeypatch, rows):
    # 8 bytes a line, header included: the file ends a line before, at and a line after the end of
    # its second direct write (tail: one line, none, one line); the same bytes through the page cache.
    frame = pd.DataFrame({"abcde": 1_000_000 + np.arange(rows, dtype=np.int64) % 9_000_000})
    native, arrow = _both(frame, tmp_path, monkeypatch)
    assert len(native) == 8 * (rows + 1)
    assert native == arrow
    _write_native(native_library.load(), frame, _native_columns(frame), tmp_path / "cached.csv", direct=False)
    assert (tmp_path / "cached.csv").read_bytes() == arrow


def test_other_columns_go_to_arrow(tmp_path):
    frame = pd.DataFrame({"mixed": pd.Series([1, "a", None], dtype=object), "x": [1.0, 2.0, 3.0]})
    assert _native_columns(frame) is None
    write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().splitlines()[1:] == ['"1",1', '"a",2', ",3"]


@pytest.mark.parametrize("table", ["records", "counters"])
def test_the_campaign_tables(standard, tmp_path, monkeypatch, table):
    """The two big tables of the standard campaign, as write_tables hands them over."""
    from analysis.records.load import record_file

    _, result = standard
    if table == "records":
        frame = result.stats.records.drop(columns=["warmup"])
        frame.insert(0, "file", record_file(frame))
    else:
        frame = result.loaded.counters
    assert len(frame) > 100
    native, arrow = _both(frame, tmp_path, monkeypatch)
    assert native == arrow
