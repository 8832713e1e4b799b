"""Useful work per cycle per core and how close it comes to the bound of the inner loop that ran.

Per measured record: work / (wall_s x clock_ghz x 1e9 x workers), i.e. Mandelbrot iterations or π
samples per core cycle, with the core clock the kernel measured around its compute region (the higher
of its two readings; records without a clock are left out). Per case: the median over its records, the
bound for its (kernel, inner_path, uarch) from simd_bounds.csv (derivations in docs/simd-bounds.md) and the
percentage of that bound. More workers than cores share cores, so per-core figures are only
meaningful up to the core count; such cases are marked `oversubscribed`.
"""

from __future__ import annotations

import pandas as pd

from analysis.reference_data import BOUND_KEYS as KEYS
from sbcore.case_shape import oversubscribed
from sbcore.case_shape import workers as case_workers

COLUMNS = [
    "case_id",
    "binary",
    "kernel",
    "inner",
    "inner_path",
    "uarch",
    "workers",
    "n",
    "clock_ghz",
    "per_cycle_core",
    "bound_per_cycle",
    "pct_of_bound",
    "limited_by",
    "oversubscribed",
]


def efficiency(
    summary: pd.DataFrame, records: pd.DataFrame, cores: dict[str, int | None], bounds: pd.DataFrame
) -> pd.DataFrame:
    """One row per case with a measured clock (COLUMNS)."""
    needed = {"clock_ghz", "inner_path", "uarch", "work", "wall_s"}
    if not len(records) or not needed <= set(records.columns):
        return pd.DataFrame(columns=COLUMNS)
    # Only the columns used here: a copy of every column of a million records would double the memory.
    used = [c for c in ("case_id", "threads", "ranks", "clock_max_ghz", *sorted(needed)) if c in records]
    rec = records.loc[pd.to_numeric(records["clock_ghz"], errors="coerce") > 0, used]
    if not len(rec):
        return pd.DataFrame(columns=COLUMNS)
    # The higher of the two readings around the region (an interruption only lowers one) where known.
    if "clock_max_ghz" in rec:
        rec["clock_ghz"] = pd.to_numeric(rec["clock_max_ghz"], errors="coerce").fillna(rec["clock_ghz"])
    workers = case_workers(rec["threads"].astype(float), rec["ranks"].astype(float))
    cycles = rec["wall_s"].astype(float) * rec["clock_ghz"].astype(float) * 1e9
    rec["per_cycle_core"] = rec["work"].astype(float) / cycles / workers
    per_case = rec.groupby("case_id", observed=True).agg(
        n=("per_cycle_core", "size"),
        per_cycle_core=("per_cycle_core", "median"),
        clock_ghz=("clock_ghz", "median"),
        inner_path=("inner_path", "first"),
        uarch=("uarch", "first"),
    )
    per_case = per_case.reset_index()
    per_case[["inner_path", "uarch"]] = per_case[["inner_path", "uarch"]].astype(str)
    described = summary[["case_id", "binary", "kernel", "inner", "workers", "node_type"]].astype(
        {"case_id": str, "kernel": str}
    )
    out = described.merge(per_case.astype({"case_id": str}), on="case_id", how="inner")
    out = out.merge(bounds[[*KEYS, "bound_per_cycle", "limited_by"]], on=KEYS, how="left")
    out["pct_of_bound"] = 100.0 * out["per_cycle_core"] / out["bound_per_cycle"]
    node_cores = out["node_type"].astype(str).map(lambda nt: cores.get(nt))
    out["oversubscribed"] = oversubscribed(out["workers"], node_cores.astype(float))
    return out[COLUMNS].sort_values(["kernel", "inner_path", "workers", "binary"]).reset_index(drop=True)


def clock_by_path(table: pd.DataFrame) -> pd.DataFrame:
    """Per core design and inner loop: the median clock its cases ran at and how far below the scalar
    loop's clock on the same core design (an AVX-512 frequency licence shows here: the AVX-512 path's
    clock is read beside 512-bit code, kernels/common/sb_clock.c). Columns: uarch, inner_path,
    clock_ghz, below_scalar_pct (NaN without scalar cases on that core)."""
    if table is None or not len(table):
        return pd.DataFrame(columns=["uarch", "inner_path", "clock_ghz", "below_scalar_pct"])
    clocks = table.groupby(["uarch", "inner_path"], observed=True)["clock_ghz"].median().reset_index()
    scalar = clocks[clocks["inner_path"] == "scalar"].set_index("uarch")["clock_ghz"]
    clocks["below_scalar_pct"] = 100.0 * (1.0 - clocks["clock_ghz"] / clocks["uarch"].map(scalar))
    return clocks
