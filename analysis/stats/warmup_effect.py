"""Whether the warm-up was neutral: per case, the repetition measured right after a process's warm-ups
against the last of them, over the case's processes.

A warm-up is there to take the first-run costs (thread creation, page faults, cold caches) out of the
measured repetitions, so the measured one is expected to be as fast or faster. On some hosts it is not:
on a Zen 5 guest, the Mandelbrot OpenMP kernel with OMP_WAIT_POLICY=passive on 2 pinned threads ran its
repetition after a warm-up 9 % slower than a fresh process's first region (docs/own-programs.md). Its
speedups then describe a process's later regions, not its first; this table shows it from the campaign
itself. Each ratio pairs two times of one process taken a second apart, so the host's slow phases,
which last longer, hit both alike; a disturbance of the measured repetition alone moves one ratio, not
their median. Repetitions flagged disturbed are not left out: the flags judge the probe around the
measured repetition, and a warm-up has none, so leaving them out would compare a filtered side with an
unfiltered one (on the Zen 5 guest above, the flags left out 7 of 12 processes of the slowed cases).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.median_interval import median_interval

CONFIDENCE = 0.95  # of the interval of the median ratio (distribution-free: no interval below 6 processes)
SLOWER = 0.02  # measured slower than its warm-up by more than this (the interval's low end): a finding
KEYS = ["case_id", "kernel", "lang", "model", "schedule", "threads", "ranks"]
COLUMNS = [*KEYS, "processes", "ratio_median", "ratio_ci_low", "ratio_ci_high", "coverage", "slower"]


def warmup_effect(records: pd.DataFrame) -> pd.DataFrame:
    """One row per case with warm-ups before its processes' first measured repetition: how many such
    processes, the median over them of that repetition's time over the last warm-up's, its
    distribution-free 95 % interval and coverage, and `slower`: the interval lies above 1 + SLOWER."""
    needed = {"case_id", "wall_s", "warmup_last_s", "in_process_rep"}
    if records.empty or not needed <= set(records.columns):
        return pd.DataFrame(columns=COLUMNS)
    first = pd.to_numeric(records["in_process_rep"], errors="coerce").fillna(0) == 0
    warm = pd.to_numeric(records["warmup_last_s"], errors="coerce")
    wall = pd.to_numeric(records["wall_s"], errors="coerce")
    rows = records.loc[first & (warm > 0) & (wall > 0), [k for k in KEYS if k in records]]
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = rows.assign(ratio=(wall / warm)[rows.index].to_numpy(), case_id=rows["case_id"].astype(str))
    out = []
    for case_id, group in rows.groupby("case_id", sort=True):
        ratios = group["ratio"].to_numpy()
        low, high, coverage = median_interval(ratios, CONFIDENCE)
        out.append(
            {k: group[k].iloc[0] for k in KEYS if k in group}
            | {
                "case_id": case_id,
                "processes": len(ratios),
                "ratio_median": float(np.median(ratios)),
                "ratio_ci_low": low,
                "ratio_ci_high": high,
                "coverage": coverage,
                "slower": bool(low > 1 + SLOWER),  # False without an interval (NaN)
            }
        )
    return pd.DataFrame(out).reindex(columns=COLUMNS)


def slower_cases(table: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of a warmup_effect table that are a finding (none for no table)."""
    if table is None or not len(table):
        return pd.DataFrame(columns=COLUMNS)
    return table[table["slower"].astype(bool)]
