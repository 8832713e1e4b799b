"""`scalebench history`: one case key across every campaign of a results directory, from each
campaign's analysis tables (never its raw records), ordered by the campaign's date.

The tables are read by TABLE_READERS, the one place that knows their formats: today summary.json
(sbcore/output_json.py) or else summary.csv for median times, speedup.csv for speedups; a new format
is one more reader here. A campaign not yet analysed is listed, not silently left out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.campaign import read_campaign
from sbcore import layout

# What names a case across campaigns (as `compare` matches by content: where it ran, what ran).
SERIES_KEY = [
    "node_type",
    "binary",
    "problem",
    "schedule",
    "sync",
    "inner",
    "pin",
    "counter_group",
    "threads",
    "ranks",
]
METRICS = {  # metric -> (value column, CI columns, higher is better)
    "median_s": ("median_s", "ci_low_s", "ci_high_s", False),
    # over the repetitions the probe did not flag (analysis/stats/undisturbed.py), as `check` judges
    "median_undisturbed_s": ("median_clean_s", "ci_low_clean_s", "ci_high_clean_s", False),
    "speedup": ("speedup", "speedup_ci_low", "speedup_ci_high", True),
}


def _summary_json(path: Path) -> pd.DataFrame | None:
    file = path / "summary.json"
    if not file.is_file():
        return None
    return pd.DataFrame(json.loads(file.read_text()).get("cases", []))


def _csv(name: str):
    def read(path: Path) -> pd.DataFrame | None:
        return pd.read_csv(path / name) if (path / name).is_file() else None

    return read


COUNT_COLUMNS = {"median_undisturbed_s": "n_clean"}  # the repetitions behind a value (default "n")
TABLE_READERS = {
    "median_s": [_summary_json, _csv("summary.csv")],
    "median_undisturbed_s": [_csv("summary.csv")],
    "speedup": [_csv("speedup.csv")],
}


@dataclass
class History:
    points: (
        pd.DataFrame
    )  # one row per (series, campaign): SERIES_KEY, series, campaign, date, commit, value...
    not_analysed: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def campaign_dirs(results: Path) -> list[Path]:
    return sorted(
        p
        for p in Path(results).iterdir()
        if p.is_dir() and not p.is_symlink() and layout.cases_path(p).is_file()
    )


def read_table(campaign_dir: Path, metric: str) -> pd.DataFrame | None:
    for reader in TABLE_READERS[metric]:
        table = reader(layout.analysis_dir(campaign_dir))
        if table is not None:
            return table
    return None


def gather(results: Path, metric: str, filters: dict[str, str]) -> History:
    value, low, high, _ = METRICS[metric]
    count = COUNT_COLUMNS.get(metric, "n")
    frames, not_analysed, unreadable = [], [], []
    for path in campaign_dirs(results):
        try:
            table = read_table(path, metric)
        except (OSError, ValueError, UnicodeDecodeError) as err:
            unreadable.append(f"{path.name}: {err}")
            continue
        if table is None or table.empty:
            not_analysed.append(path.name)
            continue
        missing = [c for c in [*SERIES_KEY, value, low, high, count] if c not in table]
        if missing:
            unreadable.append(f"{path.name}: its {metric} table lacks {', '.join(missing)}")
            continue
        table = table[[*SERIES_KEY, value, low, high, count]].rename(
            columns={value: "value", low: "ci_low", high: "ci_high", count: "n"}
        )
        table = select(table, filters)
        if table.empty:
            continue
        campaign = read_campaign(path)
        created = (campaign.config.get("campaign") or {}).get("created")
        commit = (campaign.manifest.get("git") or {}).get("commit") or ""
        frames.append(table.assign(campaign=path.name, date=str(created or ""), commit=str(commit)[:10]))
    points = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(points):
        text = points[SERIES_KEY].apply(lambda column: column.map(lambda v: "" if pd.isna(v) else str(v)))
        points["series"] = [
            f"{r.node_type} {r.binary} {r.problem} {r.schedule} {r.sync} {r.inner} pin={r.pin} "
            f"counters={r.counter_group or '-'} threads={r.threads} ranks={r.ranks}"
            for r in text.itertuples()
        ]
    return History(points, not_analysed, unreadable)


def select(table: pd.DataFrame, filters: dict[str, str]) -> pd.DataFrame:
    """Rows whose column (or problem parameter) equals each filter's value, compared as text."""
    keep = pd.Series(True, index=table.index)
    for key, wanted in filters.items():
        if key in table:
            keep &= table[key].astype(str) == str(wanted)
        else:  # a problem parameter: samples=1000000
            keep &= table["problem"].map(
                lambda p, k=key: str(json.loads(p).get(k)) if isinstance(p, str) else None
            ) == str(wanted)
    return table[keep]
