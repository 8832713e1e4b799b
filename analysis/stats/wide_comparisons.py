"""Every paired comparison left wider than its precision target, and why: the account a campaign gives
when its time ran out first (the local runner's `run_budget_s`, jobs/run_deadline.py, or the
comparison target's `comparison_budget_s`), one row each in `wide_comparisons.csv`, the report's
paired section and the counts in `comparison_precision.wide` (summary.json).

The comparisons are those counted by stats/comparison_precision.py (paired speedups, variant ratios,
language and inner-loop ratios, at up to one worker per core; their `paired_together_*` estimate). One
is wide when its 95 % CI half-width exceeds PRECISE or it has no interval. Its reason, the first that
holds:
- `too_few_trials`: fewer trials counted than an interval needs (stats/paired.py's MIN_TRIALS);
- `cut_short`: its two cases shared fewer trials than their own rule's minimum (`min_reps`, or the
  fixed count, per trial): the run budget ended the run first (or the run was interrupted: resume it);
- `budget_ended`: the campaign had a comparison target, its cases had room for more trials
  (`max_reps`) and the trials it would take at its spread (`trials_needed`: its trials x (half-width /
  target)^2, an interval narrowing as one over the root of the trials) fit within that room, so only
  a budget (`comparison_budget_s` or `run_budget_s`) kept it from the target;
- `host_noise`: it got every trial it could, or the trials it would take exceed its cases' room: the
  host's noise, which pairing did not cancel, keeps it wide: the per-trial ratios' spread
  (`paired_together_spread_rel`) with the trials left out of it (across a phase change, slow
  cache-line transfer, members apart) and the disturbed ones kept.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.stats.comparison_precision import CROSS_KIND, PRECISE, VARIANT_KIND
from analysis.stats.paired import MIN_TRIALS
from sbcore.case_shape import oversubscribed
from sbcore.case_shape import workers as case_workers
from sbcore.sampling import trial_bounds

REASONS = ("too_few_trials", "cut_short", "budget_ended", "host_noise")
COLUMNS = [
    "kind",
    "node_type",
    "case_a",
    "case_b",
    "workers",
    "ratio",
    "halfwidth_rel",
    "trials",
    "trials_run",
    "own_trials",
    "max_trials",
    "trials_needed",
    "spread_rel",
    "left_out_across_phase",
    "left_out_slow_transfer",
    "left_out_apart",
    "disturbed_kept",
    "reason",
    "why",
]


def as_rows(paired: pd.DataFrame, kind: str) -> pd.DataFrame:
    """A paired table (speedups: baseline_case_id / case_id; ratios: case_a / case_b) as common rows."""
    if paired is None or paired.empty:
        return pd.DataFrame()
    speedup = kind == "speedup"
    value = "paired_together_speedup" if speedup else "paired_together_ratio_b_over_a"
    out = pd.DataFrame(
        {
            "kind": kind,
            "case_a": paired["baseline_case_id" if speedup else "case_a"].astype(str),
            "case_b": paired["case_id" if speedup else "case_b"].astype(str),
            "ratio": paired[value].astype(float),
            "halfwidth_rel": paired["paired_together_halfwidth_rel"].astype(float),
            "trials": paired["trials_together"].astype(int),
            "spread_rel": paired.get("paired_together_spread_rel", pd.Series(float("nan"), paired.index)),
            "left_out_across_phase": paired["left_out_across_phase"].astype(int),
            "left_out_slow_transfer": paired["left_out_slow_transfer"].astype(int),
            "left_out_apart": paired["left_out_apart"].astype(int),
            "disturbed_kept": paired["left_out_disturbed"].astype(int),
        }
    )
    return out


def wide_comparisons(
    paired: pd.DataFrame,
    variants: pd.DataFrame,
    cross: pd.DataFrame,
    case_lines: list[dict],
    cores: dict[str, int | None],
    run_budget_s: float | None = None,
) -> pd.DataFrame:
    """One row (COLUMNS) per counted paired comparison wider than PRECISE or without an interval, with
    its reason (REASONS) and a sentence saying why; case_lines: cases.jsonl; cores: per node type;
    run_budget_s: the campaign's run budget (campaign.toml), None when it has none."""
    cases = {str(c["case_id"]): c for c in case_lines if isinstance(c, dict) and "case_id" in c}
    frames = [as_rows(paired, "speedup"), as_rows(variants, VARIANT_KIND), as_rows(cross, CROSS_KIND)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    rows = pd.concat(frames, ignore_index=True)
    rows = rows[rows["case_b"].isin(cases)].reset_index(drop=True)  # (a case of the plan: its shape)
    member = [cases[c] for c in rows["case_b"]]
    rows["node_type"] = [str(c["node_type"]) for c in member]
    threads = pd.Series([c.get("threads", 1) for c in member], dtype=float)
    ranks = pd.Series([c.get("ranks", 1) for c in member], dtype=float)
    rows["workers"] = case_workers(threads, ranks).astype(float)
    rows["cores"] = rows["node_type"].map(lambda nt: cores.get(nt)).astype(float)
    counted = ~oversubscribed(rows["workers"], rows["cores"])
    wide = counted & ~(rows["halfwidth_rel"] <= PRECISE)
    rows = rows[wide].reset_index(drop=True)
    target = any(c.get("comparison") for c in cases.values())
    own, most = [], []
    for a, b in zip(rows["case_a"], rows["case_b"], strict=True):
        limits = [trial_bounds(cases[c]) for c in (a, b) if c in cases] or [(0, 0)]
        own.append(min(lo for lo, _ in limits))
        most.append(min(hi for _, hi in limits))
    rows["own_trials"], rows["max_trials"] = own, most
    rows["trials_run"] = rows[
        ["trials", "left_out_across_phase", "left_out_slow_transfer", "left_out_apart"]
    ].sum(axis=1)
    hw = rows["halfwidth_rel"].astype(float)
    needed = (rows["trials"] * (hw / PRECISE) ** 2).apply(lambda x: math.ceil(x) if x == x else None)
    rows["trials_needed"] = needed.astype("Int64")
    reasons = [
        reason(r, target, budgets_named(cases.get(r["case_b"], {}), run_budget_s), run_budget_s)
        for r in rows.to_dict("records")
    ]
    rows["reason"] = [r for r, _ in reasons]
    rows["why"] = [w for _, w in reasons]
    return rows[COLUMNS].sort_values(["reason", "kind", "case_b"], ignore_index=True)


def budgets_named(case: dict, run_budget_s: float | None) -> str:
    """The budgets that could have ended a case's trials, with their values, for a sentence: the
    comparison target's (its family's extra trials) and the run's. Which one did is in the runner's log
    (jobs/run_deadline.py's line), not in the records."""
    comparison = case.get("comparison") if isinstance(case.get("comparison"), dict) else {}
    named = []
    if comparison.get("budget_s") is not None:
        named.append(f"the comparison target's (comparison_budget_s = {comparison['budget_s']:g} s)")
    if run_budget_s is not None:
        named.append(f"the run's (run_budget_s = {run_budget_s:g} s)")
    if len(named) == 2:
        return f"{named[0]} or {named[1]}; the runner's log says which"
    return named[0] if named else "no budget (the run was interrupted)"


def reason(
    row: dict, target: bool, budgets: str = "no budget named", run_budget_s: float | None = None
) -> tuple[str, str]:
    """(reason, a sentence) for one wide comparison (see the module's docstring); budgets: the budgets
    in force, named (budgets_named); run_budget_s: the run's, the only one that ends a run."""
    n, run = row["trials"], row["trials_run"]
    if n < MIN_TRIALS:
        return "too_few_trials", f"{n} trials counted ({run} run): an interval needs {MIN_TRIALS}"
    if run < row["own_trials"]:
        return "cut_short", (
            f"cut short: {run} of its {row['own_trials']} trials ran ("
            + (
                f"the run budget, run_budget_s = {run_budget_s:g} s, ended the run, or it was interrupted)"
                if run_budget_s is not None
                else "the run was interrupted or its processes failed: resume it)"
            )
        )
    spread = row["spread_rel"]
    spread_text = f"±{100 * spread:.1f} %" if spread == spread else "unknown"
    needed = row["trials_needed"]
    if target and run < row["max_trials"] and needed <= row["max_trials"]:
        return "budget_ended", (
            f"a budget ended it after {run} trials ({budgets}; room for {row['max_trials']}; ~{needed} "
            f"would reach ±{100 * PRECISE:g} % at its spread {spread_text})"
        )
    left = (
        f"left out {row['left_out_across_phase']} across a phase change, {row['left_out_slow_transfer']} in "
        f"a slow cache-line transfer, {row['left_out_apart']} apart; {row['disturbed_kept']} disturbed kept"
    )
    more = f"; ~{needed} trials would reach ±{100 * PRECISE:g} %, room for {row['max_trials']}"
    return "host_noise", f"host noise: per-trial ratios spread {spread_text} over {n} trials ({left}{more})"


def wide_counts(table: pd.DataFrame) -> dict[str, int]:
    """The wide comparisons per reason (every reason, 0 when none): summary.json's
    comparison_precision.wide."""
    counts = table["reason"].value_counts() if len(table) else pd.Series(dtype=int)
    return {r: int(counts.get(r, 0)) for r in REASONS}
