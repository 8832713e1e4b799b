"""Paired speedups from trials: the baseline's time over the case's time within one trial of their
comparison family (jobs/families.py: members measured back to back, seconds apart), a median over
trials and a bootstrap CI over trials. A slow phase of the host that lasts longer than a trial slows
both members of it alike, so it cancels in the ratio instead of widening the interval.

A trial is a record's `trial` (its `invocation` in campaigns without it); one kernel process's
repetitions count as one time: the median of those not flagged as disturbed (stats/disturbance.py).
A baseline that runs several times in a trial (`baseline_every`, jobs/families.py) is taken at the
other case's place: its run nearest to it in the trial (sbcore/trial_pairing.py).
A trial is left out when a member has no such repetition, or when the two processes started more than
MAX_APART_S apart (measured in different host phases: a resumed campaign, or Slurm array tasks);
the table says how many of each, and gives the paired ratio over every trial measured together
(disturbed ones too: `paired_together_*`) separately, for a host disturbed all the time. A phase
that slows only one member cannot cancel, though: a slow cache-line transfer between the case's CPUs
(stats/disturbance.py) slows contended locks 2-3x while a single-threaded baseline beside it runs
as before, so trials with a member measured in it are left out of both (`left_out_slow_transfer`). Nor
does a slow phase of the host that began or ended between the two processes of a trial: a ratio far
outside the spread of the comparison's others was taken across such a change (sbcore/slow_phase.py),
and is left out of both estimates (`left_out_across_phase`). Cases
without a family, or whose baseline is in another family, get no paired speedup (the unpaired one in
speedup.csv stays, as do all summaries of absolute times). C against Fortran and scalar against SIMD,
paired within the trials their families share: stats/paired_cross.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.variant_tests import COLUMNS as VARIANT_TEST_COLUMNS
from sbcore.slow_phase import across_phase_flags
from sbcore.trial_pairing import Run, times_together

CONFIDENCE = 0.95
MAX_APART_S = 30.0
MIN_TRIALS = 3  # fewer paired trials: no interval
COLUMNS = [
    "case_id",
    "baseline_case_id",
    "family",
    "trials",
    "left_out_disturbed",
    "left_out_apart",
    "left_out_slow_transfer",
    "left_out_across_phase",
    "paired_speedup",
    "paired_ci_low",
    "paired_ci_high",
    "paired_halfwidth_rel",
    "trials_together",
    "paired_together_speedup",
    "paired_together_ci_low",
    "paired_together_ci_high",
    "paired_together_halfwidth_rel",
    "paired_together_spread_rel",
]


def trial_times(records: pd.DataFrame) -> pd.DataFrame:
    """Per (case_id, invocation), i.e. per kernel process: the median wall time of its clean
    repetitions (of all when none is clean: `disturbed`; `slow_transfer` when one of those was
    measured in a slow cache-line transfer), when it started (seconds since the epoch; NaN when
    unknown), its trial and its place in the trial (records without them: the invocation is the
    trial, place 0)."""
    n = len(records)
    absent = pd.Series(False, index=records.index)
    disturbed = records.get("disturbed", absent)
    transfer = records.get("slow_transfer", absent)
    started = (
        records["started"].astype(object) if "started" in records else pd.Series(None, index=records.index)
    )
    trial = pd.to_numeric(records["trial"], errors="coerce") if "trial" in records else None
    invocation = pd.to_numeric(records["invocation"], errors="coerce").astype(float)
    trial = invocation if trial is None else trial.astype(float).where(trial.notna(), invocation)
    slot = records["trial_slot"] if "trial_slot" in records else pd.Series(np.zeros(n), index=records.index)
    df = pd.DataFrame(
        {
            "case_id": records["case_id"].astype(str),
            "invocation": records["invocation"],
            "wall_s": records["wall_s"].astype(float),
            "disturbed": disturbed.astype(bool).to_numpy(),
            "slow_transfer": transfer.fillna(False).astype(bool).to_numpy(),
            "started": pd.to_datetime(started, utc=True, errors="coerce"),
            "trial": trial,
            "slot": pd.to_numeric(slot, errors="coerce").fillna(0.0),
        }
    ).dropna(subset=["invocation", "wall_s"])
    # A process's time: the median of its clean repetitions; disturbed when it has none.
    df["clean_wall_s"] = df["wall_s"].where(~df["disturbed"])
    grouped = df.groupby(["case_id", "invocation"], sort=True)
    out = grouped.agg(
        clean=("clean_wall_s", "median"),
        all_s=("wall_s", "median"),
        any_slow_transfer=("slow_transfer", "any"),
        started=("started", "min"),
        trial=("trial", "first"),
        slot=("slot", "first"),
    )
    out["disturbed"] = out["clean"].isna()
    out["wall_s"] = out["clean"].fillna(out["all_s"])
    # Its clean repetitions are never slow-transfer ones: only a time over all of them can hold one.
    out["slow_transfer"] = out["disturbed"] & out["any_slow_transfer"]
    out["started_s"] = (out["started"] - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    return out[["wall_s", "disturbed", "slow_transfer", "started_s", "trial", "slot"]]


def bootstrap_over_trials(
    ratios: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[float, float]:
    """Percentile bootstrap CI of the median of `ratios`, resampling whole trials (docs/analysis.md,
    "Which confidence interval, for what")."""
    draws = rng.integers(0, len(ratios), size=(n_resamples, len(ratios)))
    medians = np.median(ratios[draws], axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


def ratio_summary(ratios: np.ndarray, rng: np.random.Generator, n_resamples: int, prefix: str) -> dict:
    """{prefix}speedup (median of the per-trial ratios), its CI and relative half-width."""
    median = float(np.median(ratios)) if len(ratios) else np.nan
    low = high = np.nan
    if len(ratios) >= MIN_TRIALS:
        low, high = bootstrap_over_trials(ratios, rng, n_resamples)
    return {
        f"{prefix}speedup": median,
        f"{prefix}ci_low": low,
        f"{prefix}ci_high": high,
        f"{prefix}halfwidth_rel": (high - low) / 2 / median,
    }


def spread_rel(ratios: np.ndarray) -> float:
    """How far the per-trial ratios spread: half their interquartile range over their median (NaN below
    MIN_TRIALS): the host's noise that the trials could not cancel (stats/wide_comparisons.py)."""
    if len(ratios) < MIN_TRIALS:
        return np.nan
    low, median, high = np.percentile(ratios, [25, 50, 75])
    return float((high - low) / 2 / median)


