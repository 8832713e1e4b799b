"""Categorical columns of a million records used as what they stand for (text, numbers) without
turning every record's value into a Python object: the work is done once per category and taken by
code."""

from __future__ import annotations

import numpy as np
import pandas as pd


def case_categories(case_id: pd.Series) -> pd.Series:
    """The case ids as a categorical of the ids present, categories in text order: grouping and
    sorting a million records by case then works on integer codes, not on a million strings."""
    if not isinstance(case_id.dtype, pd.CategoricalDtype) or case_id.isna().any():
        return case_id.astype(str).astype("category")
    case_id = case_id.cat.remove_unused_categories()
    categories = case_id.cat.categories
    if categories.dtype != object and not pd.api.types.is_string_dtype(categories.dtype):
        case_id = case_id.cat.rename_categories(categories.astype(str))
    if not case_id.cat.categories.is_monotonic_increasing:
        case_id = case_id.cat.reorder_categories(sorted(case_id.cat.categories))
    return case_id


def numeric(column) -> pd.Series:
    """pd.to_numeric(column, errors="coerce"), for a categorical column parsed once per category (a
    million records hold few distinct values) and taken by code."""
    if not isinstance(getattr(column, "dtype", None), pd.CategoricalDtype):
        return pd.to_numeric(column, errors="coerce")
    categories = pd.to_numeric(pd.Series(column.cat.categories, dtype=object), errors="coerce")
    codes = column.cat.codes.to_numpy()
    values = np.append(categories.to_numpy(dtype=float), np.nan)[codes]  # code -1 (missing): NaN
    return pd.Series(values, index=column.index)


def text_in(column: pd.Series, names) -> np.ndarray:
    """column.astype(str).isin(names), for a categorical column tested once per category."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(str).isin(names).to_numpy()
    hit = np.append(column.cat.categories.astype(str).isin(names), False)  # missing: never in names
    return hit[column.cat.codes.to_numpy()]
