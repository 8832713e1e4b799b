"""Speedup and efficiency against a named baseline, with bootstrap CIs of the ratio, and Karp–Flatt.

Baselines (`--baseline`):
- `serial` (default): the best (lowest median) valid serial case of the same kernel, problem, language,
  inner loop and node type: the honest base case (Hoefler & Belli: speedup against the best serial code);
- `self`: the same variant (binary, all parameters, pinning, counter group, node type) at one worker;
- `<case_id>`: that case, for every case of the same kernel and problem;
- `<binary>`: the best one-worker case of that binary with the same problem and node type.
Besides the chosen baseline, every row also carries the speedup against `self`.
Workers = threads x ranks. Invalid cases (checksum) get no speedup and are never a baseline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.per_case import ratio_ci
from analysis.variants import SCALING_SERIES
from sbcore.errors import UsageError

PROGRAM_LANG = "program"  # the records' language of a user's own program (kernels/programs/)


def baseline_rows(s: pd.DataFrame, spec: str) -> tuple[pd.Series, str]:
    """For every summary row, the row number of its baseline (-1: none) and the baseline's label."""
    ok = s[s["valid"]]
    if spec == "serial":
        # Same inner loop: a SIMD run against the scalar serial loop would mix vectorisation into the
        # parallel speedup (what vectorisation buys is the per-cycle section's question).
        key = ["kernel", "problem", "lang", "inner", "node_type"]
        best = ok[ok["model"] == "serial"].sort_values("median_s").groupby(key, dropna=False).head(1)
        rows = _match(s, best, key)
        # A user's program has no serial twin: its baseline is itself at one worker (docs/own-programs.md).
        program = (s["lang"] == PROGRAM_LANG).to_numpy()
        if program.any():
            rows = rows.where(~program, self_rows(s))
        return rows, "serial"
    if spec == "self":
        return self_rows(s), "self"
    if spec in set(s["case_id"]):
        base = s[s["case_id"] == spec]
        if not base["valid"].iloc[0]:
            raise UsageError(f"--baseline {spec}: that case is invalid ({base['checksum_status'].iloc[0]})")
        return _match(s, base, ["kernel", "problem"]), f"case {spec}"
    if spec in set(s["binary"]):
        key = ["problem", "node_type"]
        best = ok[(ok["binary"] == spec) & (ok["workers"] == 1)].sort_values("median_s").groupby(key).head(1)
        return _match(s, best, key), f"binary {spec} at 1 worker"
    raise UsageError(
        f"--baseline {spec!r}: expected serial, self, a case_id or a binary name present in the campaign"
    )


def self_rows(s: pd.DataFrame) -> pd.Series:
    ok = s[s["valid"] & (s["workers"] == 1)]
    best = ok.sort_values("median_s").groupby(SCALING_SERIES, dropna=False).head(1)
    return _match(s, best, SCALING_SERIES)


def _match(s: pd.DataFrame, base: pd.DataFrame, key: list[str]) -> pd.Series:
    left = key_strings(s, key)
    right = key_strings(base, key)
    lookup = pd.Series(base["row"].to_numpy(), index=right.to_numpy())
    lookup = lookup[~lookup.index.duplicated()]
    return left.map(lookup).fillna(-1).astype(int)


def key_strings(df: pd.DataFrame, columns: list[str]) -> pd.Series:
    """One string per row joining `columns`; missing values (None/NaN) compare equal to each other."""
    parts = [df[c].astype(object).where(df[c].notna(), "<none>").astype(str).tolist() for c in columns]
    # Joined in one pass over plain strings: pandas' string additions, column by column, cost more.
    return pd.Series(["\x1f".join(row) for row in zip(*parts, strict=True)], index=df.index, dtype="str")


