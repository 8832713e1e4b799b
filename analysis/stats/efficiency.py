"""Useful work per cycle per core and how close it comes to the bound of the inner loop that ran.

Per measured record: work / (wall_s x clock_ghz x 1e9 x workers), i.e. Mandelbrot iterations or π
samples per core cycle, with the core clock the kernel measured around its compute region (the higher
of its two readings; records without a clock are left out), and the bound of its (kernel, inner_path)
on the host that ran it, derived from what that host measured (hosts/bounds/<hostname>.json,
sbcore/simd_bounds.py; derivations in docs/simd-bounds.md). Per case: the median of each over its
records and the percentage of that bound; the bound of config/reference/simd_bounds.csv for its core
design (uarch) beside it as a cross-check only. More workers than cores share cores, so per-core figures
are only meaningful up to the core count; such cases are marked `oversubscribed`.
"""

from __future__ import annotations

import pandas as pd

from analysis.reference_data import BOUND_KEYS as KEYS
from sbcore import simd_bounds
from sbcore.case_shape import oversubscribed
from sbcore.case_shape import workers as case_workers

COLUMNS = [
    "case_id",
    "binary",
    "kernel",
    "inner",
    "inner_path",
    "uarch",
    "node_type",
    "hosts",
    "workers",
    "n",
    "clock_ghz",
    "per_cycle_core",
    "bound_per_cycle",
    "pct_of_bound",
    "limited_by",
    "table_bound_per_cycle",
    "oversubscribed",
]
MEASURED = ["hostname", "kernel", "inner_path", "bound_per_cycle", "limited_by"]


def measured_bounds(docs: dict[str, dict]) -> pd.DataFrame:
    """One row per host and (kernel, inner_path) of the hosts' validated bounds documents (MEASURED)."""
    rows = [
        {
            "hostname": host,
            "kernel": b.kernel,
            "inner_path": b.inner_path,
            "bound_per_cycle": b.per_cycle,
            "limited_by": b.limited_by,
        }
        for host, doc in sorted(docs.items())
        for b in simd_bounds.bounds(doc)
    ]
    return pd.DataFrame(rows, columns=MEASURED)


