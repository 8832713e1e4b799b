"""Columns of Python values -> the typed pandas columns the records table is made of, inferred in C.

`pd.DataFrame` infers a column's type from its Python values one by one, and the loader then turns text into
categoricals: at a million records that took a third of loading (~200 ns a value on our machines). Arrow
infers the same types in C (~30 ns a value); its result is mapped to exactly the dtype pandas would have
given:
- whole numbers -> int64; numbers with a fraction, or numbers mixed with None -> float64 (None is NaN);
- True/False -> bool;
- text (with or without None) -> a categorical with sorted categories of pandas' string dtype;
- all None -> a categorical of objects with no categories.
A typed Arrow column (the columnar reader's) is mapped the same way, as the same values would be.
Any other mix (text and numbers, True and None, lists, numbers beyond int64) is handed to pandas, whose
inference then decides, as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_ARROW_REFUSES = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def typed_frame(columns: dict[str, Sequence]) -> pd.DataFrame:
    """The records table of these columns (name -> one value per row), every column typed as
    `pandas_column` would type it."""
    return pd.DataFrame({name: typed_column(values) for name, values in columns.items()}, copy=False)


def typed_column(values):
    """One column's values (Python values or a typed Arrow column) as the array pandas would infer from
    the values, text as a categorical: through Arrow where it types them."""
    if not isinstance(values, pa.ChunkedArray | pa.Array):
        try:
            values = pa.array(values)
        except _ARROW_REFUSES:
            return pandas_column(values)
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    kind = array.type
    if not len(array):
        return pandas_column([])
    if array.null_count == len(array):  # all None: no category
        return pd.Categorical.from_codes(
            np.full(len(array), -1, np.int8), categories=pd.Index([], dtype=object)
        )
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return text_categorical(array)
    if pa.types.is_integer(kind) and array.null_count:  # as in pandas: float64 with NaN
        return array.cast(pa.float64()).to_numpy(zero_copy_only=False)
    if pa.types.is_int64(kind) or pa.types.is_float64(kind):
        return array.to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(kind) and not array.null_count:
        return array.to_numpy(zero_copy_only=False)
    return pandas_column(array.to_pylist())


def text_categorical(array: pa.Array) -> pd.Categorical:
    """Text (None allowed) as a categorical whose categories are sorted, as pandas makes them."""
    distinct = pc.unique(array.drop_null())
    distinct = distinct.take(pc.array_sort_indices(distinct))
    codes = pc.fill_null(pc.index_in(array, value_set=distinct), -1).to_numpy()
    return pd.Categorical.from_codes(codes, categories=pd.Index(distinct.to_pylist(), dtype="str"))


def pandas_column(values: Sequence):
    """What pandas infers for these values, text and other objects as a categorical: the reference the
    Arrow path above matches, and the path for mixes Arrow does not type."""
    column = pd.DataFrame({"values": list(values)})["values"]
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        try:
            return column.astype("category").array
        except TypeError:  # a JSON object or array where records usually hold a scalar: as its JSON text
            text = column.map(lambda v: json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v)
            return text.astype("category").array
    return column.to_numpy()
