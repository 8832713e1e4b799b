"""Counter tables of a campaign, from the per-hardware-thread metric values of records with counters
status ok (analysis/records/load.py's counters table):

- `counter_cases`: one row per case and likwid metric: the record's value over its hardware threads
  (summed for bandwidths, volumes and MFLOP/s, which add up over threads; averaged otherwise, e.g. CPI),
  then median, min and max over the repetitions; units as likwid names them.
- `counter_siblings`: on SMT node types, per case, core and metric, the values of the sibling hardware
  threads of each core side by side (median over repetitions), to see what sharing a core costs.

Which hardware threads are siblings comes from hosts/<hostname>.json (the topology probed on the node).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

CASE_KEYS = ["node_type", "binary", "threads", "pin_strategy", "counters_group", "case_id"]
SUMMED_UNITS = ("MBytes/s", "GBytes", "MFLOP/s", "MUOPS/s", "GFLOP/s")
# likwid metrics that repeat what scalebench measures itself (wall time), left out of the tables.
SKIPPED = re.compile(r"^Runtime ")
CASE_COLUMNS = [*CASE_KEYS, "metric", "unit", "over_hwthreads", "reps", "median", "min", "max"]
SIBLING_COLUMNS = [*CASE_KEYS, "core", "metric", "unit", "hwthreads", "sibling_0", "sibling_1"]


def unit_of(metric: str) -> str:
    match = re.search(r"\[([^\]]+)\]\s*$", metric)
    return match[1] if match else ""


def aggregation(metric: str) -> str:
    return "sum" if unit_of(metric) in SUMMED_UNITS else "mean"


def _ok_records(records: pd.DataFrame) -> pd.DataFrame:
    """Records with counters status ok: (case_id, rep) -> the case keys and the host."""
    if records.empty or "counters_status" not in records:
        return pd.DataFrame()
    # Only the columns needed are copied (the records table has 75).
    needed = ["rep", "hostname", "kernel", "lang", "model", *(k for k in CASE_KEYS if k != "binary")]
    ok = records.loc[records["counters_status"] == "ok", needed]
    return ok.assign(binary=binary_names(ok))[["rep", "hostname", *CASE_KEYS]].astype({"case_id": str})


def binary_names(records: pd.DataFrame) -> pd.Series:
    """kernel-lang-model per record (missing when a part is), joined once per distinct combination
    of categorical columns instead of once per record."""
    parts = [records[c] for c in ("kernel", "lang", "model")]
    if not all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
        return parts[0].astype(str) + "-" + parts[1].astype(str) + "-" + parts[2].astype(str)
    # One integer per record for its three codes (code -1, missing, becomes 0), factorised by hash.
    sizes = [len(part.cat.categories) + 1 for part in parts]
    key = np.zeros(len(records), dtype=np.int64)
    for part, size in zip(parts, sizes, strict=True):
        key = key * size + part.cat.codes.to_numpy(np.int64) + 1
    which, combos = pd.factorize(key)
    names = []
    for combo in combos.tolist():
        codes = []
        for size in reversed(sizes):
            combo, code = divmod(combo, size)
            codes.insert(0, code - 1)
        text = [str(part.cat.categories[c]) for part, c in zip(parts, codes, strict=True)]
        names.append(None if min(codes) < 0 else "-".join(text))
    return pd.Series(np.array(names, dtype=object)[which], index=records.index, dtype="str")


def _kept_metrics(counters: pd.DataFrame) -> np.ndarray:
    """Which counter rows hold a metric the tables show (SKIPPED tested once per distinct metric name)."""
    metric = counters["metric"].astype("category")
    names = metric.cat.categories.astype(str)
    kept = ~np.fromiter((bool(SKIPPED.match(m)) for m in names), dtype=bool, count=len(names))
    codes = metric.cat.codes.to_numpy()
    return (codes >= 0) & kept[np.maximum(codes, 0)]


def _with_case(ok: pd.DataFrame, counters: pd.DataFrame) -> pd.DataFrame:
    """Counter rows (one per record, metric and hardware thread) with their case keys and host
    (`ok`: _ok_records)."""
    if counters.empty or ok.empty:
        return pd.DataFrame()
    values = counters[_kept_metrics(counters)]
    values = values.assign(metric=values["metric"].astype(str), case_id=values["case_id"].astype(str))
    return values.merge(ok, on=["case_id", "rep"], how="inner")


def per_record_values(counters: pd.DataFrame, as_text: bool = True) -> pd.DataFrame:
    """One row per (case_id, rep, metric): sum (NaN when no value) and mean over the hardware threads.

    Tens of millions of counter rows arrive grouped (a record's metric is exploded into consecutive
    rows), so runs of equal keys are reduced with np.add.reduceat first; the (much shorter) runs are
    then grouped by key, which stays correct if a key ever reappears later. case_id and metric come
    as text, or with as_text=False as the categoricals they are grouped by."""
    kept = _kept_metrics(counters)
    if not kept.all():  # (a copy of millions of rows only when some must go)
        counters = counters[kept]
    if counters.empty:
        return pd.DataFrame(columns=["case_id", "rep", "metric", "sum", "n", "mean"])
    case = counters["case_id"].astype("category")
    metric = counters["metric"].astype("category")
    # Codes in their own narrow dtypes: 15 million rows as int64 would be 120 MB per column.
    case_code = case.cat.codes.to_numpy()
    metric_code = metric.cat.codes.to_numpy()
    rep = counters["rep"].to_numpy()
    value = counters["value"].to_numpy(dtype=float)
    change = case_code[1:] != case_code[:-1]
    change |= rep[1:] != rep[:-1]
    change |= metric_code[1:] != metric_code[:-1]
    first = np.concatenate([[0], np.flatnonzero(change) + 1])
    del change
    missing = np.isnan(value)
    if missing.any():
        total = np.add.reduceat(np.where(missing, 0.0, value), first)
        count = np.diff(np.append(first, len(value))) - np.add.reduceat(missing.astype(np.int64), first)
    else:
        total = np.add.reduceat(value, first)
        count = np.diff(np.append(first, len(value)))
    runs = pd.DataFrame(
        {
            "case_id": pd.Categorical.from_codes(case_code[first], case.cat.categories),
            "rep": rep[first].astype(np.int64),
            "metric": pd.Categorical.from_codes(metric_code[first], metric.cat.categories),
            "sum": total,
            "n": count,
        }
    )
    if _reappears(case_code[first], runs["rep"].to_numpy(), metric_code[first], len(metric.cat.categories)):
        runs = runs.groupby(["case_id", "rep", "metric"], observed=True, sort=False)[["sum", "n"]]
        runs = runs.sum().reset_index()
    total = runs["sum"].to_numpy(dtype=float)
    n = runs["n"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        runs["mean"] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    runs["sum"] = np.where(n > 0, total, np.nan)
    return runs.astype({"case_id": str, "metric": str}) if as_text else runs


def _reappears(case_code: np.ndarray, rep: np.ndarray, metric_code: np.ndarray, n_metrics: int) -> bool:
    """Whether a (case, rep, metric) key occurs twice: hashed as one integer per key (a frame's
    duplicated() over three columns of a million runs takes longer)."""
    if len(rep) and (rep.min() < 0 or float(case_code.max() + 1) * (rep.max() + 1) * (n_metrics + 1) > 2**62):
        frame = pd.DataFrame({"case_id": case_code, "rep": rep, "metric": metric_code})
        return bool(frame.duplicated().any())
    key = (
        (case_code.astype(np.int64) * (int(rep.max(initial=0)) + 1) + rep) * (n_metrics + 1) + metric_code + 1
    )
    return len(pd.unique(key)) < len(key)


def counter_cases(
    records: pd.DataFrame, counters: pd.DataFrame, ok: pd.DataFrame | None = None
) -> pd.DataFrame:
    """(`ok`: _ok_records(records), when the caller has it already.)"""
    ok = _ok_records(records) if ok is None else ok
    if counters.empty or ok.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    runs = per_record_values(counters, as_text=False)
    if runs.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    # Both sides keyed by the same case categories: the join and the grouping work on codes, and the
    # case ids and metric names become text once per row of the (small) result.
    categories = runs["case_id"].cat.categories
    ok_case = pd.Categorical(ok["case_id"], categories=categories)
    data = runs.merge(ok.assign(case_id=ok_case), on=["case_id", "rep"], how="inner")
    if data.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    # Each row is one record's metric (per_record_values gives one per case, repetition and metric,
    # the loader one record per case and repetition): its value as it is, no grouping by record.
    if data.duplicated(["case_id", "metric", "rep"]).any():  # (a records table of another origin)
        per_record = data.groupby([*CASE_KEYS, "metric", "rep"], observed=True, sort=False)
        summed = per_record["sum"].sum(min_count=1)
        n = per_record["n"].sum()
        data = summed.rename("sum").to_frame().assign(n=n).reset_index()
    metric = data["metric"].astype("category")
    summed_unit = np.array([aggregation(m) == "sum" for m in metric.cat.categories] + [False])
    is_sum = summed_unit[metric.cat.codes.to_numpy()]  # (code -1, no metric: the last entry)
    mean = data["sum"] / data["n"].where(data["n"] > 0)
    value = data.assign(value=np.where(is_sum, data["sum"], mean))
    table = value.groupby([*CASE_KEYS, "metric"], observed=True, sort=False)["value"].agg(
        ["count", "median", "min", "max"]
    )
    table = table.rename(columns={"count": "reps"}).reset_index().astype({"case_id": str, "metric": str})
    table["unit"] = table["metric"].map(unit_of)
    table["over_hwthreads"] = table["metric"].map(aggregation)
    return table[CASE_COLUMNS].sort_values(
        ["node_type", "counters_group", "binary", "threads"], kind="stable"
    )


def sibling_cores(hosts: dict[str, dict], hostnames) -> dict[str, dict[int, tuple]]:
    """hostname -> {hwthread: (socket, core)} for hosts whose probed topology (`hosts`:
    campaign.read_hosts) has SMT."""
    out = {}
    for host in hostnames:
        try:
            topology = hosts[host]["topology"]
        except (KeyError, TypeError):
            continue
        if topology.get("threads_per_core", 1) > 1:
            out[host] = {h["hwthread"]: (h["socket"], h["core"]) for h in topology["hwthreads"]}
    return out


def counter_siblings(
    records: pd.DataFrame, counters: pd.DataFrame, hosts: dict[str, dict], ok: pd.DataFrame | None = None
) -> pd.DataFrame:
    """(`ok`: _ok_records(records), when the caller has it already.)"""
    ok = _ok_records(records) if ok is None else ok
    if counters.empty or ok.empty:
        return pd.DataFrame(columns=SIBLING_COLUMNS)
    cores = sibling_cores(hosts, ok["hostname"].dropna().astype(str).unique())
    if not cores:  # no SMT host: nothing to pair (and no need to join millions of counter rows)
        return pd.DataFrame(columns=SIBLING_COLUMNS)
    on_smt = ok[ok["hostname"].astype(str).isin(cores)]
    data = _with_case(on_smt, counters[counters["case_id"].astype(str).isin(set(on_smt["case_id"]))])
    if data.empty:
        return pd.DataFrame(columns=SIBLING_COLUMNS)
    data = data[data["hostname"].astype(str).isin(cores)]
    if data.empty:
        return pd.DataFrame(columns=SIBLING_COLUMNS)
    data = data.assign(
        core=[cores[h].get(t) for h, t in zip(data["hostname"].astype(str), data["hwthread"], strict=True)]
    )
    data = data[data["core"].notna()]
    median = data.groupby([*CASE_KEYS, "core", "metric", "hwthread"], observed=True)["value"].median()
    rows = []
    for key, group in median.groupby(level=[*CASE_KEYS, "core", "metric"], observed=True):
        threads = group.index.get_level_values("hwthread")
        if len(threads) < 2:
            continue  # only one sibling of this core measured: nothing to set side by side
        row = dict(zip([*CASE_KEYS, "core", "metric"], key, strict=True))
        row["core"] = f"S{row['core'][0]}C{row['core'][1]}"
        row |= {"unit": unit_of(row["metric"]), "hwthreads": " / ".join(map(str, threads))}
        row |= {"sibling_0": group.iloc[0], "sibling_1": group.iloc[1]}
        rows.append(row)
    return pd.DataFrame(rows, columns=SIBLING_COLUMNS)


def counter_tables(
    records: pd.DataFrame, counters: pd.DataFrame, hosts: dict[str, dict]
) -> dict[str, pd.DataFrame]:
    """The CSV files of analysis/ this module writes, by name."""
    ok = _ok_records(records)
    return {
        "counter_cases.csv": counter_cases(records, counters, ok),
        "counter_siblings.csv": counter_siblings(records, counters, hosts, ok),
    }
