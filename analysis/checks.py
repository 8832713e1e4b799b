"""Validity checks, shown first in the report: a fast wrong answer is not a result.

- checksum: every case against the serial reference of the same kernel, problem and inner loop
  (bit-exact by design); a mismatch, or repetitions that disagree, makes the case invalid;
- placement: records whose workers ran elsewhere than planned (`pin.violations`);
- completeness: planned repetitions (cases.jsonl) without a record, failed (with the reason) or missing;
- noise: cases whose CI of the median is wider than a fraction of the median;
- bimodality: cases whose repetitions fall into two clusters (analysis/stats/bimodality.py);
- plausibility: a speedup above min(workers, cores) is implausible unless its CI's lower bound is
  above it too (then superlinear); the headline speedup is chosen by the CI's lower bound among the
  cases at up to one worker per core and is never an implausible one;
- counters: asked for but unavailable, and why.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.campaign import CASE_COLUMNS, problem_key
from analysis.stats.categorical import case_categories, text_in
from analysis.stats.speedup import key_strings
from sbcore import layout
from sbcore.case_shape import oversubscribed, usable_cores


def case_table(planned: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """Planned cases, plus cases that only appear in records (case properties taken from a record)."""
    planned = planned.copy()
    planned["planned"] = True
    if records.empty:
        return planned
    known = set(planned["case_id"])
    extra = records[~text_in(records["case_id"], known)]
    if extra.empty:
        return planned
    first = extra.astype({"case_id": str}).groupby("case_id", observed=True).first().reset_index()
    rows = pd.DataFrame(
        {
            "case_id": first["case_id"],
            "index": None,
            "node_type": first["node_type"].astype(str),
            "binary": first["kernel"].astype(str)
            + "-"
            + first["lang"].astype(str)
            + "-"
            + first["model"].astype(str),
            "kernel": first["kernel"].astype(str),
            "lang": first["lang"].astype(str),
            "model": first["model"].astype(str),
            "threads": first["threads"].astype(int),
            "ranks": first["ranks"].astype(int),
            "pin": first["pin_strategy"],
            "counter_group": first["counters_group"],
            "reps": 0,
            "schedule": first["schedule"],
            "sync": first["sync"],
            "inner": first["inner"],
            "problem": [problem_key(json.loads(p)) for p in first["params_json"]],
            "params_json": first["params_json"],
            "sampling_rule": None,
            "planned": False,
        }
    )
    return pd.concat([planned, rows[CASE_COLUMNS + ["planned"]]], ignore_index=True)


def checksum_check(summary: pd.DataFrame) -> pd.DataFrame:
    """Adds reference_checksum, checksum_status (ok|mismatch|inconsistent|no reference) and valid."""
    s = summary.copy()
    key = ["kernel", "problem", "inner"]
    # A user's program has no serial twin: its one-worker run holds the reference result (its declared
    # result value, the same in every variant: docs/own-programs.md).
    one_worker_program = (s["lang"] == "program") & (s["workers"] == 1) if "lang" in s else False
    serial = s[((s["model"] == "serial") | one_worker_program) & (s["n_checksums"] == 1)]
    # The most frequent serial checksum is the reference (a broken serial build is then the outlier).
    serial_key = key_strings(serial, key)
    # The mode of each key's checksums (the smallest of equally frequent ones, as Series.mode gives
    # them first), from one count of (key, checksum) pairs instead of a mode per key.
    pairs = pd.DataFrame({"key": serial_key.to_numpy(), "checksum": serial["checksum"].to_numpy()})
    counted = pairs.dropna().groupby(["key", "checksum"], sort=True).size().rename("n").reset_index()
    counted = counted.sort_values(["key", "n"], ascending=[True, False], kind="stable")
    reference = counted.drop_duplicates("key").set_index("key")["checksum"]
    s["reference_checksum"] = key_strings(s, key).map(reference)
    status = pd.Series("ok", index=s.index)
    status[s["reference_checksum"].isna()] = "no reference"
    status[s["reference_checksum"].notna() & (s["checksum"] != s["reference_checksum"])] = "mismatch"
    status[s["n_checksums"] > 1] = "inconsistent"
    s["checksum_status"] = status
    s["valid"] = status.isin(["ok", "no reference"])
    return s


def completeness(cases: pd.DataFrame, records: pd.DataFrame, failed: pd.DataFrame) -> pd.DataFrame:
    """Per planned case: reps planned / done / failed / missing, its state (sbcore.layout.case_progress,
    the rule `status` uses) and the latest failure reason."""
    planned = cases[cases["planned"]][["case_id", "node_type", "binary", "threads", "ranks", "reps"]].copy()
    done_reps = reps_by_case(records)
    open_failures = failed.iloc[0:0]
    if len(failed):
        have = set(zip(records["case_id"].astype(str), records["rep"].astype(int), strict=True))
        open_failures = failed[
            [(c, int(r)) not in have for c, r in zip(failed["case_id"], failed["rep"], strict=True)]
        ].sort_values("file")
    failed_reps = reps_by_case(open_failures)
    # A case sampled to a precision target is judged on its times; a fixed count only on which reps exist.
    timed = {}
    targeted = {
        str(c)
        for c, rule in zip(cases["case_id"], cases["sampling_rule"], strict=True)
        if rule is not None and rule.target_ci
    }
    if targeted and len(records):
        columns = [c for c in ("rep", "wall_s", "invocation", "runner_wall_s") if c in records]
        mine = records[records["case_id"].astype(str).isin(targeted)][["case_id", *columns]]
        timed = {
            str(c): g.set_index("rep").to_dict("index") for c, g in mine.groupby("case_id", observed=True)
        }
    mine = cases[cases["planned"]]
    # Without times the state depends only on the rule and which repetitions are done or failed: one
    # call per distinct combination (a campaign of 20,000 complete cases has a handful), same rule.
    known: dict[tuple, layout.CaseProgress] = {}
    progress = []
    for case_id, reps, rule in zip(mine["case_id"], mine["reps"], mine["sampling_rule"], strict=True):
        case = {"case_id": case_id, "reps": reps}
        if timed.get(case_id):
            progress.append(layout.case_progress(case, timed[case_id], failed_reps.get(case_id, ()), rule))
            continue
        done_set = frozenset(done_reps.get(case_id, ()))
        failed_set = frozenset(failed_reps.get(case_id, ()))
        key = (rule, reps, done_set, failed_set)
        if key not in known:
            known[key] = layout.case_progress(case, dict.fromkeys(done_set, {}), failed_set, rule)
        progress.append(known[key])
    planned["done"] = [p.reps_done for p in progress]
    planned["failed"] = [p.reps_failed for p in progress]
    planned["missing"] = [p.reps_missing for p in progress]
    planned["state"] = [p.state for p in progress]
    if len(open_failures):
        planned["reason"] = planned["case_id"].map(open_failures.groupby("case_id")["reason"].last())
    else:
        planned["reason"] = None
    return planned


def reps_by_case(frame: pd.DataFrame) -> dict[str, set[int]]:
    """case_id -> the repetition numbers present in a records or failed-attempts table."""
    if frame.empty:
        return {}
    # By the case ids' codes: a million records are not turned into a million strings first.
    case = frame["case_id"].astype("category")
    codes = case.cat.codes.to_numpy()
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]  # no case id: belongs to no case
    if not len(order):
        return {}
    codes = codes[order]
    reps = frame["rep"].to_numpy()[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    names = case.cat.categories.astype(str).tolist()  # (a list: indexing a pandas Index 20,000 times is slow)
    return {
        names[codes[first]]: set(chunk.tolist())
        for first, chunk in zip(starts, np.split(reps, starts[1:]), strict=True)
    }


def placement_violations(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty or "pin_violations" not in records:
        return pd.DataFrame(columns=["case_id", "records_with_violations", "records"])
    # By case codes in text order (a million ids as strings take longer than the counting).
    case = case_categories(records["case_id"])
    r = pd.DataFrame({"case_id": case, "violated": records["pin_violations"] > 0, "rep": records["rep"]})
    counts = r.groupby("case_id", observed=True).agg(
        records_with_violations=("violated", "sum"), records=("rep", "size")
    )
    counts.index = counts.index.astype(str)
    return counts[counts["records_with_violations"] > 0].reset_index()


def counter_status(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty or "counters_status" not in records:
        return pd.DataFrame(
            columns=["node_type", "counters_group", "counters_status", "counters_reason", "records"]
        )
    r = records[["node_type", "counters_group", "counters_status", "counters_reason"]].copy(deep=False)
    for column in ("counters_group", "counters_status", "counters_reason"):
        r[column] = _empty_for_missing(r[column])
    out = (
        r.groupby(["node_type", "counters_group", "counters_status", "counters_reason"], observed=True)
        .size()
        .rename("records")
        .reset_index()
    )
    for column in ("counters_group", "counters_status", "counters_reason"):
        out[column] = out[column].astype(str)  # as grouping the object column made it
    return out


def _empty_for_missing(column: pd.Series) -> pd.Series:
    """column.astype(object).fillna("") as a categorical in the order of its values, so that grouping
    a million records sorts a few categories instead of a million objects."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(object).fillna("")
    if "" not in column.cat.categories:
        column = column.cat.add_categories([""])
    column = column.fillna("").cat.remove_unused_categories()
    return column.cat.reorder_categories(sorted(column.cat.categories))