def runs_by_trial(processes: pd.DataFrame) -> dict[float, pd.DataFrame]:
    return {t: group for t, group in processes.groupby("trial", sort=True)}


def side_in_trial(group: pd.DataFrame) -> tuple[list[Run], bool, bool, float]:
    """One case's processes in one trial: the runs to pair (the clean ones; all when none is clean),
    whether none was clean, whether a run used holds a slow cache-line transfer, and when the first
    of them started."""
    clean = group[~group["disturbed"]]
    used = clean if len(clean) else group
    runs = [Run(float(slot), float(wall)) for slot, wall in zip(used["slot"], used["wall_s"], strict=True)]
    return runs, clean.empty, bool(used["slow_transfer"].any()), float(used["started_s"].min())


def paired_ratio(
    num: pd.DataFrame, den: pd.DataFrame, rng: np.random.Generator, n_resamples: int = 2000
) -> dict:
    """num, den: trial_times rows of two cases (index: invocation). The paired ratio num/den over the
    clean trials (each trial's two times at the same moment, sbcore/trial_pairing.py: a baseline that
    ran several times in a trial is taken around the other case's place), and shown separately over
    every trial measured together (disturbed ones too, except those with a slow cache-line transfer:
    it slows one member only). Neither counts a ratio taken across a change of the host's phase
    (sbcore/slow_phase.py, among the ratios that estimate would count otherwise)."""
    num_trials, den_trials = runs_by_trial(num), runs_by_trial(den)
    ratios, disturbed, apart, transfer = [], [], [], []
    for t in sorted(num_trials.keys() & den_trials.keys()):
        num_runs, num_disturbed, num_transfer, num_started = side_in_trial(num_trials[t])
        den_runs, den_disturbed, den_transfer, den_started = side_in_trial(den_trials[t])
        num_time, den_time = times_together(num_runs, den_runs)
        ratios.append(num_time / den_time)
        disturbed.append(num_disturbed or den_disturbed)
        transfer.append(num_transfer or den_transfer)
        apart.append(abs(num_started - den_started) > MAX_APART_S)
    ratios_a = np.asarray(ratios, dtype=float)
    disturbed_a, apart_a = np.asarray(disturbed, dtype=bool), np.asarray(apart, dtype=bool)
    transfer_a = np.asarray(transfer, dtype=bool)
    clean, together = ~disturbed_a & ~apart_a, ~apart_a & ~transfer_a
    across = np.zeros(len(ratios_a), dtype=bool)
    for kept in (clean, together):
        across[kept] |= np.asarray(across_phase_flags(ratios_a[kept].tolist()), dtype=bool)
    clean, together = clean & ~across, together & ~across
    return {
        "trials": int(clean.sum()),
        "left_out_disturbed": int(disturbed_a.sum()),
        "left_out_apart": int((apart_a & ~disturbed_a).sum()),
        "left_out_slow_transfer": int((transfer_a & ~apart_a).sum()),
        "left_out_across_phase": int((across & ~apart_a & ~transfer_a).sum()),
        **ratio_summary(ratios_a[clean], rng, n_resamples, "paired_"),
        "trials_together": int(together.sum()),
        **ratio_summary(ratios_a[together], rng, n_resamples, "paired_together_"),
        "paired_together_spread_rel": spread_rel(ratios_a[together]),
    }


