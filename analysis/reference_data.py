"""The reference data the analysis reads from the repository, declared once: published studies'
figures (config/reference/seed-*.toml) and the throughput bound of each inner loop on each core design
(config/reference/simd_bounds.csv, derivations in docs/simd-bounds.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sbcore.layout import REPO_ROOT

REFERENCE_DIR = REPO_ROOT / "config" / "reference"
SIMD_BOUNDS = REFERENCE_DIR / "simd_bounds.csv"
BOUND_KEYS = ["kernel", "inner_path", "uarch"]  # one bound per (kernel, inner loop, core design)


def load_bounds(path: Path = SIMD_BOUNDS) -> pd.DataFrame:
    """The bounds table; one clear error naming the file when it is malformed."""
    bounds = pd.read_csv(path)
    missing = {*BOUND_KEYS, "bound_per_cycle", "limited_by"} - set(bounds.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    duplicated = bounds[bounds.duplicated(BOUND_KEYS)]
    if len(duplicated):
        raise ValueError(f"{path}: duplicate bound for {tuple(duplicated.iloc[0][BOUND_KEYS])}")
    if not (pd.to_numeric(bounds["bound_per_cycle"], errors="coerce") > 0).all():
        raise ValueError(f"{path}: bound_per_cycle must be a positive number in every row")
    return bounds