def efficiency(
    summary: pd.DataFrame,
    records: pd.DataFrame,
    cores: dict[str, int | None],
    bounds: pd.DataFrame,
    measured: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per case with a measured clock (COLUMNS). bounds: the reference table (cross-check);
    measured: the hosts' measured bounds (measured_bounds), the bound each record is held against."""
    needed = {"clock_ghz", "inner_path", "uarch", "work", "wall_s"}
    if not len(records) or not needed <= set(records.columns):
        return pd.DataFrame(columns=COLUMNS)
    # Only the columns used here: a copy of every column of a million records would double the memory.
    used = [
        c
        for c in ("case_id", "hostname", "threads", "ranks", "clock_max_ghz", *sorted(needed))
        if c in records
    ]
    rec = records.loc[pd.to_numeric(records["clock_ghz"], errors="coerce") > 0, used]
    if not len(rec):
        return pd.DataFrame(columns=COLUMNS)
    # The higher of the two readings around the region (an interruption only lowers one) where known.
    if "clock_max_ghz" in rec:
        rec["clock_ghz"] = pd.to_numeric(rec["clock_max_ghz"], errors="coerce").fillna(rec["clock_ghz"])
    workers = case_workers(rec["threads"].astype(float), rec["ranks"].astype(float))
    cycles = rec["wall_s"].astype(float) * rec["clock_ghz"].astype(float) * 1e9
    rec["per_cycle_core"] = rec["work"].astype(float) / cycles / workers
    rec = _with_measured_bounds(rec, summary, measured)
    per_case = rec.groupby("case_id", observed=True).agg(
        n=("per_cycle_core", "size"),
        per_cycle_core=("per_cycle_core", "median"),
        clock_ghz=("clock_ghz", "median"),
        inner_path=("inner_path", "first"),
        uarch=("uarch", "first"),
        hosts=("hostname", _joined),
        bound_per_cycle=("bound_per_cycle", "median"),
        limited_by=("limited_by", "first"),
    )
    per_case = per_case.reset_index()
    per_case[["inner_path", "uarch"]] = per_case[["inner_path", "uarch"]].astype(str)
    described = summary[["case_id", "binary", "kernel", "inner", "workers", "node_type"]].astype(
        {"case_id": str, "kernel": str}
    )
    out = described.merge(per_case.astype({"case_id": str}), on="case_id", how="inner")
    table = bounds[[*KEYS, "bound_per_cycle"]].rename(columns={"bound_per_cycle": "table_bound_per_cycle"})
    out = out.merge(table, on=KEYS, how="left")
    out["pct_of_bound"] = 100.0 * out["per_cycle_core"] / out["bound_per_cycle"]
    node_cores = out["node_type"].astype(str).map(lambda nt: cores.get(nt))
    out["oversubscribed"] = oversubscribed(out["workers"], node_cores.astype(float))
    return out[COLUMNS].sort_values(["kernel", "inner_path", "workers", "binary"]).reset_index(drop=True)


def _with_measured_bounds(rec: pd.DataFrame, summary: pd.DataFrame, measured: pd.DataFrame | None):
    """Each record with the bound its host measured for its kernel and inner path (NaN without one)."""
    kernels = summary.astype({"case_id": str}).set_index("case_id")["kernel"].astype(str)
    rec = rec.assign(
        kernel=rec["case_id"].astype(str).map(kernels),
        hostname=rec["hostname"].astype(str) if "hostname" in rec else "",
        inner_path=rec["inner_path"].astype(str),
    )
    if measured is None or not len(measured):
        return rec.assign(bound_per_cycle=float("nan"), limited_by=None)
    return rec.merge(measured[MEASURED], on=["hostname", "kernel", "inner_path"], how="left")


def _joined(hosts: pd.Series) -> str:
    return ",".join(sorted({h for h in hosts.astype(str) if h and h != "nan"}))


LICENCE_DROP_PCT = 2.0  # a clock this far below the reference path's on the same node type is a drop
CLOCK_COLUMNS = ["node_type", "uarch", "inner_path", "clock_ghz", "reference", "below_reference_pct"]


def clock_by_path(table: pd.DataFrame) -> pd.DataFrame:
    """Per node type, core design and inner loop: the median clock its cases ran at (each record's clock
    is read beside code like its own: the AVX-512 path's beside 512-bit multiplies, its clock.method,
    kernels/common/sb_clock.c) and how far below the clock of the scalar loop on the same node type
    and core design, or of the AVX2 loop where no scalar case ran (the reference; None without
    either). An AVX-512 frequency licence shows as the avx512 row's drop (CLOCK_COLUMNS)."""
    if table is None or not len(table):
        return pd.DataFrame(columns=CLOCK_COLUMNS)
    keys = ["node_type", "uarch"]
    clocks = table.groupby([*keys, "inner_path"], observed=True)["clock_ghz"].median().reset_index()
    clocks[keys + ["inner_path"]] = clocks[keys + ["inner_path"]].astype(str)
    by_path = clocks.set_index([*keys, "inner_path"])["clock_ghz"]
    references, below = [], []
    for row in clocks.itertuples():
        ref = next((p for p in ("scalar", "avx2") if (row.node_type, row.uarch, p) in by_path.index), None)
        ref = None if ref == row.inner_path else ref
        references.append(ref)
        ref_ghz = by_path[(row.node_type, row.uarch, ref)] if ref else float("nan")
        below.append(100.0 * (1.0 - row.clock_ghz / ref_ghz))
    return clocks.assign(reference=references, below_reference_pct=below)[CLOCK_COLUMNS]
