"""One analysis of one campaign: load -> statistics -> checks -> speedup, models, comparisons -> outputs.

Every stage is a function of the previous stage's tables; this module only wires them and times them.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.atomic import write_text_atomic
from analysis.campaign import Campaign, cores_of, read_campaign
from analysis.comparisons import compare_variants
from analysis.flatten import CASE_DESCRIPTION
from analysis.load import Loaded, load_records, record_file
from analysis.models import fit_models
from analysis.seedref import campaign_comparison
from analysis.speedup import speedups
from analysis.stats import CaseStats, summarize
from analysis.validity import case_table, checksum_check, completeness, counter_status, placement_violations


@dataclass
class Options:
    baseline: str = "serial"
    formats: tuple[str, ...] = ("md", "html", "csv")
    noise_threshold: float = 0.05
    n_resamples: int = 2000
    seed: int = 0
    processes: int | None = None
    use_cache: bool = True


@dataclass
class Analysis:
    campaign: Campaign
    options: Options
    loaded: Loaded
    stats: CaseStats
    summary: pd.DataFrame  # per case: properties, statistics, checksum verdict
    speedup: pd.DataFrame
    models: pd.DataFrame
    comparisons: pd.DataFrame
    completeness: pd.DataFrame
    violations: pd.DataFrame
    counters: pd.DataFrame
    cores: dict[str, tuple[int | None, str]]
    timings: dict[str, float] = field(default_factory=dict)
    reference: tuple | None = None  # (Reference, table) when the experiment names a published reference

    @property
    def out_dir(self) -> Path:
        return self.campaign.path / "analysis"


def analyze(campaign_dir: Path, options: Options) -> Analysis:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    campaign = read_campaign(campaign_dir)
    loaded = load_records(campaign_dir, processes=options.processes, use_cache=options.use_cache)
    timings["load"] = time.perf_counter() - start

    start = time.perf_counter()
    cases = case_table(campaign.cases, loaded.records)
    case_stats = summarize(loaded.records, options.n_resamples, options.seed, options.noise_threshold)
    summary = case_stats.table.reset_index(names="row").merge(
        cases.drop(columns=["reps"]), on="case_id", how="left"
    )
    summary["workers"] = summary["threads"] * summary["ranks"]
    # A case leaving an option at the kernel's default (e.g. no --inner) gets what its records report.
    reported = case_stats.records.groupby("case_id", observed=True)[["schedule", "sync", "inner"]].first()
    for column in ("schedule", "sync", "inner"):
        summary[column] = summary[column].fillna(summary["case_id"].map(reported[column].astype(object)))
    summary = checksum_check(summary)
    rng = np.random.default_rng(options.seed + 1)
    speedup = speedups(summary, case_stats.dist, options.baseline, rng)
    node_types = sorted(set(cases["node_type"].astype(str)))
    cores = {nt: cores_of(nt, campaign, loaded.records) for nt in node_types}
    models = fit_models(summary, case_stats.dist, {nt: c for nt, (c, _) in cores.items()})
    comparisons = compare_variants(summary, case_stats.starts, case_stats.counts, case_stats.values)
    done = completeness(cases, loaded.records, loaded.failed)
    timings["statistics"] = time.perf_counter() - start
    return Analysis(
        campaign=campaign,
        options=options,
        loaded=loaded,
        stats=case_stats,
        summary=summary,
        speedup=speedup,
        models=models,
        comparisons=comparisons,
        completeness=done,
        violations=placement_violations(loaded.records),
        counters=counter_status(loaded.records),
        cores=cores,
        timings=timings,
        reference=campaign_comparison(campaign, loaded.records, options.seed),
    )


SUMMARY_ORDER = [
    "case_id",
    *CASE_DESCRIPTION,
    "threads",
    "ranks",
    "workers",
    "problem",
    "n",
    "median_s",
    "min_s",
    "ci_low_s",
    "ci_high_s",
    "ci_rel_width",
    "cv",
    "n_outliers",
    "n_warmup_dropped",
    "noisy",
    "checksum",
    "reference_checksum",
    "checksum_status",
    "valid",
    "n_resamples",
]


def write_tables(result: Analysis) -> list[Path]:
    out = result.out_dir
    summary = result.summary[SUMMARY_ORDER].sort_values(["node_type", "binary", "workers", "case_id"])
    records = result.stats.records.drop(columns=["warmup"])
    records.insert(0, "file", record_file(records["case_id"], records["rep"]))
    tables = {
        "records.csv": records.sort_values(["case_id", "rep"]),
        "counters.csv": result.loaded.counters,
        "summary.csv": summary,
        "speedup.csv": result.speedup.sort_values(["node_type", "binary", "workers", "case_id"]),
        "models.csv": result.models,
        "comparisons.csv": result.comparisons,
        "unreadable.csv": result.loaded.problems,
        "completeness.csv": result.completeness,
    }
    if result.reference is not None:
        tables["reference.csv"] = result.reference[1]
    written = []
    for name, table in tables.items():
        buffer = io.StringIO()
        table.to_csv(buffer, index=False, float_format="%.6g")
        write_text_atomic(out / name, buffer.getvalue())
        written.append(out / name)
    return written