def paired_rows(
    pairs: pd.DataFrame, num: str, den: str, records: pd.DataFrame, families: dict[str, str], rng
) -> list[dict]:
    """For each row of `pairs` whose cases `num` and `den` share a family (and differ): the row, its
    family and paired_ratio(num's trials, den's trials), i.e. num's time over den's within a trial."""
    pairs = pairs[pairs[num].notna() & pairs[den].notna() & (pairs[num] != pairs[den])]
    family = pairs[den].map(families)
    pairs = pairs[family.notna() & (family == pairs[num].map(families))]
    if pairs.empty or records.empty:
        return []
    times = trial_times(records[records["case_id"].isin(set(pairs[num]) | set(pairs[den]))])
    rows = []
    for pair in pairs.to_dict("records"):
        if pair[num] not in times.index or pair[den] not in times.index:
            continue
        ratio = paired_ratio(times.loc[pair[num]], times.loc[pair[den]], rng)
        rows.append({**pair, "family": families[pair[den]], **ratio})
    return rows


def paired_speedups(
    speedup: pd.DataFrame, records: pd.DataFrame, families: dict[str, str], rng: np.random.Generator
) -> pd.DataFrame:
    """One row per speedup row whose case and baseline share a family (and are not the same case)."""
    pairs = speedup[["case_id", "baseline_case_id"]]
    rows = paired_rows(pairs, "baseline_case_id", "case_id", records, families, rng)
    return pd.DataFrame(rows, columns=COLUMNS)


# A variant comparison's identity: the columns of comparisons.csv up to its two cases.
VARIANT_KEY = VARIANT_TEST_COLUMNS[: VARIANT_TEST_COLUMNS.index("case_b") + 1]
# The columns of a paired ratio of case_b's time over case_a's (paired_ratio, renamed): every table
# of paired ratios (variants, duets, across a trial group) ends with these.
RATIO_COLUMNS = [c.replace("speedup", "ratio_b_over_a") for c in COLUMNS[3:]]
VARIANT_COLUMNS = [*VARIANT_KEY, "family", *RATIO_COLUMNS]


def ratio_table(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """paired_rows' rows as a table of paired ratios: its speedup columns named ratio_b_over_a."""
    table = pd.DataFrame(rows)
    return table.rename(columns=lambda c: c.replace("speedup", "ratio_b_over_a")).reindex(columns=columns)


def paired_variant_ratios(
    comparisons: pd.DataFrame, records: pd.DataFrame, families: dict[str, str], rng: np.random.Generator
) -> pd.DataFrame:
    """The variant comparisons (stats/variant_tests.py: two cases differing in one of schedule or sync
    at the same workers) whose cases share a family, paired: case_b's time over case_a's within a
    trial (above 1: b is slower), as ratio_b_over_a in comparisons.csv."""
    if comparisons.empty or "dimension" not in comparisons:
        return pd.DataFrame(columns=VARIANT_COLUMNS)
    pairs = comparisons[comparisons["dimension"].isin(["schedule", "sync"])][VARIANT_KEY]
    return ratio_table(paired_rows(pairs, "case_b", "case_a", records, families, rng), VARIANT_COLUMNS)


DUET_COLUMNS = ["duet", "case_a", "case_b", *RATIO_COLUMNS]


def paired_duet_ratios(
    duets: dict[str, str], records: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    """duets: case_id -> its duet pair (jobs/duets.py: two single-worker cases measured at the same
    time, one per CPU; `duet` in cases.jsonl, in the order of cases.jsonl). Per pair: case_b's time
    over case_a's within each duet (a record's `trial` is its duet), as ratio_b_over_a."""
    members: dict[str, list[str]] = {}
    for case_id, name in duets.items():
        members.setdefault(name, []).append(case_id)
    pairs = pd.DataFrame(
        [{"duet": name, "case_a": m[0], "case_b": m[1]} for name, m in members.items() if len(m) == 2],
        columns=["duet", "case_a", "case_b"],
    )
    return ratio_table(paired_rows(pairs, "case_b", "case_a", records, duets, rng), DUET_COLUMNS)
