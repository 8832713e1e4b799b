"""Published figures beside measured ones: for an experiment that names `reference = "<seed>:<case>"`,
every factor of config/reference/<seed>.toml's [cases.<case>] is computed from this campaign's records
(median of the base case / median of the point case, with a distribution-free CI) and set beside the
study's.

Factors and shapes are compared, never seconds: the studies ran on other machines, languages and systems.

Every verdict is the equivalence test of analysis/stats/verdicts.py (docs/verdict-rule.md): the
interval (at least 90 % coverage) of measured / study against [1 - margin, 1 + margin], the margin
stated per factor (`margin`, DEFAULT_MARGIN otherwise). When the two cases were measured in paired
trials (`interleave = "family"`), the factor is the median of the per-trial ratios; otherwise the ratio
of the two medians over independent repetitions; either way its interval is the distribution-free one
of analysis/stats/median_interval.py, with its coverage in the row. Only the repetitions the
machine-state probe left undisturbed count, as in the performance gate (analysis/stats/undisturbed.py),
except beside a competing load, which the probe cannot tell from the host (judged_repetitions).

Rows that get no equivalence verdict, each with its reason:
- `not comparable`: the binding states why our figure cannot test the study's (`not_comparable`);
- a competing load whose CPU share is off the share the scenario gives it (`load_share`) by more than
  LOAD_TOLERANCE of it (or LOAD_FLOOR, for a share near 0), either way: `load not applied` (below) or
  `load above its share` (above): the scenario was not the study's;
- `cannot decide at this margin`: the band [study (1 - margin), study (1 + margin)] holds 1, so "no
  effect" agrees as well as the study's effect: an interval inside it cannot tell them apart (a study
  figure of exactly 1, "no effect", keeps its verdict).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.reference_data import REFERENCE_DIR, read_seed
from analysis.stats.median_interval import median_interval, ratio_interval
from analysis.stats.undisturbed import keep, measured_only
from analysis.stats.verdicts import DEFAULT_MARGIN, EQUIVALENCE_CONFIDENCE, equivalence

DEFAULT = "default"  # a kernel option or env variable the case does not set
ALL_CPUS = "all"
CONFIDENCE = EQUIVALENCE_CONFIDENCE
LOAD_TOLERANCE = 0.2  # a load share off its expected share by more than this fraction of it...
LOAD_FLOOR = 0.05  # ...or by more than this (absolute) for a share near 0: not the study's scenario
LOAD_NOT_APPLIED = "load not applied"
LOAD_ABOVE = "load above its share"
NOT_COMPARABLE = "not comparable"
CANNOT_DECIDE = "cannot decide at this margin"
HOST_DISTURBED = "inconclusive (host disturbed)"
TOO_FEW_TRIALS = "inconclusive (too few trials for a 90 % interval)"
NEEDS_PRIVILEGE = "not run: needs root or CAP_SYS_NICE"
JUDGED = ("factor", "value")  # the kinds that get an equivalence verdict (not mapping, not limit)
RESULT_METRICS = ("threads_created", "limit_reached")  # numbers of a record's result a factor may name


def needs_privilege(dims: dict[str, str]) -> bool:
    """A real-time policy or a negative nice value: what an unprivileged user cannot set."""
    policy = dims.get("worker_policy", DEFAULT)
    nices = [dims.get(k, DEFAULT) for k in ("nice", "worker_nice")]
    negative = any(v.lstrip().startswith("-") for n in nices for v in n.split(","))
    return policy.startswith(("fifo", "rr")) or negative


COLUMNS = [
    "reference",
    "label",
    "kind",
    "metric",
    "study",
    "measured",
    "ci_low",
    "ci_high",
    "n",
    "margin",
    "verdict",
    "needed_n",
    "pairing",
    "point_case",
    "base_case",
    "scenario",
    "load_cpu_share",
    "load_share_expected",
    "coverage",
    "reason",
]


@dataclass
class Reference:
    spec: str  # "seed-000:tc05"
    seed: dict  # the [seed] table
    case: dict  # the [cases.<case>] table


def load_reference(spec: str, directory: Path = REFERENCE_DIR) -> Reference:
    seed_id, _, case = spec.partition(":")
    data = read_seed(seed_id, directory)
    return Reference(spec, data.get("seed", {}), data["cases"][case])


def case_dims(case: dict) -> dict[str, str]:
    """The dimensions a reference selects cases by, every value as text."""
    dims = {
        "binary": case["binary"],
        "kernel": case.get("kernel", DEFAULT),
        "model": case["model"],
        "threads": case["threads"],
        "cpus": case.get("cpus", ALL_CPUS),
        "load": (case.get("load") or {}).get("name", "none"),
    }
    dims |= case.get("params") or {}
    dims |= case.get("env") or {}
    return {k: str(v) for k, v in dims.items()}


def selects(dims: dict[str, str], selector: dict) -> bool:
    return all(dims.get(k, DEFAULT) == str(v) for k, v in selector.items())


def same_dims(a: dict[str, str], b: dict[str, str]) -> bool:
    """Equal in every dimension, an absent option counting as "default"."""
    return all(a.get(k, DEFAULT) == b.get(k, DEFAULT) for k in a.keys() | b.keys())


def metric_values(records: pd.DataFrame) -> pd.DataFrame:
    """Measured repetitions with the metrics a reference may name (and the trial, `invocation`)."""
    r = records[~records["warmup"]] if "warmup" in records else records
    out = pd.DataFrame({"case_id": r["case_id"].astype(str), "wall_s": r["wall_s"].astype(float)})
    out["cpu_s"] = (r["cpu_user_s"] + r["cpu_sys_s"]).astype(float)
    out["ctx_switches"] = (r["ctx_voluntary"] + r["ctx_involuntary"]).astype(float)
    out["extra_os_threads"] = (r["os_threads"] - r["threads"]).astype(float)
    for column in ("load_cpu_share", "sched_asked", "sched_applied", "invocation"):
        out[column] = r[column].values if column in r else None
    results = r["result_json"] if "result_json" in r else pd.Series(None, index=r.index)
    for key in RESULT_METRICS:
        out[key] = [json.loads(j).get(key) if isinstance(j, str) else None for j in results]
    return out


def trial_ratios(base: pd.DataFrame, point: pd.DataFrame, metric: str) -> np.ndarray:
    """Per trial both cases were measured in (a record's `invocation`): median base / median point."""
    if base["invocation"].isna().all() or point["invocation"].isna().all():
        return np.array([])
    b = base.groupby("invocation")[metric].median()
    p = point.groupby("invocation")[metric].median()
    both = pd.concat([b.rename("base"), p.rename("point")], axis=1, join="inner")
    return (both["base"] / both["point"]).to_numpy(dtype=float)


def verdict(
    study: float, measured: float, low: float, high: float, margin: float = DEFAULT_MARGIN, n: int = 1
) -> tuple[str, float]:
    """(agrees|differs|inconclusive|cannot decide at this margin|not measured, repetitions that would
    decide) of a measured factor with its interval against the study's value +- margin
    (analysis/stats/verdicts.py's equivalence)."""
    if np.isnan(measured):
        return "not measured", np.nan
    if np.isnan(low):
        return TOO_FEW_TRIALS, np.nan
    verdicts, needed = equivalence([measured / study], [low / study], [high / study], margin, [n])
    if str(verdicts[0]) == "agrees" and cannot_tell_from_no_effect(study, margin):
        return CANNOT_DECIDE, np.nan
    return str(verdicts[0]), float(needed[0])


def cannot_tell_from_no_effect(study: float, margin: float) -> bool:
    """True when a factor of 1 (no effect) lies in the study's band but the study's figure is not 1."""
    return study != 1 and study * (1 - margin) <= 1 <= study * (1 + margin)


def load_check(share: float, expected: float | None) -> str:
    """ "" when the competing load got its expected CPU share (within LOAD_TOLERANCE of it, at least
    LOAD_FLOOR), else LOAD_NOT_APPLIED (it got less) or LOAD_ABOVE (it got more)."""
    if expected is None or pd.isna(expected) or pd.isna(share):
        return ""
    allowed = max(LOAD_TOLERANCE * float(expected), LOAD_FLOOR)
    if share < float(expected) - allowed:
        return LOAD_NOT_APPLIED
    return LOAD_ABOVE if share > float(expected) + allowed else ""


def scenario_text(dims: dict[str, str], selector_keys, environment: dict | None = None) -> str:
    keys = ["binary", *sorted(k for k in selector_keys if k != "binary")]
    text = ", ".join(f"{k}={dims.get(k, DEFAULT)}" for k in dict.fromkeys(keys))
    env = {k: v for k, v in sorted((environment or {}).items())}
    return text + ("; " + " ".join(f"{k}={v}" for k, v in env.items()) if env else "")


def _measured_factor(base, point, metric: str, paired: bool) -> dict:
    ratios = trial_ratios(base, point, metric) if paired else np.array([])
    if len(ratios):
        low, high, coverage = median_interval(ratios, CONFIDENCE)
        return {
            "measured": float(np.median(ratios)),
            "ci_low": low,
            "ci_high": high,
            "n": len(ratios),
            "pairing": "paired",
            "coverage": coverage,
        }
    b, p = base[metric].to_numpy(dtype=float), point[metric].to_numpy(dtype=float)
    low, high, coverage = ratio_interval(b, p, CONFIDENCE)
    return {
        "measured": float(np.median(b) / np.median(p)),
        "ci_low": low,
        "ci_high": high,
        "n": min(len(b), len(p)),
        "pairing": "independent",
        "coverage": coverage,
    }


def _value(point, metric: str) -> dict:
    values = point[metric].to_numpy(dtype=float)
    low, high, coverage = median_interval(values, CONFIDENCE)
    return {"measured": float(np.median(values)), "ci_low": low, "ci_high": high, "n": len(values),
            "coverage": coverage}  # fmt: skip


def limit_row(point, study: float) -> dict:
    """A limit probe (osbench thread-limit): how many threads lived at once, and whether the OS refused
    one (the limit) or the probe stopped at its cap (a lower bound). A limit is a fact of the platform,
    not a figure to be equivalent to: the verdict says which side of the study's it lies."""
    if point is None:
        return {"measured": np.nan, "verdict": "not measured"}
    created = float(point["threads_created"].astype(float).min())
    reached = bool(point["limit_reached"].astype(float).max())
    side = "above" if created > study else "below"
    verdict = (
        f"limit {created:.0f}, {side} the study's"
        if reached
        else f"no limit up to {created:.0f} (the probe's cap), {side} the study's"
    )
    return {"measured": created, "n": len(point), "verdict": verdict}


def compare(
    ref: Reference, cases: list[dict], records: pd.DataFrame, disturbed: frozenset = frozenset()
) -> pd.DataFrame:
    """One row per (factor, matching point case): the study's value beside the measured one. `records`
    are the repetitions to judge on; `disturbed` the cases too disturbed to judge (host disturbed)."""
    values = metric_values(records)
    by_case = {cid: group for cid, group in values.groupby("case_id")}
    dims = {c["case_id"]: case_dims(c) for c in cases}
    family = {c["case_id"]: c.get("family") for c in cases}
    environment = {c["case_id"]: c.get("env") or {} for c in cases}
    rows = []
    for factor in ref.case.get("factors", []):
        kind = factor.get("kind", "factor")
        metric = factor.get("metric", "wall_s")
        point_sel, base_sel = factor.get("point", {}), factor.get("base", {})
        matched = [cid for cid, d in dims.items() if selects(d, point_sel)]
        for cid in matched:
            d = dims[cid]
            row = {
                "reference": ref.spec,
                "label": factor["label"],
                "kind": kind,
                "metric": metric,
                "study": float(factor["study"]) if kind != "mapping" else np.nan,
                "margin": float(factor.get("margin", DEFAULT_MARGIN)) if kind in JUDGED else np.nan,
                "point_case": cid,
                "base_case": None,
                "scenario": scenario_text(d, [*point_sel, *base_sel], environment[cid]),
                "n": 0,
                "load_share_expected": factor.get("load_share", np.nan),
            }
            point = by_case.get(cid)
            if point is not None and point["load_cpu_share"].notna().any():
                row["load_cpu_share"] = float(point["load_cpu_share"].astype(float).median())
            if kind == "mapping":
                if point is not None:
                    row["scenario"] += f"; asked: {point['sched_asked'].iloc[0]}"
                    row["verdict"] = f"applied: {'; '.join(sorted(set(map(str, point['sched_applied']))))}"
                    row["n"] = len(point)
                rows.append(row)
                continue
            if kind == "limit":
                row |= limit_row(point, row["study"])
                rows.append(row)
                continue
            if kind == "value":
                row |= _value(point, metric) if point is not None else {"measured": np.nan}
            else:
                wanted = d | {k: str(v) for k, v in base_sel.items()}
                base_ids = [b for b, bd in dims.items() if same_dims(bd, wanted)]
                base = by_case.get(base_ids[0]) if base_ids else None
                row["base_case"] = base_ids[0] if base_ids else None
                if point is None or base is None:
                    row |= {"measured": np.nan, "ci_low": np.nan, "ci_high": np.nan}
                else:
                    paired = family[cid] is not None and family[cid] == family[row["base_case"]]
                    row |= _measured_factor(base, point, metric, paired)
            row["verdict"], row["needed_n"] = verdict(
                row["study"], row["measured"], row.get("ci_low", np.nan), row.get("ci_high", np.nan),
                row["margin"], max(row["n"], 1),
            )  # fmt: skip
            if point is None and needs_privilege(d):
                row["verdict"] = NEEDS_PRIVILEGE
            elif {cid, row["base_case"]} & disturbed:
                row["verdict"], row["needed_n"] = HOST_DISTURBED, np.nan
            load = load_check(row.get("load_cpu_share", np.nan), factor.get("load_share"))
            if load:
                row["verdict"], row["needed_n"] = load, np.nan
            if factor.get("not_comparable"):
                row["verdict"], row["needed_n"] = NOT_COMPARABLE, np.nan
                row["reason"] = factor["not_comparable"]
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def reference_of(config: dict) -> str | None:
    """The experiment's `reference` from campaign.toml (None when it names none)."""
    value = config.get("reference")
    return value if isinstance(value, str) else None


def campaign_comparison(campaign, records: pd.DataFrame) -> tuple[Reference, pd.DataFrame] | None:
    spec = reference_of(campaign.config)
    if spec is None:
        return None
    ref = load_reference(spec)
    judged, disturbed = judged_repetitions(records)
    return ref, compare(ref, campaign.case_lines, judged, disturbed)


def judged_repetitions(records: pd.DataFrame) -> tuple[pd.DataFrame, frozenset]:
    """(the repetitions the verdicts rest on, the cases too disturbed to judge): the undisturbed ones, as
    in the performance gate (analysis/stats/undisturbed.py), except under a competing load: there the
    probe's slow chains and run-queue wait are what the load does by design, so it cannot tell the load
    from the host, and every repetition counts (the two-sided load check guards those rows instead)."""
    measured = measured_only(records)
    loaded = under_load(measured)
    kept, counts = keep(measured[~loaded], "undisturbed")
    disturbed = frozenset(counts.loc[counts["basis"] == "all", "case_id"].astype(str))
    return pd.concat([kept, measured[loaded]]), disturbed


def under_load(records: pd.DataFrame) -> np.ndarray:
    """Per record: True when it ran beside a competing load ([load.<name>] profile)."""
    if "load_name" not in records:
        return np.zeros(len(records), dtype=bool)
    name = records["load_name"].astype(object)
    return (name.notna() & (name.astype(str) != "none")).to_numpy(dtype=bool)
