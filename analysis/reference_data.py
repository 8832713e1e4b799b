"""The reference data the analysis reads from the repository, declared once: published studies'
figures (config/reference/seed-*.toml) and the throughput bound of each inner loop on each core design
(config/reference/simd_bounds.csv, derivations in docs/simd-bounds.md): a cross-check beside the bounds
measured on each host, which the records are held against (sbcore/simd_bounds.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd

from sbcore.install import source_root

REFERENCE_DIR = source_root() / "config" / "reference"
SIMD_BOUNDS = REFERENCE_DIR / "simd_bounds.csv"
BOUND_KEYS = ["kernel", "inner_path", "uarch"]  # one bound per (kernel, inner loop, core design)
# The studies whose microbenchmark figures the micro tables set beside ours.
MICRO_REFERENCE_FILES = ("seed-001-osbench.toml", "seed-003-timing.toml", "seed-004-smt.toml")


def read_seed(seed_id: str, directory: Path = REFERENCE_DIR) -> dict:
    """config/reference/<seed_id>.toml: a published study's [seed] and its [cases.<case>] tables."""
    with (directory / f"{seed_id}.toml").open("rb") as handle:
        return tomllib.load(handle)


def micro_references(directory: Path = REFERENCE_DIR) -> list[dict]:
    """The microbenchmark studies' files that are there, each as its TOML tables (figures)."""
    paths = [directory / name for name in MICRO_REFERENCE_FILES]
    return [tomllib.loads(path.read_text()) for path in paths if path.is_file()]


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
