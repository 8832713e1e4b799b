"""Repetitions measured while the machine was disturbed, from the kernels' machine-state probe.

Each measured record carries `probe` (docs/formats.md): fixed-work integer-multiply and FP-latency
chains, an FP-throughput and an integer-ALU throughput block timed on every CPU of the case right before
and after the repetition,
and the run-queue wait of the process's threads during it. A node's normal probe time is learnt from the
campaign itself: a low quantile of every chain time measured on that host (its CPUs are taken to be
alike). A repetition is flagged as disturbed when
- a latency chain around it took clearly longer than normal (SLOW_RATIO): the core was slower or taken
  away (another process, the hypervisor, a lower clock), or
- the throughput block around it took clearly longer than normal (SLOW_RATIO) while the latency chains
  did not: something else issued to the core's FP pipes, typically another tenant's thread on the SMT
  sibling of the host core under our vCPU. Vector kernels lose up to a third of their speed then
  (docs/simd-bounds.md, "Host phases"); latency-bound loops barely notice. Its normal time is a lower
  quantile (TPUT_NORMAL_QUANTILE): on a host shared this way the slow state is the common one, and the
  block cannot run faster than the pipes allow, so the fastest times are the core's own. Only for
  cases it slows, as for the transfer below: on a Zen 5 guest the block ran 1.34x its fastest time in
  most repetitions of a quiet host while the AVX-512 Mandelbrot kernel beside it ran 0.9 % faster
  than beside a fast block (perf/record_noise_trace.py): a core design whose block has two speeds of
  its own would otherwise flag 80-85 % of normal repetitions, or
- the integer-ALU block around it took clearly longer than normal (ALU_SLOW_RATIO, normal as for the
  FP block) while the latency chains did not: another hardware thread took slots of the core's integer
  ALUs (ALU_REASON). The scalar π loop is bound by them and ran up to 1.7x slower in such phases of a
  shared host while the FP blocks saw only a minority of them. Its ratio is lower than SLOW_RATIO: the
  block slows about as much as the scalar loop (the same operations: perf/record_noise_trace.py
  measures both), so a ratio near the 1.15x by which a repetition counts as slow catches most of them,
  while a lower one also flags repetitions beside which a phase only began or ended (one side of the
  probe slow, the repetition itself hardly), or
- the cache-line round trip between the case's CPUs around it (the probe's transfer, timed by two of
  the case's workers) took clearly longer than that case's normal one (TRANSFER_SLOW_RATIO: on our
  Zen 5 guests a pair of vCPUs is either near, 50-75 ns, or placed apart, 340-400 ns, so the near
  state's own spread reaches 1.5x and the ratio sits between the two; its normal time is
  a low quantile of the case's own, since its CPUs are the same in every repetition while another
  case's pair may lie further apart): the host placed our vCPUs further apart or gave the partner's
  to someone else (the rule's constants and per-value test: sbcore/slow_transfer.py, which the
  runner's comparison target reads too). Contended locks and atomics on two CPUs then run up to 2-3x
  slower while every
  single-CPU chain, and a single-threaded baseline, stay as they were (TRANSFER_REASON). Only for
  cases it slows, though: a case whose repetitions in that state took, at the median, within
  TRANSFER_MATTERS of its other ones (a static schedule without shared writes) was not disturbed
  by it, and keeps them; or
- its threads waited for a CPU for a clearly larger share of the run than is normal on that host
  (WAIT_SHARE more than the host's low quantile) although the case has no more threads than CPUs
  (scaling kernels only: a microbenchmark's partner thread or process waits for its CPU by design):
  something else ran on its CPUs. On a quiet node the normal share is about 0; on a node that is
  always shared the normal state is shared, and only what comes on top of it is flagged.
Summary columns then give each case's median with and without its flagged repetitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.records.machine_state import ALU_CHAINS, LATENCY_CHAINS, TPUT_CHAINS, TRANSFER_CHAINS
from analysis.stats.categorical import case_categories, numeric, text_in
from sbcore.case_shape import oversubscribed
from sbcore.sampling import median_ci_rank
from sbcore.slow_transfer import (  # TRANSFER_SLOW_RATIO: read from here by the report and perf/
    NORMAL_QUANTILE,
    TRANSFER_MATTERS,
    TRANSFER_SLOW_RATIO,  # noqa: F401
    is_slow_transfer,
)

SLOW_RATIO = 1.3  # probe time / node's normal probe time
PIPES_REASON = "shared FP pipes"
ALU_REASON = "shared integer ALUs"
ALU_SLOW_RATIO = 1.25  # integer-ALU block time / node's normal one
TRANSFER_REASON = "slow cache-line transfer"
# Run-queue wait / (run time x threads), above the host's normal share. A wait is a measured slowdown,
# not a guess: in a Zen 5 guest's 60-s trace of single-threaded pi it was a median 92 % of a slow
# repetition's extra time; at 0.2 the repetitions 1.15-1.2x slow for a wait went unflagged (caught:
# 34-44 % of the slow ones; at 0.1: 84-87 %, false alarms 4.5-4.9 %, perf/record_noise_trace.py --judge).
WAIT_SHARE = 0.1
TPUT_NORMAL_QUANTILE = 0.02
SCALING_KERNELS = ("mandelbrot", "mcpi")  # the run-queue rule applies to these
RECORD_COLUMNS = [
    "probe_slowdown",
    "probe_tput_slowdown",
    "probe_alu_slowdown",
    "probe_xfer_slowdown",
    "slow_transfer",
    "runq_wait_share",
    "normal_runq_share",
    "disturbed",
    "disturbed_reason",
]
SUMMARY_COLUMNS = ["n_disturbed", "n_clean", "median_clean_s", "ci_low_clean_s", "ci_high_clean_s"]


def _host(records: pd.DataFrame) -> pd.Series:
    """Each record's host name (hostname, else host, else "unknown"): the loaded categorical itself
    when every record has a hostname (grouping a million strings instead costs ~0.3 s)."""
    name = records.get("hostname")
    if (
        name is not None
        and isinstance(name.dtype, pd.CategoricalDtype)
        and not name.isna().any()
        and all(isinstance(c, str) for c in name.cat.categories)
    ):
        return name
    host = records["hostname"] if "hostname" in records else pd.Series(None, index=records.index)
    if "host" in records:
        host = host.fillna(records["host"])
    return host.fillna("unknown").astype(str)


def _slowdown(out: pd.DataFrame, groups, chains: tuple, quantile: float) -> pd.Series:
    """Per record: the slowest time of the chains around it / the normal time of that chain in its
    group, a low `quantile` of the group's fastest times (`groups()`: the groupby keys, each record's
    host, or its host and case); NaN where no chain was timed."""
    slowdown = pd.Series(np.nan, index=out.index)
    for chain in chains:
        lo, hi = f"probe_{chain}_min_s", f"probe_{chain}_max_s"
        if lo not in out:
            continue
        fastest = numeric(out[lo])
        if fastest.isna().all():  # no probe in any record: nothing to learn (and a million-row groupby less)
            continue
        normal = fastest.groupby(groups(), observed=True).transform("quantile", quantile)
        ratio = numeric(out[hi]) / normal
        slowdown = pd.concat([slowdown, ratio], axis=1).max(axis=1)
    return slowdown


def _slowed_by(out: pd.DataFrame, state: pd.Series) -> pd.Series:
    """Per record: whether its case ran slower in `state` (a slow transfer, a slow FP-throughput block)
    in this campaign, i.e. the median time of its repetitions in it exceeds that of its other ones by
    more than TRANSFER_MATTERS (True where a case has no repetition outside it to tell)."""
    wall = numeric(out["wall_s"])
    case = case_categories(out["case_id"])
    inside = wall.where(state).groupby(case, observed=True).transform("median")
    outside = wall.where(~state).groupby(case, observed=True).transform("median")
    return ~(inside <= outside * (1 + TRANSFER_MATTERS))


def flag_disturbed(records: pd.DataFrame) -> pd.DataFrame:
    """The records with RECORD_COLUMNS added (records without a probe are never flagged)."""
    out = records.copy(deep=False)  # copy-on-write: the new columns never reach `records`
    hosts = []

    def host() -> pd.Series:  # a million host names only when a probe needs them
        if not hosts:
            hosts.append(_host(out))
        return hosts[0]

    out["probe_slowdown"] = _slowdown(out, host, LATENCY_CHAINS, NORMAL_QUANTILE)
    out["probe_tput_slowdown"] = _slowdown(out, host, TPUT_CHAINS, TPUT_NORMAL_QUANTILE)
    out["probe_alu_slowdown"] = _slowdown(out, host, ALU_CHAINS, TPUT_NORMAL_QUANTILE)
    # A transfer's normal is its case's own: another case's pair of CPUs may lie further apart.
    out["probe_xfer_slowdown"] = _slowdown(
        out, lambda: [host(), case_categories(out["case_id"])], TRANSFER_CHAINS, NORMAL_QUANTILE
    )
    wait = numeric(out.get("probe_runq_wait_s"))
    setup = numeric(out["setup_s"]).fillna(0) if "setup_s" in out else 0
    run = (out["wall_s"] + setup) * out["threads"]
    out["runq_wait_share"] = wait / run
    cpus = numeric(out.get("probe_cpus"))
    # Oversubscribed cases wait by design, and so do the microbenchmarks, whose ping-pong partners and
    # periodic threads are not counted as workers: only the scaling kernels' threads are all workers.
    scaling = text_in(out["kernel"], SCALING_KERNELS) if "kernel" in out else True
    fits = pd.notna(cpus) & ~oversubscribed(out["threads"], cpus) & scaling  # a process's threads, its CPUs
    share = out["runq_wait_share"].where(fits)
    if share.isna().all():
        normal_share = pd.Series(np.nan, index=out.index)
    else:
        normal_share = share.groupby(host(), observed=True).transform(lambda s: s.quantile(NORMAL_QUANTILE))
    out["normal_runq_share"] = normal_share
    slow = out["probe_slowdown"] > SLOW_RATIO
    # A core taken away slows the throughput block too: only a slow block beside normal latency chains
    # says that the pipes, not the core, were shared.
    pipes = (out["probe_tput_slowdown"] > SLOW_RATIO) & ~slow
    if pipes.any():  # (a Zen 5 core's block runs 1.34x its fastest most of the time, kernels unslowed)
        pipes &= _slowed_by(out, pipes)
    alus = (out["probe_alu_slowdown"] > ALU_SLOW_RATIO) & ~slow
    waited = fits & (share > normal_share.fillna(0) + WAIT_SHARE)
    transfer = is_slow_transfer(out["probe_xfer_slowdown"])
    if transfer.any():
        transfer &= _slowed_by(out, transfer)
    out["slow_transfer"] = transfer
    out["disturbed"] = slow | pipes | alus | waited | transfer
    out["disturbed_reason"] = _reasons(
        [slow, pipes, alus, waited, transfer],
        ["slow probe", PIPES_REASON, ALU_REASON, "run-queue wait", TRANSFER_REASON],
    )
    return out


def _reasons(flags: list[pd.Series], names: list[str]) -> pd.Categorical:
    """Per record, the names of its raised flags joined by " + " ("" for none), as a categorical: one
    code per combination of flags (a million strings written into a column take seconds, and again to
    write them out)."""
    combination = np.zeros(len(flags[0]), np.int64)
    for bit, flag in enumerate(flags):
        combination |= flag.fillna(False).to_numpy(dtype=bool).astype(np.int64) << bit
    labels = [" + ".join(n for bit, n in enumerate(names) if c >> bit & 1) for c in range(1 << len(names))]
    present = np.unique(combination)
    codes = np.searchsorted(present, combination)
    return pd.Categorical.from_codes(codes, categories=pd.Index([labels[c] for c in present], dtype="str"))


def _sorted_within_cases(wall: np.ndarray, codes: np.ndarray, starts: np.ndarray, counts: np.ndarray):
    """The times sorted by case code, then by time. Records arrive grouped by case (a cold load
    delivers them in case order): then the cases with n times are sorted as one (cases x n) matrix,
    row by row, instead of a lexsort of a million (code, time) pairs."""
    if len(codes) and (np.diff(codes) < 0).any():
        return wall[np.lexsort((wall, codes))]
    values = np.empty_like(wall)
    for n in np.unique(counts[counts > 0]):
        at = starts[counts == n, None] + np.arange(n)
        values[at] = np.sort(wall[at], axis=1)
    return values


def clean_summary(flagged: pd.DataFrame) -> pd.DataFrame:
    """Per case: how many repetitions were disturbed, and the median (distribution-free 95 % CI of
    the median, NaN when too few remain) of the others.

    Vectorised over cases (a million records: no loop over groups): the clean times sorted within each
    case, the median and the CI are gathers of order statistics; which order statistics bound the CI
    depends only on the count (sbcore.sampling.median_ci_rank)."""
    if flagged.empty:
        return pd.DataFrame(columns=["case_id", *SUMMARY_COLUMNS])
    case = case_categories(flagged["case_id"])
    codes, case_ids = case.cat.codes.to_numpy(), case.cat.categories
    n_cases = len(case_ids)
    disturbed = flagged["disturbed"].to_numpy(dtype=bool)
    wall = pd.to_numeric(flagged["wall_s"], errors="coerce").to_numpy(dtype=float)
    clean = ~disturbed & ~np.isnan(wall)
    counts = np.bincount(codes[clean], minlength=n_cases)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    values = _sorted_within_cases(wall[clean], codes[clean], starts, counts)
    median = np.full(n_cases, np.nan)
    low = np.full(n_cases, np.nan)
    high = np.full(n_cases, np.nan)
    for n in np.unique(counts[counts > 0]):
        rows = np.flatnonzero(counts == n)
        first = starts[rows]
        median[rows] = 0.5 * (values[first + (n - 1) // 2] + values[first + n // 2])
        k = median_ci_rank(n)  # the CI is [x_(k), x_(n+1-k)] (1-based), or none
        if k is not None:
            low[rows] = values[first + k - 1]
            high[rows] = values[first + n - k]
    return pd.DataFrame(
        {
            "case_id": case_ids,
            "n_disturbed": np.bincount(codes, weights=disturbed, minlength=n_cases).astype(int),
            "n_clean": counts.astype(int),
            "median_clean_s": median,
            "ci_low_clean_s": low,
            "ci_high_clean_s": high,
        }
    )
