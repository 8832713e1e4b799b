"""Capacity speedups of conducted trials (`conduct = true`, jobs/conduct.py): the serial baseline ran
on each of the case's CPUs at once just before each of its repetitions, so the baseline's time and the
case's share the host's phase on both CPUs. Per repetition the ratio is the reference time over the
case's time: `ref_static_s` (the slowest CPU's time: a static split waits for its slower CPU) for a
static schedule, `ref_dynamic_s` (the CPUs' summed speed n / sum(1/t): a dynamic split lets the
faster CPU take more) for a `dynamic`, `guided`, `queue` or `cyclic` one. A process's ratio is the
median over its clean repetitions (all of them when none is clean: stats/disturbance.py), one per
trial; the capacity speedup is their median with the bootstrap CI over trials of the paired speedup
(stats/paired.py), written beside it in paired_speedup.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.paired import ratio_summary

DYNAMIC_SCHEDULES = ("dynamic", "guided", "queue", "cyclic")
COLUMNS = [
    "capacity_rule",
    "capacity_trials",
    "capacity_speedup",
    "capacity_ci_low",
    "capacity_ci_high",
    "capacity_halfwidth_rel",
]


def capacity_rule(schedule) -> str:
    """`dynamic` for a schedule that lets the faster CPU take more work, else `static`."""
    kind = str(schedule).split(",", 1)[0].strip().lower() if isinstance(schedule, str) else ""
    return "dynamic" if kind in DYNAMIC_SCHEDULES else "static"


def process_ratios(records: pd.DataFrame, rule: str) -> np.ndarray:
    """One case's records: per process, the median over its clean repetitions of reference / own time."""
    ref = pd.to_numeric(records[f"ref_{rule}_s"], errors="coerce")
    wall = pd.to_numeric(records["wall_s"], errors="coerce")
    ratio = (ref / wall).where((ref > 0) & (wall > 0))
    disturbed = records["disturbed"].fillna(False).astype(bool) if "disturbed" in records else False
    frame = pd.DataFrame(
        {"invocation": records["invocation"], "ratio": ratio, "clean": ratio.where(~disturbed)}
    )
    frame = frame.dropna(subset=["ratio"])
    per = frame.groupby("invocation").agg(clean=("clean", "median"), all=("ratio", "median"))
    return per["clean"].fillna(per["all"]).to_numpy(dtype=float)


def capacity_speedups(paired: pd.DataFrame, records: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """`paired` (stats/paired.py's paired_speedup table) with the capacity columns: empty for a case
    whose records carry no reference time."""
    out = paired.copy()
    for column in COLUMNS:
        out[column] = pd.Series(dtype=object if column == "capacity_rule" else float)
    if out.empty or "ref_static_s" not in records or "ref_dynamic_s" not in records:
        return out
    conducted = records[records["ref_static_s"].notna()]
    by_case = dict(tuple(conducted.groupby("case_id", sort=False)))
    for i, case_id in out["case_id"].items():
        mine = by_case.get(case_id)
        if mine is None:
            continue
        rule = capacity_rule(mine["schedule"].iloc[0] if "schedule" in mine else None)
        ratios = process_ratios(mine, rule)
        summary = ratio_summary(ratios, rng, 2000, "capacity_")
        out.at[i, "capacity_rule"] = rule
        out.at[i, "capacity_trials"] = len(ratios)
        for key, value in summary.items():
            out.at[i, key] = value
    return out
