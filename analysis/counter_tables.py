"""Counter tables of a campaign, from the per-hardware-thread metric values of records with counters
status ok (analysis/load.py's counters table):

- `counter_cases`: one row per case and likwid metric: the record's value over its hardware threads
  (summed for bandwidths, volumes and MFLOP/s, which add up over threads; averaged otherwise, e.g. CPI),
  then median, min and max over the repetitions; units as likwid names them.
- `counter_siblings`: on SMT node types, per case, core and metric, the values of the sibling hardware
  threads of each core side by side (median over repetitions), to see what sharing a core costs.

Which hardware threads are siblings comes from hosts/<hostname>.json (the topology probed on the node).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def _with_case(records: pd.DataFrame, counters: pd.DataFrame) -> pd.DataFrame:
    if counters.empty or records.empty or "counters_status" not in records:
        return pd.DataFrame()
    ok = records.loc[records["counters_status"] == "ok"]
    binary = ok["kernel"].astype(str) + "-" + ok["lang"].astype(str) + "-" + ok["model"].astype(str)
    ok = ok.assign(binary=binary)[["rep", "hostname", *CASE_KEYS]]
    values = counters[~counters["metric"].astype(str).str.match(SKIPPED)]
    values = values.assign(metric=values["metric"].astype(str), case_id=values["case_id"].astype(str))
    return values.merge(ok.astype({"case_id": str}), on=["case_id", "rep"], how="inner")


def counter_cases(records: pd.DataFrame, counters: pd.DataFrame) -> pd.DataFrame:
    data = _with_case(records, counters)
    if data.empty:
        return pd.DataFrame(columns=CASE_COLUMNS)
    per_record = data.groupby([*CASE_KEYS, "metric", "rep"], observed=True, sort=False)["value"]
    summed = per_record.sum(min_count=1)
    mean = per_record.mean()
    metric = summed.index.get_level_values("metric")
    value = summed.where([aggregation(m) == "sum" for m in metric], mean)
    table = value.groupby(level=[*CASE_KEYS, "metric"], observed=True, sort=False).agg(
        ["count", "median", "min", "max"]
    )
    table = table.rename(columns={"count": "reps"}).reset_index()
    table["unit"] = table["metric"].map(unit_of)
    table["over_hwthreads"] = table["metric"].map(aggregation)
    return table[CASE_COLUMNS].sort_values(
        ["node_type", "counters_group", "binary", "threads"], kind="stable"
    )


def sibling_cores(campaign_dir: Path, hostnames) -> dict[str, dict[int, tuple]]:
    """hostname -> {hwthread: (socket, core)} for hosts whose probed topology has SMT."""
    out = {}
    for host in hostnames:
        try:
            topology = json.loads((Path(campaign_dir) / "hosts" / f"{host}.json").read_text())["topology"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if topology.get("threads_per_core", 1) > 1:
            out[host] = {h["hwthread"]: (h["socket"], h["core"]) for h in topology["hwthreads"]}
    return out


def counter_siblings(records: pd.DataFrame, counters: pd.DataFrame, campaign_dir: Path) -> pd.DataFrame:
    data = _with_case(records, counters)
    if data.empty:
        return pd.DataFrame(columns=SIBLING_COLUMNS)
    cores = sibling_cores(campaign_dir, data["hostname"].dropna().astype(str).unique())
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
    records: pd.DataFrame, counters: pd.DataFrame, campaign_dir: Path
) -> dict[str, pd.DataFrame]:
    """The CSV files of analysis/ this module writes, by name."""
    return {
        "counter_cases.csv": counter_cases(records, counters),
        "counter_siblings.csv": counter_siblings(records, counters, campaign_dir),
    }