# Speedup plausibility -------------------------------------------------------------------------------
# A case can at most be as many times faster as it has workers running on distinct physical cores:
# usable_cores = min(workers, cores). Above it the number is flagged `implausible` (typically a slow
# baseline: measured while the machine was slower) unless even the CI's lower bound is above it: then it
# is `superlinear`, which is possible (caches) but needs an explanation.
# Within PLAUSIBILITY_TOLERANCE of the bound is noise around perfect scaling (a 1-worker case 1 % faster
# than the serial baseline), not a claim to be flagged.
PLAUSIBILITY = ("ok", "implausible", "superlinear", "unknown")
PLAUSIBILITY_TOLERANCE = 0.02


def plausibility(speedup: pd.DataFrame, cores: dict[str, int | None]) -> pd.DataFrame:
    """Adds usable_cores (sbcore/case_shape.py: min(workers, cores), the most speedup the cores allow)
    and plausibility (ok|implausible|superlinear|unknown)."""
    sp = speedup.copy()
    node_cores = sp["node_type"].map(lambda nt: (cores.get(nt) or (None,))[0]).astype(float)
    bound = usable_cores(sp["workers"].astype(float), node_cores)  # unknown cores: the workers bound it
    sp["usable_cores"] = bound
    verdict = pd.Series("ok", index=sp.index, dtype=object)
    above = sp["speedup"] > bound * (1 + PLAUSIBILITY_TOLERANCE)
    verdict[above] = "implausible"
    verdict[above & (sp["speedup_ci_low"] > bound)] = "superlinear"
    verdict[sp["speedup"].isna()] = "unknown"
    sp["plausibility"] = verdict
    return sp