def speedups(s: pd.DataFrame, dist: np.ndarray, spec: str, rng: np.random.Generator) -> pd.DataFrame:
    """`s` is the checked summary with a `row` column indexing `dist`."""
    base, label = baseline_rows(s, spec)
    out = s[
        ["case_id", "node_type", "binary", "kernel", "lang", "model", "schedule", "sync", "inner", "pin"]
        + ["threads", "ranks", "workers", "problem", "scaling", "n", "median_s", "valid", "checksum_status"]
    ].copy()
    out.insert(0, "baseline", np.where((s["lang"] == PROGRAM_LANG) & (label == "serial"), "self", label))
    _fill(out, s, dist, base, "", rng)
    _fill(out, s, dist, self_rows(s), "self_", rng)
    out["karp_flatt"] = karp_flatt(out["speedup"], out["workers"].astype(float))
    out["excluded"] = np.where(out["valid"], "", "checksum " + out["checksum_status"].astype(str))
    return out


def karp_flatt(speedup: pd.Series, workers: pd.Series) -> np.ndarray:
    """The Karp–Flatt experimentally determined serial fraction (NaN at one worker)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(workers > 1, (1 / speedup - 1 / workers) / (1 - 1 / workers), np.nan)


def weak_factor(table: pd.DataFrame, prefix: str = "") -> np.ndarray:
    """Per row, what turns a ratio of times into the speedup: 1 under strong scaling; under weak scaling
    (the problem grows with the workers) workers / the baseline's workers, so that the speedup is the
    scaled speedup p x T(1)/T(p) and the efficiency T(1)/T(p), ideal 1 (docs/own-programs.md)."""
    weak = (table["scaling"] == "weak").to_numpy() if "scaling" in table else np.zeros(len(table), bool)
    if not weak.any():
        return np.ones(len(table))
    base = table[f"{prefix}baseline_workers"].astype(float).to_numpy()
    ratio = table["workers"].astype(float).to_numpy() / np.where(base > 0, base, np.nan)
    return np.where(weak, ratio, 1.0)


def _fill(out: pd.DataFrame, s: pd.DataFrame, dist: np.ndarray, base: pd.Series, prefix: str, rng) -> None:
    has = (base.to_numpy() >= 0) & s["valid"].to_numpy()
    base_idx = base.to_numpy()[has]
    rows = s["row"].to_numpy()[has]
    base_table = s.set_index("row")
    out[f"{prefix}baseline_case_id"] = None
    out[f"{prefix}baseline_binary"] = None
    out[f"{prefix}baseline_workers"] = np.nan
    out[f"{prefix}baseline_median_s"] = np.nan
    for column, source in (
        ("baseline_case_id", "case_id"),
        ("baseline_binary", "binary"),
        ("baseline_workers", "workers"),
        ("baseline_median_s", "median_s"),
    ):
        out.loc[has, f"{prefix}{column}"] = base_table.loc[base_idx, source].to_numpy()
    weak = weak_factor(out, prefix)
    out[f"{prefix}speedup"] = weak * out[f"{prefix}baseline_median_s"].astype(float) / out["median_s"]
    same = base_idx == rows  # a case against itself: exactly 1, no uncertainty
    if same.any() and not same.all():
        # Only the other pairs resampled: ratio_ci draws one permutation for all pairs, so theirs do
        # not change (and with no other pair, all are resampled, to draw from the generator alike).
        low, high = np.ones(len(rows)), np.ones(len(rows))
        low[~same], high[~same] = ratio_ci(dist, dist, rng, base_idx[~same], rows[~same])
    else:
        low, high = ratio_ci(dist, dist, rng, base_idx, rows)
    low[same], high[same] = 1.0, 1.0
    out[f"{prefix}speedup_ci_low"] = np.nan
    out[f"{prefix}speedup_ci_high"] = np.nan
    out.loc[has, f"{prefix}speedup_ci_low"] = low * weak[has]
    out.loc[has, f"{prefix}speedup_ci_high"] = high * weak[has]
    workers = out["workers"].astype(float)
    for column in ("", "_ci_low", "_ci_high"):
        out[f"{prefix}efficiency{column}"] = out[f"{prefix}speedup{column}"] / workers
