"""Records that do not belong to their case's plan are left out of every table: a repetition outside
the case's planned ones, a time longer than the case's timeout_s, a record of another campaign. The rule
is sbcore/record_lines.py's belonging_problem (status and resume apply it too); here it is applied to
the records table at once, and each record left out becomes a problem row naming its file and line."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sbcore.record_lines import belonging_problem


def left_out(
    records: pd.DataFrame, plans: dict[str, dict], campaign: str | None, where: pd.Series
) -> tuple[np.ndarray, pd.DataFrame]:
    """(which records do not belong, problem rows {file, reason} for them). `plans`: case id -> its
    planned case (cases.jsonl); `where`: each record's file and line ('raw/<id>/records.jsonl:<n>')."""
    drop = np.zeros(len(records), bool)
    if records.empty or not plans:
        return drop, pd.DataFrame(columns=["file", "reason"])
    case_ids = records["case_id"].astype(str)
    reps = case_ids.map({c: p.get("reps") for c, p in plans.items()})
    timeouts = case_ids.map({c: p.get("timeout_s") for c, p in plans.items()})
    rep = records["rep"].to_numpy(dtype=float)
    wall = pd.to_numeric(records["wall_s"], errors="coerce").to_numpy(dtype=float)
    suspect = (reps.notna() & ((rep < 0) | (rep >= reps.astype(float)))).to_numpy().copy()
    suspect |= (timeouts.notna() & (wall > timeouts.astype(float))).to_numpy()
    if campaign is not None and "campaign" in records:
        theirs = records["campaign"].astype(object)
        suspect |= (theirs.notna() & (theirs != campaign)).to_numpy()
    rows = []
    for i in np.flatnonzero(suspect):
        row = records.iloc[i]
        plan = plans.get(str(row["case_id"]))
        record = {"rep": int(row["rep"]), "wall_s": float(row["wall_s"])}
        if "campaign" in records and isinstance(row["campaign"], str):
            record["campaign"] = row["campaign"]
        why = belonging_problem(record, plan, campaign) if plan is not None else None
        if why is not None:
            drop[i] = True
            rows.append({"file": str(where.iloc[i]), "reason": why})
    return drop, pd.DataFrame(rows, columns=["file", "reason"])