def attach_case_flags(speedup: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Noise and bimodality of each case and of its baseline, next to the speedup they produce."""
    flags = summary.set_index("case_id")[["noisy", "bimodal"]]
    sp = speedup.copy()
    for column in ("noisy", "bimodal"):
        sp[column] = sp["case_id"].map(flags[column]).fillna(False).astype(bool)
        sp[f"baseline_{column}"] = sp["baseline_case_id"].map(flags[column]).fillna(False).astype(bool)
    return sp


def caveats(row) -> str:
    """The reader's warnings for one speedup row, as a short comma-separated text ('' when none)."""
    notes = []
    workers, bound = row.get("workers", np.nan), row.get("usable_cores", np.nan)
    if oversubscribed(workers, bound):
        notes.append(f"oversubscribed: {workers:g} workers on {bound:g} cores")
    if row["plausibility"] == "implausible":
        notes.append(f"implausible: above {row['usable_cores']:g} cores/workers")
    if row["plausibility"] == "superlinear":
        notes.append("superlinear: needs an explanation")
    if row["plausibility"] == "ok" and row.get("speedup", np.nan) > row.get("usable_cores", np.inf):
        notes.append(
            f"above {row['usable_cores']:g} cores/workers by under {PLAUSIBILITY_TOLERANCE:.0%}: "
            "perfect scaling within noise"
        )
    if row.get("speedup_ci_high", np.nan) < 1:
        notes.append("slower than the baseline")
    elif row.get("speedup_ci_low", np.nan) <= 1 <= row.get("speedup_ci_high", np.nan):
        notes.append("not significantly faster than the baseline")
    for column, what in (("noisy", "noisy"), ("bimodal", "bimodal")):
        if row.get(column):
            notes.append(f"{what} case")
        if row.get(f"baseline_{column}"):
            notes.append(f"{what} baseline")
    return ", ".join(notes)


def untrustworthy(speedup: pd.DataFrame) -> pd.Series:
    """Speedups whose case or baseline is noisy or bimodal: a median of two clusters, or one known only
    loosely, ranks by where its resampling happened to fall."""
    flags = ["noisy", "bimodal", "baseline_noisy", "baseline_bimodal"]
    present = [f for f in flags if f in speedup]
    if not present:
        return pd.Series(False, index=speedup.index)
    return speedup[present].fillna(False).astype(bool).any(axis=1)


def headline(speedup: pd.DataFrame) -> pd.DataFrame:
    """Best speedup per node type and kernel, chosen by the CI's lower bound (never the median).

    Only cases at up to one worker per core are candidates: more workers than cores answer whether
    oversubscription hurts, not which variant scales best on the node, and the pick would depend on the
    noise between the points at and above the cores. A kernel measured only oversubscribed has its
    best chosen among those, and its caveats say "oversubscribed: N workers on C cores".

    Implausible speedups are never a headline, and a superlinear one only when nothing plausible is
    left among the candidates: on compute-bound kernels it is far more often a baseline measured in a
    slower phase of the machine than a cache effect, and the findings list it anyway. Among those left,
    a case whose case or baseline is noisy or bimodal is chosen only when every one is (`untrustworthy`),
    and the caveats count the ones with a higher CI lower bound passed over. A kernel with cases on more
    than one worker has its headline among those: a clean case at one worker never displaces them (the
    headline is about scaling; one worker against the serial kernel measures the variant's overhead), and
    when every one of them is noisy or bimodal the caveats say so. A case without a CI (one
    repetition) ranks after every case with one. `caveats` says when the case or its baseline is noisy
    or bimodal; `implausible_left_out` counts the kernel's implausible speedups passed over."""
    columns = HEADLINE_COLUMNS
    # A case against itself (the one-worker case of --baseline self) is 1 by definition, not a result.
    itself = (
        speedup["case_id"].astype(str) == speedup["baseline_case_id"].astype(str)
        if {"case_id", "baseline_case_id"} <= set(speedup)
        else pd.Series(False, index=speedup.index)
    )
    ok = speedup[speedup["speedup"].notna() & (speedup["model"] != "serial") & ~itself]
    if ok.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (node, kernel), part in ok.groupby(["node_type", "kernel"], sort=True):
        skipped = int((part["plausibility"] == "implausible").sum())
        within = ~oversubscribed(part["workers"], part["usable_cores"])
        candidates = part[within] if within.any() else part
        eligible = candidates[candidates["plausibility"].isin(["ok", "unknown"])]
        superlinear = candidates[candidates["plausibility"] == "superlinear"]
        passed_over = int((part["plausibility"] == "superlinear").sum()) if len(eligible) else 0
        eligible = eligible if len(eligible) else superlinear
        if eligible.empty:
            rows.append({"node_type": node, "kernel": kernel, "implausible_left_out": skipped})
            continue
        parallel = eligible["workers"] > 1
        one_worker_left_out = bool(parallel.any() and not parallel.all())
        eligible = eligible[parallel] if parallel.any() else eligible
        rank = eligible["speedup_ci_low"].fillna(-np.inf)
        trusted = ~untrustworthy(eligible)
        best_any = rank.idxmax()
        best = eligible.loc[rank[trusted].idxmax() if trusted.any() else best_any].to_dict()
        best["implausible_left_out"] = skipped
        best["caveats"] = caveats(best)
        listed = []
        if passed_over:
            listed.append(
                f"{passed_over} superlinear speedup(s) not taken as the headline (see the findings)"
            )
        if one_worker_left_out and not trusted.any():
            listed.append("every case on more than one worker is noisy or bimodal")
        if trusted.any() and not trusted[best_any]:
            ranked_above = int((rank[~trusted] > rank[trusted].max()).sum())
            listed.append(f"{ranked_above} noisy or bimodal case(s) with a higher CI lower bound passed over")
        best["caveats"] = ", ".join([best["caveats"], *listed] if best["caveats"] else listed)
        rows.append(best)
    return pd.DataFrame(rows).reindex(columns=columns)


def no_baseline_text(spec: str) -> str:
    """Why no speedup could be computed with --baseline `spec`, and the choices that would give one."""
    choices = (
        "`--baseline self` (each variant against itself at one worker; needs threads = 1 in the sweep), "
        "`--baseline BINARY` (a binary's best one-worker time) or a serial binary of the kernel in the "
        "sweep (e.g. `mcpi-c-serial`, the default `--baseline serial`)"
    )
    if spec == "serial":
        why = "no valid serial case of the same kernel, problem, language and inner loop on that node type"
    elif spec == "self":
        why = "no variant was measured at one worker"
    else:
        why = f"no valid case of baseline {spec} matches"
    return f"no speedup computed ({why}); choose {choices}"


HEADLINE_COLUMNS = [
    "node_type",
    "kernel",
    "binary",
    "schedule",
    "sync",
    "inner",
    "threads",
    "ranks",
    "workers",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "estimate",  # paired within trials or unpaired (stats/best_speedup.py)
    "estimate_trials",
    "efficiency",
    "efficiency_ci_low",
    "efficiency_ci_high",
    "plausibility",
    "caveats",
    "implausible_left_out",
    "case_id",
    "baseline_case_id",
    "baseline_binary",
    "baseline_median_s",
    "median_s",
]
