"""One analysis of one campaign: load -> statistics -> checks -> speedup, models, comparisons -> outputs.

Every stage is a function of the previous stage's tables; this module only wires them and times them.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.campaign import Campaign, cores_of, read_campaign, run_budget_of
from analysis.checks import (
    attach_case_flags,
    case_table,
    checksum_check,
    completeness,
    counter_status,
    headline,
    placement_violations,
    plausibility,
)
from analysis.outputs.tables import write_files
from analysis.records.belonging import left_out
from analysis.records.load import RECORD_FILE, Loaded, load_records, record_file
from analysis.reference_data import load_bounds
from analysis.stats.best_speedup import best_speedups
from analysis.stats.bimodality import COLUMNS as BIMODAL_COLUMNS
from analysis.stats.bimodality import bimodality
from analysis.stats.capacity import capacity_speedups
from analysis.stats.comparison_precision import (
    CROSS_KIND,
    comparison_precision,
    speedup_comparisons,
    variant_comparisons,
)
from analysis.stats.counters import counter_tables
from analysis.stats.disturbance import SUMMARY_COLUMNS, clean_summary, flag_disturbed
from analysis.stats.disturbance_effect import disturbance_effect
from analysis.stats.efficiency import efficiency, measured_bounds
from analysis.stats.micro import micro_tables
from analysis.stats.models import fit_models
from analysis.stats.node_types import best_configurations, node_type_table
from analysis.stats.paired import paired_duet_ratios, paired_speedups, paired_variant_ratios
from analysis.stats.paired_cross import paired_cross_ratios
from analysis.stats.per_case import CaseStats, describe, with_median_cis
from analysis.stats.pop_counters import counter_scaling
from analysis.stats.pop_metrics import pop_metrics
from analysis.stats.process_correlation import ProcessCorrelation, within_process_correlation
from analysis.stats.reference import campaign_comparison
from analysis.stats.speedup import speedups
from analysis.stats.variant_tests import compare_variants
from analysis.stats.warmup_effect import warmup_effect
from analysis.stats.wide_comparisons import wide_comparisons, wide_counts
from analysis.variants import CASE_DESCRIPTION
from sbcore import layout
from sbcore.case_shape import workers as case_workers


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
    node_types: pd.DataFrame  # the same case on two node types: ratio, CI, test
    node_types_best: pd.DataFrame  # per node type and kernel: the best configuration and its rates
    counter_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    efficiency: pd.DataFrame = field(default_factory=pd.DataFrame)  # per case: per cycle, % of bound
    micro: dict[str, pd.DataFrame] = field(default_factory=dict)  # microbenchmark tables by file name
    reference: tuple | None = None  # (Reference, table) when the experiment names a published reference
    # per kernel, inner loop and disturbance reason: flagged vs clean repetitions' times within cases
    disturbance_effect: pd.DataFrame = field(default_factory=pd.DataFrame)
    # how alike the repetitions of one kernel process are (the CIs take them for independent)
    process_correlation: ProcessCorrelation | None = None
    warmup_effect: pd.DataFrame = field(default_factory=pd.DataFrame)
    # speedups from trials of a comparison family: per-trial ratios, CI over trials (stats/paired.py)
    paired_speedup: pd.DataFrame = field(default_factory=pd.DataFrame)
    # variant comparisons (schedule or sync at equal workers) paired within trials (stats/paired.py)
    paired_variant_ratio: pd.DataFrame = field(default_factory=pd.DataFrame)
    paired_cross_ratio: pd.DataFrame = field(default_factory=pd.DataFrame)
    # two single-worker cases measured at once, one per CPU: per-duet ratios (stats/paired.py)
    paired_duet_ratio: pd.DataFrame = field(default_factory=pd.DataFrame)
    # per case: the POP efficiency factors with CIs (load balance, synchronisation, computation scaling)
    pop_metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the speedup each node type and kernel leads with (checks.headline): findings, console, precision
    headline: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the acceptance counts of the paired comparisons (stats/comparison_precision.py)
    comparison_precision: dict = field(default_factory=dict)
    # every counted paired comparison wider than the target, and why (stats/wide_comparisons.py)
    wide_comparisons: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def out_dir(self) -> Path:
        return layout.analysis_dir(self.campaign.path)


def only_belonging(loaded: Loaded, campaign: Campaign) -> Loaded:
    """The loaded records without those that do not belong to their case's plan or to this campaign
    (analysis/records/belonging.py), which join the problems with their file and line; their counter
    rows go with them."""
    plans = {str(case["case_id"]): case for case in campaign.case_lines if isinstance(case, dict)}
    name = (campaign.config.get("campaign") or {}).get("name")
    records = loaded.records
    if records.empty:
        return loaded
    lines = records["record_line"] if "record_line" in records else pd.Series(0, index=records.index)
    files = record_file(records).astype(str)
    where = files.where(lines.to_numpy() <= 0, files + ":" + lines.astype(str))
    drop, problems = left_out(records, plans, name if isinstance(name, str) else None, where)
    if not drop.any():
        return loaded
    gone = records[drop]
    counters = loaded.counters
    if not counters.empty and {"case_id", "rep"} <= set(counters.columns):
        dropped = set(zip(gone["case_id"].astype(str), gone["rep"].astype(int), strict=True))
        pairs = zip(counters["case_id"].astype(str), counters["rep"].astype(int), strict=True)
        counters = counters[[pair not in dropped for pair in pairs]].reset_index(drop=True)
    everything = pd.concat([loaded.problems, problems], ignore_index=True).sort_values(
        "file", ignore_index=True
    )
    kept = records[~drop].reset_index(drop=True)
    return dataclasses.replace(loaded, records=kept, counters=counters, problems=everything)


def analyze(campaign_dir: Path, options: Options) -> Analysis:
    """Every table and statistic of the campaign (write_tables writes them)."""
    timings: dict[str, float] = {}
    lap = Laps(timings)
    campaign = read_campaign(campaign_dir)
    loaded = only_belonging(load_records(campaign_dir, options.processes, options.use_cache), campaign)
    timings["load"] = lap("load")  # (with the campaign's other files)

    cases = case_table(campaign.cases, loaded.records)
    described = describe(loaded.records)
    described.records = flag_disturbed(described.records)
    lap("describe, disturbance flags")
    case_stats = with_median_cis(described, options.n_resamples, options.seed, options.noise_threshold)
    lap("summarize (bootstrap)")
    if len(case_stats.table):
        modes = bimodality(case_stats.starts, case_stats.counts, case_stats.values)
        for column in BIMODAL_COLUMNS:
            case_stats.table[column] = modes[column].to_numpy()
    else:
        case_stats.table = case_stats.table.reindex(columns=[*case_stats.table.columns, *BIMODAL_COLUMNS])
    lap("bimodality")
    summary = case_stats.table.reset_index(names="row").merge(
        cases.drop(columns=["reps", "sampling_rule"]), on="case_id", how="left"
    )
    summary["workers"] = case_workers(summary["threads"], summary["ranks"])
    # A case leaving an option at the kernel's default (e.g. no --inner) gets what its records report.
    reported = case_stats.records.groupby("case_id", observed=True)[["schedule", "sync", "inner"]].first()
    for column in ("schedule", "sync", "inner"):
        found = summary["case_id"].map(reported[column]).astype(object)
        summary[column] = summary[column].astype(object).where(summary[column].notna(), found)
    summary = checksum_check(summary)
    lap("case properties, checksums")
    summary = summary.merge(clean_summary(case_stats.records), on="case_id", how="left")
    effect = disturbance_effect(case_stats.records)
    lap("disturbance")
    correlation = within_process_correlation(case_stats.records)
    lap("correlation within processes")
    warmup = warmup_effect(case_stats.records)
    lap("warm-up effect")
    timings["summary"] = lap.since_load()  # part of statistics (the scale benchmark's phases)
    rng = np.random.default_rng(options.seed + 1)
    speedup = speedups(summary, case_stats.dist, options.baseline, rng)
    lap("speedups")
    families = {c["case_id"]: c["family"] for c in campaign.case_lines if c.get("family")}
    paired = paired_speedups(speedup, case_stats.records, families, np.random.default_rng(options.seed + 3))
    paired = capacity_speedups(paired, case_stats.records, np.random.default_rng(options.seed + 7))
    speedup = best_speedups(speedup, paired)
    lap("paired speedups")
    node_types = sorted(set(cases["node_type"].astype(str)))
    cores = {nt: cores_of(nt, campaign, loaded.records) for nt in node_types}
    speedup = attach_case_flags(plausibility(speedup, cores), summary)
    node_cores = {nt: c for nt, (c, _) in cores.items()}
    lap("plausibility")
    models = fit_models(summary, case_stats.dist, node_cores)
    lap("models")
    comparisons = compare_variants(summary, case_stats.starts, case_stats.counts, case_stats.values)
    lap("variant comparisons")
    paired_variant = paired_variant_ratios(
        comparisons, case_stats.records, families, np.random.default_rng(options.seed + 4)
    )
    paired_cross = paired_cross_ratios(
        campaign.case_lines, case_stats.records, np.random.default_rng(options.seed + 6)
    )
    leads = headline(speedup)
    precision = comparison_precision(
        speedup_comparisons(paired, speedup, node_cores),
        variant_comparisons(paired_variant, node_cores),
        variant_comparisons(paired_cross, node_cores, kind=CROSS_KIND),
        leads=leads,
        cores=node_cores,
    )
    wide = wide_comparisons(
        paired, paired_variant, paired_cross, campaign.case_lines, node_cores, run_budget_of(campaign)
    )
    if precision:
        precision["wide"] = wide_counts(wide)
    duets = {c["case_id"]: c["duet"] for c in campaign.case_lines if c.get("duet")}
    paired_duet = paired_duet_ratios(duets, case_stats.records, np.random.default_rng(options.seed + 5))
    lap("paired variant ratios")
    node_types = node_type_table(
        comparisons, summary, case_stats.dist, np.random.default_rng(options.seed + 2)
    )
    node_types_best = best_configurations(summary, speedup, case_stats.records, cores)
    lap("node types")
    done = completeness(cases, loaded.records, loaded.failed)
    lap("completeness")
    timings["statistics"] = lap.since_load()
    stats_end = time.perf_counter()
    violations = placement_violations(loaded.records)
    counters = counter_status(loaded.records)
    lap("placement, counter status")
    tables = counter_tables(loaded.records, loaded.counters, campaign.hosts)
    lap("counter tables")
    result = Analysis(
        campaign=campaign,
        options=options,
        loaded=loaded,
        stats=case_stats,
        summary=summary,
        speedup=speedup,
        models=models,
        comparisons=comparisons,
        completeness=done,
        violations=violations,
        counters=counters,
        cores=cores,
        node_types=node_types,
        node_types_best=node_types_best,
        counter_tables=tables,
        timings=timings,
        efficiency=efficiency(
            summary, case_stats.records, node_cores, load_bounds(), measured_bounds(campaign.simd_bounds)
        ),
        micro=micro_tables(loaded.records, campaign.hosts),
        reference=campaign_comparison(campaign, loaded.records),
        disturbance_effect=effect,
        process_correlation=correlation,
        warmup_effect=warmup,
        paired_speedup=paired,
        paired_variant_ratio=paired_variant,
        paired_cross_ratio=paired_cross,
        paired_duet_ratio=paired_duet,
        pop_metrics=counter_scaling(
            pop_metrics(summary, case_stats.records, options.seed),
            summary,
            loaded.records,
            loaded.counters,
            options.seed,
        ),
        headline=leads,
        comparison_precision=precision,
        wide_comparisons=wide,
    )
    lap("efficiency, micro, reference")
    timings["checks and counter tables"] = time.perf_counter() - stats_end
    return result


class Laps:
    """Wall time of each step of the analysis, into `timings` as "step: <name>", and the CPU time of
    this process (all its threads) as "cpu: <name>": the scale benchmark prints them; on a busy machine
    the CPU time says what the step costs."""

    def __init__(self, timings: dict[str, float]):
        self.timings = timings
        self.start = self.last = time.perf_counter()
        self.last_cpu = time.process_time()
        self.loaded = None

    def __call__(self, name: str) -> float:
        now, cpu = time.perf_counter(), time.process_time()
        seconds = now - self.last
        self.timings[f"step: {name}"] = seconds
        self.timings[f"cpu: {name}"] = cpu - self.last_cpu
        self.last, self.last_cpu = now, cpu
        if self.loaded is None:
            self.loaded = now
        return seconds

    def since_load(self) -> float:
        """Seconds from the end of the first step (loading) until now."""
        return time.perf_counter() - self.loaded


def in_case_rep_order(records: pd.DataFrame) -> bool:
    """Whether the records are sorted by (case_id, rep) already (as a cold load delivers them): then
    no sorted copy of a million rows is made for the records table."""
    rep = records["rep"].to_numpy()
    if len(rep) < 2:
        return True
    cases = records["case_id"]
    if isinstance(cases.dtype, pd.CategoricalDtype) and cases.cat.categories.is_monotonic_increasing:
        case = cases.cat.codes.to_numpy()  # sorted categories: codes sort as the texts (no million strings)
    else:
        case = cases.astype(str).to_numpy(dtype=object)
    same = case[1:] == case[:-1]
    return bool(((case[1:] > case[:-1]) | (same & (rep[1:] > rep[:-1]))).all())


SUMMARY_ORDER = [
    "case_id",
    *CASE_DESCRIPTION,
    "threads",
    "ranks",
    "workers",
    "problem",
    "scaling",
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
    *BIMODAL_COLUMNS,
    "checksum",
    "reference_checksum",
    "checksum_status",
    "valid",
    "n_resamples",
    *SUMMARY_COLUMNS,
]


def records_table(records: pd.DataFrame) -> pd.DataFrame:
    """The records table: the measured records with their flags, each with the file it came from, by case
    and repetition."""
    files = record_file(records)
    records = records.drop(columns=["warmup", RECORD_FILE], errors="ignore")
    records.insert(0, "file", files)
    return records if in_case_rep_order(records) else records.sort_values(["case_id", "rep"])


def summary_csv(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[SUMMARY_ORDER].sort_values(["node_type", "binary", "workers", "case_id"])


def speedup_csv(speedup: pd.DataFrame) -> pd.DataFrame:
    return speedup.sort_values(["node_type", "binary", "workers", "case_id"])


BIG_TABLES = ("records", "counters")  # Parquet; also CSV on request


def write_tables(result: Analysis, big_csv: bool = False) -> list[Path]:
    """Every table into the campaign's analysis directory: the records and counters tables in Parquet
    (and CSV with `big_csv`), the others in CSV."""
    out = result.out_dir
    big = {"records": records_table(result.stats.records), "counters": result.loaded.counters}
    suffixes = (".parquet", ".csv") if big_csv else (".parquet",)
    tables = {
        **{f"{name}{suffix}": big[name] for name in BIG_TABLES for suffix in suffixes},
        "summary.csv": summary_csv(result.summary),
        "speedup.csv": speedup_csv(result.speedup),
        "models.csv": result.models,
        "comparisons.csv": result.comparisons,
        "node_types.csv": result.node_types,
        "node_types_best.csv": result.node_types_best,
        "unreadable.csv": result.loaded.problems,
        "completeness.csv": result.completeness,
        **result.counter_tables,
        "efficiency.csv": result.efficiency,
        "disturbance_effect.csv": result.disturbance_effect,
        "warmup_effect.csv": result.warmup_effect,
        "paired_speedup.csv": result.paired_speedup,
        "paired_variant_ratio.csv": result.paired_variant_ratio,
        "paired_cross_ratio.csv": result.paired_cross_ratio,
        "paired_duet_ratio.csv": result.paired_duet_ratio,
        "wide_comparisons.csv": result.wide_comparisons,
        "pop_metrics.csv": result.pop_metrics,
        **result.micro,
    }
    if result.reference is not None:
        tables["reference.csv"] = result.reference[1]
    write_files({out / name: table for name, table in tables.items()})
    return [out / name for name in tables]
