"""Published figures beside measured ones: for an experiment that names `reference = "<seed>:<case>"`,
every factor of config/reference/<seed>.toml's [cases.<case>] is computed from this campaign's records
(median of the base case / median of the point case, with a bootstrap CI) and set beside the study's.

Factors and shapes are compared, never seconds: the studies ran on other machines, languages and systems.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from analysis.reference_data import REFERENCE_DIR, read_seed

DEFAULT = "default"  # a kernel option or env variable the case does not set
ALL_CPUS = "all"
CONFIDENCE = 0.95
CLOSE = 0.10  # |measured / study - 1| below this reads as "close"
WIDE = 0.5  # a CI wider than this fraction of the measured factor cannot agree or disagree with anything
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
    "verdict",
    "point_case",
    "base_case",
    "scenario",
    "load_cpu_share",
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
    """Measured repetitions with the metrics a reference may name."""
    r = records[~records["warmup"]] if "warmup" in records else records
    out = pd.DataFrame({"case_id": r["case_id"].astype(str), "wall_s": r["wall_s"].astype(float)})
    out["cpu_s"] = (r["cpu_user_s"] + r["cpu_sys_s"]).astype(float)
    out["ctx_switches"] = (r["ctx_voluntary"] + r["ctx_involuntary"]).astype(float)
    out["extra_os_threads"] = (r["os_threads"] - r["threads"]).astype(float)
    for column in ("load_cpu_share", "sched_asked", "sched_applied"):
        out[column] = r[column].values if column in r else None
    return out


def ratio_with_ci(
    base: np.ndarray, point: np.ndarray, rng: np.random.Generator
) -> tuple[float, float, float]:
    """median(base) / median(point) and its percentile-bootstrap CI (two independent samples)."""
    ratio = float(np.median(base) / np.median(point))
    if len(base) < 2 or len(point) < 2:
        return ratio, np.nan, np.nan
    res = stats.bootstrap(
        (base, point),
        lambda b, p, axis: np.median(b, axis=axis) / np.median(p, axis=axis),
        vectorized=True,
        paired=False,
        confidence_level=CONFIDENCE,
        n_resamples=2000,
        method="percentile",
        rng=rng,
    )
    return ratio, float(res.confidence_interval.low), float(res.confidence_interval.high)


def verdict(study: float, measured: float, low: float, high: float) -> str:
    if np.isnan(measured):
        return "not measured"
    if not np.isnan(low) and (high - low) > WIDE * measured:
        return f"inconclusive (CI {low:.2g}-{high:.2g})"
    if not np.isnan(low) and low <= study <= high:
        return "agrees (study within CI)"
    rel = measured / study - 1 if study else np.inf
    if abs(rel) < CLOSE:
        return f"close ({rel:+.0%})"
    return f"measured {'higher' if rel > 0 else 'lower'} ({rel:+.0%})"


def scenario_text(dims: dict[str, str], selector_keys) -> str:
    keys = ["binary", *sorted(k for k in selector_keys if k != "binary")]
    return ", ".join(f"{k}={dims.get(k, DEFAULT)}" for k in dict.fromkeys(keys))


def compare(ref: Reference, cases: list[dict], records: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """One row per (factor, matching point case): the study's value beside the measured one."""
    values = metric_values(records)
    by_case = {cid: group for cid, group in values.groupby("case_id")}
    dims = {c["case_id"]: case_dims(c) for c in cases}
    rng = np.random.default_rng(seed)
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
                "point_case": cid,
                "base_case": None,
                "scenario": scenario_text(d, [*point_sel, *base_sel]),
                "n": 0,
            }
            point = by_case.get(cid)
            if point is not None and "load_cpu_share" in point and point["load_cpu_share"].notna().any():
                row["load_cpu_share"] = float(point["load_cpu_share"].median())
            if kind == "mapping":
                if point is not None:
                    row["scenario"] += f"; asked: {point['sched_asked'].iloc[0]}"
                    row["verdict"] = f"applied: {'; '.join(sorted(set(map(str, point['sched_applied']))))}"
                    row["n"] = len(point)
                rows.append(row)
                continue
            if kind == "value":
                measured = float(point[metric].median()) if point is not None else np.nan
                row |= {"measured": measured, "ci_low": np.nan, "ci_high": np.nan}
                row["n"] = 0 if point is None else len(point)
                row["verdict"] = verdict(row["study"], measured, np.nan, np.nan)
                rows.append(row)
                continue
            wanted = d | {k: str(v) for k, v in base_sel.items()}
            base_ids = [b for b, bd in dims.items() if same_dims(bd, wanted)]
            base = by_case.get(base_ids[0]) if base_ids else None
            row["base_case"] = base_ids[0] if base_ids else None
            if point is None or base is None:
                row |= {"measured": np.nan, "ci_low": np.nan, "ci_high": np.nan, "verdict": "not measured"}
            else:
                ratio, low, high = ratio_with_ci(base[metric].to_numpy(), point[metric].to_numpy(), rng)
                row |= {"measured": ratio, "ci_low": low, "ci_high": high, "n": min(len(base), len(point))}
                row["verdict"] = verdict(row["study"], ratio, low, high)
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def reference_of(config: dict) -> str | None:
    """The experiment's `reference` from campaign.toml (None when it names none)."""
    value = config.get("reference")
    return value if isinstance(value, str) else None


def campaign_comparison(
    campaign, records: pd.DataFrame, seed: int = 0
) -> tuple[Reference, pd.DataFrame] | None:
    spec = reference_of(campaign.config)
    if spec is None:
        return None
    ref = load_reference(spec)
    return ref, compare(ref, campaign.case_lines, records, seed)
