"""Validity checks, shown first in the report: a fast wrong answer is not a result.

- checksum: every case against the serial reference of the same kernel, problem and inner loop
  (bit-exact by design); a mismatch, or repetitions that disagree, makes the case invalid;
- placement: records whose workers ran elsewhere than planned (`pin.violations`);
- completeness: planned repetitions (cases.jsonl) without a record, failed (with the reason) or missing;
- noise: cases whose CI of the median is wider than a fraction of the median;
- counters: asked for but unavailable, and why.
"""

from __future__ import annotations

import json

import pandas as pd

from analysis.campaign import CASE_COLUMNS, problem_key
from analysis.speedup import key_strings
from sbcore import layout


def case_table(planned: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """Planned cases, plus cases that only appear in records (case properties taken from a record)."""
    planned = planned.copy()
    planned["planned"] = True
    if records.empty:
        return planned
    known = set(planned["case_id"])
    extra = records[~records["case_id"].astype(str).isin(known)]
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
            "planned": False,
        }
    )
    return pd.concat([planned, rows[CASE_COLUMNS + ["planned"]]], ignore_index=True)


def checksum_check(summary: pd.DataFrame) -> pd.DataFrame:
    """Adds reference_checksum, checksum_status (ok|mismatch|inconsistent|no reference) and valid."""
    s = summary.copy()
    key = ["kernel", "problem", "inner"]
    serial = s[(s["model"] == "serial") & (s["n_checksums"] == 1)]
    # The most frequent serial checksum is the reference (a broken serial build is then the outlier).
    serial_key = key_strings(serial, key)
    reference = serial.groupby(serial_key.to_numpy())["checksum"].agg(lambda c: c.mode().iloc[0])
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
    progress = [
        layout.case_progress(case, done_reps.get(case["case_id"], ()), failed_reps.get(case["case_id"], ()))
        for case in cases[cases["planned"]].to_dict("records")
    ]
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
    pairs = frame[["case_id", "rep"]].astype({"case_id": str}).drop_duplicates()
    return {case_id: set(reps) for case_id, reps in pairs.groupby("case_id")["rep"]}


def placement_violations(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty or "pin_violations" not in records:
        return pd.DataFrame(columns=["case_id", "records_with_violations", "records"])
    r = records.astype({"case_id": str}).assign(violated=records["pin_violations"] > 0)
    counts = r.groupby("case_id", observed=True).agg(
        records_with_violations=("violated", "sum"), records=("rep", "size")
    )
    return counts[counts["records_with_violations"] > 0].reset_index()


def counter_status(records: pd.DataFrame) -> pd.DataFrame:
    if records.empty or "counters_status" not in records:
        return pd.DataFrame(
            columns=["node_type", "counters_group", "counters_status", "counters_reason", "records"]
        )
    r = records.copy()
    for column in ("counters_group", "counters_status", "counters_reason"):
        r[column] = r[column].astype(object).fillna("")
    return (
        r.groupby(["node_type", "counters_group", "counters_status", "counters_reason"], observed=True)
        .size()
        .rename("records")
        .reset_index()
    )
