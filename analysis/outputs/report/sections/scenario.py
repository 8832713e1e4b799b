"""Report section: the scheduling scenario (nice, policies) and the competing load each case ran with."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block


def _distinct(values) -> str:
    """The distinct values of a group, joined; - when none is known."""
    return "; ".join(sorted({str(v) for v in values if pd.notna(v)})) or "-"


def scenario_table(records: pd.DataFrame) -> pd.DataFrame:
    """Per case with a scheduling knob or a competing load: what was asked, what the OS applied, the load
    and the CPU share it got, beside the median time."""
    if "sched_asked" not in records:
        return pd.DataFrame()
    r = records[~records["warmup"]] if "warmup" in records else records
    special = (r["sched_asked"].astype(object) != "-") | r["load_name"].notna()
    if not special.any():
        return pd.DataFrame()
    # The loader keeps text columns as categoricals: plain objects here, to fill and group freely.
    r = r.assign(
        load_name=r["load_name"].astype(object).fillna("none"),
        sched_asked=r["sched_asked"].astype(object),
        load_cpu_share=pd.to_numeric(r["load_cpu_share"].astype(object), errors="coerce"),
        case_id=r["case_id"].astype(object),
    )
    grouped = r.groupby(["case_id", "sched_asked", "load_name"], observed=True, dropna=False)
    columns = {
        "threads": ("threads", "first"),
        "applied": ("sched_applied", _distinct),  # - where nothing was read back (a program)
        "wait": ("wait", _distinct),
        "median_s": ("wall_s", "median"),
        "load_cpu_share": ("load_cpu_share", "median"),
        "n": ("wall_s", "size"),
    }
    if "wait" not in r:  # records flattened before the column existed
        del columns["wait"]
    out = grouped.agg(**columns).reset_index()
    return out.rename(columns={"sched_asked": "asked", "load_name": "load"})


def section(result, plots=()) -> list[Block]:
    """The scheduling scenario of the campaign's cases, when any case set one (else no section)."""
    scenario = scenario_table(result.loaded.records)
    if scenario.empty:
        return []
    return [
        Block(
            "p",
            "What each case asked for (process nice, per-worker nice and policy, OpenMP wait "
            "policy, pthreads --wait-policy), what the OS applied to its workers' threads ([policy, "
            "nice] x workers, read back from the OS), how waiting workers waited (spin or sleep; - = "
            "the OpenMP runtime's default), the competing load and the share of the CPU time its "
            "hogs asked for that they got during the kernel's compute region.",
        ),
        Block("table", scenario),
    ]
