"""The `--json` documents of `analyze` and `compare` (sbcore/output_json.py; schema
docs/output.schema.json): everything their text output says, as data. `analyze` also writes its
document as analysis/summary.json."""

from __future__ import annotations

import json

import pandas as pd

from analysis.checks import HEADLINE_COLUMNS
from analysis.fail_on import FAIL_ON_KINDS
from sbcore.atomic import write_atomic
from sbcore.output_json import document, dumps

CASE_FIELDS = [
    "case_id",
    "node_type",
    "binary",
    "kernel",
    "schedule",
    "sync",
    "inner",
    "threads",
    "ranks",
    "pin",
    "counter_group",
    "problem",
    "n",
    "median_s",
    "ci_low_s",
    "ci_high_s",
    "noisy",
    "bimodal",
    "checksum_status",
]


def records(table: pd.DataFrame, fields: list[str]) -> list[dict]:
    present = [f for f in fields if f in table]
    return table[present].astype(object).where(table[present].notna(), None).to_dict("records")


def analyze_document(result, best: pd.DataFrame, counts: dict[str, int], fail_on: tuple[str, ...]) -> dict:
    s, done, sp = result.summary, result.completeness, result.speedup
    states = done["state"].value_counts()
    validity = {
        "checksum_mismatches": counts["checksum"],
        "placement_violations": counts["placement"],
        "failed": int(states.get("failed", 0)),
        "partial": int(states.get("partial", 0)),
        "missing": int(states.get("missing", 0)),
        "unreadable": len(result.loaded.problems),
        "noisy": counts["noisy"],
        "bimodal": int(s["bimodal"].sum()),
        "implausible": counts["implausible"],
        "superlinear": int((sp["plausibility"] == "superlinear").sum()),
    }
    unfinished = done[done["state"] != "done"]
    return document(
        "analyze",
        campaign=str(result.campaign.path),
        cases_with_records=len(s),
        records=len(result.stats.records),
        baseline=result.options.baseline,
        validity=validity,
        fail_on={
            "kinds": list(fail_on),
            "found": {k: counts[k] for k in FAIL_ON_KINDS if counts[k]},
            "failed": any(counts[k] for k in fail_on),
        },
        unfinished_cases=records(unfinished, ["case_id", "node_type", "state", "reason"]),
        unreadable=[f"{file}: {reason}" for file, reason in result.loaded.problems.itertuples(index=False)],
        headlines=records(best[best["binary"].notna()], HEADLINE_COLUMNS) if len(best) else [],
        comparison_precision=result.comparison_precision or None,
        cases=records(s, CASE_FIELDS),
    )


def write_summary_json(result, doc: dict):
    path = result.out_dir / "summary.json"
    write_atomic(path, dumps(doc), make_parents=True)
    return path


def params_of(params_json: pd.Series) -> list[dict]:
    return [json.loads(p) if isinstance(p, str) else {} for p in params_json]


def band_of(band) -> dict:
    return {"low": band.low, "high": band.high}


def compare_document(
    dir_a, dir_b, band, table: pd.DataFrame, unmatched: list[str], warnings: list[str]
) -> dict:
    pairs = records(table.drop(columns=["params_json"]), list(table.columns))
    for pair, params in zip(pairs, params_of(table["params_json"]), strict=True):
        pair["params"] = params
    return document(
        "compare",
        campaign_a=str(dir_a),
        campaign_b=str(dir_b),
        band=band_of(band),
        pairs=pairs,
        unmatched=unmatched,
        warnings=warnings,
    )


def check_document(campaign_dir, against: dict, check) -> dict:
    table = check.table
    cases = records(table.drop(columns=["params_json", "band_low", "band_high"]), list(table.columns))
    for case, params, low, high in zip(
        cases, params_of(table["params_json"]), table["band_low"], table["band_high"], strict=True
    ):
        case["params"] = params
        case["band"] = {"low": low, "high": high}
    return document(
        "check",
        campaign=str(campaign_dir),
        against=against,
        verdicts={k: int(v) for k, v in table["verdict"].value_counts().items()},
        regressed=check.regressed,
        cases=cases,
        unmatched=check.unmatched,
    )


def history_document(metric: str, band, points: pd.DataFrame, not_analysed: list[str]) -> dict:
    """value, ci_low and ci_high are of `metric` (median_s in seconds, or speedup)."""
    columns = [
        "series",
        "campaign",
        "date",
        "commit",
        "node_type",
        "binary",
        "threads",
        "ranks",
        "n",
        "value",
    ]
    columns += ["ci_low", "ci_high", "ratio_to_previous", "ratio_ci_low", "ratio_ci_high", "verdict"]
    return document(
        "history",
        metric=metric,
        band=band_of(band),
        points=records(points, columns),
        not_analysed=not_analysed,
    )
