"""When a case has been measured enough, and which repetitions to measure next: the one rule that the
local runner, `run-case` (a Slurm array task samples its own case), `status`, `resume` and the analysis
all use.

A case is measured as P process invocations x R in-process repetitions: invocation p runs the kernel
once with `--reps R` and fills the repetition files k = p*R .. p*R+R-1 (the last block may be shorter).
Two rules say when to stop:
- fixed: `reps` repetitions (`repetitions = N` in the experiment);
- target: keep adding invocations until the 95 % confidence interval of the median wall time is within
  +-target_ci of the median (relative half-width), with at least min_reps and at most max_reps (= the
  case's `reps`) repetitions and, if given, at most budget_s seconds of runner wall time.
The interval is the distribution-free one from binomial order statistics (no resampling, no scipy), so
deciding costs microseconds; the analysis uses it too where a stated coverage matters, and bootstrap
intervals elsewhere (docs/analysis.md, "Which confidence interval, for what").
"""

import math
from typing import NamedTuple

CONFIDENCE = 0.95
STOPS = ("fixed", "target_met", "max_reps", "budget")


class Rule(NamedTuple):
    reps: int  # fixed count, or max_reps under a target
    reps_per_process: int
    target_ci: float | None = None
    min_reps: int = 0
    budget_s: float | None = None


def case_rule(case: dict) -> Rule:
    sampling = case.get("sampling") or {}
    return Rule(
        reps=case["reps"],
        reps_per_process=case.get("reps_per_process", 1),
        target_ci=sampling.get("target_ci"),
        min_reps=sampling.get("min_reps", 0),
        budget_s=sampling.get("budget_s"),
    )


def trial_bounds(case: dict) -> tuple[int, int]:
    """(the fewest trials a case's own rule asks for, the most it may run): its min_reps (or fixed
    count) and its planned repetitions (max_reps under a target) over its repetitions per trial (per
    process x its processes per trial, `trial_runs` of a repeated baseline, jobs/families.py). The one
    rule for the runner's run budget (jobs/run_deadline.py) and the analysis' wide comparisons."""
    rule = case_rule(case)
    per_trial = max(1, rule.reps_per_process) * max(1, int(case.get("trial_runs", 1)))
    fewest = rule.min_reps if rule.target_ci else rule.reps
    return -(-fewest // per_trial), -(-rule.reps // per_trial)


def median_ci_rank(n: int, confidence: float = CONFIDENCE) -> int | None:
    """The distribution-free CI of the median of n values is [x_(k), x_(n+1-k)] (1-based order
    statistics) with this k: the largest whose coverage P(k <= B <= n-k), B ~ Binomial(n, 1/2), reaches
    `confidence`. None when n is too small for any such interval (n < 6 at 95 %). The one declaration
    of the order-statistic interval: the runner's rules here, the analysis' undisturbed medians
    (analysis/stats/disturbance.py) and its verdicts on published figures
    (analysis/stats/median_interval.py)."""
    n = int(n)  # a NumPy count would overflow 2**n past 62 values
    for k in range(n // 2, 0, -1):
        if sum(math.comb(n, i) for i in range(k, n - k + 1)) / 2**n >= confidence:
            return k
    return None


def median_ci(values, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Distribution-free CI of the median of `values` (median_ci_rank); None when too few."""
    xs = sorted(values)
    k = median_ci_rank(len(xs), confidence)
    return None if k is None else (xs[k - 1], xs[len(xs) - k])


def relative_halfwidth(values, confidence: float = CONFIDENCE) -> float | None:
    """Half the CI's width over the median; None when the CI does not exist yet."""
    ci = median_ci(values, confidence)
    if ci is None:
        return None
    xs = sorted(values)
    n = len(xs)
    median = (xs[(n - 1) // 2] + xs[n // 2]) / 2
    return (ci[1] - ci[0]) / 2 / median if median > 0 else math.inf


class Progress(NamedTuple):
    done: bool
    stop: str | None  # one of STOPS once done
    n: int  # measured repetitions with a complete record
    ci_rel: float | None  # relative half-width of the median's CI now
    spent_s: float  # runner wall time of the invocations that produced them


def block(rule: Rule, p: int) -> list[int]:
    """The repetition indices invocation p fills."""
    return list(range(p * rule.reps_per_process, min((p + 1) * rule.reps_per_process, rule.reps)))


def blocks(rule: Rule) -> int:
    return -(-rule.reps // rule.reps_per_process)


def progress(rule: Rule, records: dict[int, dict]) -> Progress:
    """records: repetition index -> its complete (status ok) record."""
    n = len(records)
    walls = [r["wall_s"] for r in records.values() if isinstance(r.get("wall_s"), int | float)]
    ci_rel = relative_halfwidth(walls)
    invocations = {}
    for k, record in records.items():
        invocations.setdefault(record.get("invocation", k), record.get("runner_wall_s") or 0.0)
    spent = float(sum(invocations.values()))
    if rule.target_ci is None:
        done = all(k in records for k in range(rule.reps))
        return Progress(done, "fixed" if done else None, n, ci_rel, spent)
    # Repetitions of trials run for a comparison target (jobs/comparison_sampling.py) came after the
    # case's own rule and do not reopen it: its target is judged on its own repetitions.
    own = [
        r["wall_s"]
        for r in records.values()
        if not r.get("comparison_trial") and isinstance(r.get("wall_s"), int | float)
    ]
    own_ci = relative_halfwidth(own)
    if len(own) >= rule.min_reps and own_ci is not None and own_ci <= rule.target_ci:
        return Progress(True, "target_met", n, ci_rel, spent)
    if all(k in records for k in range(rule.reps)):
        return Progress(True, "max_reps", n, ci_rel, spent)
    if rule.budget_s is not None and spent >= rule.budget_s:
        return Progress(True, "budget", n, ci_rel, spent)
    return Progress(False, None, n, ci_rel, spent)


def next_invocations(rule: Rule, records: dict[int, dict]) -> list[int]:
    """Invocations p to run next, in order: under a fixed count every one with a missing repetition;
    under a target first those that reach min_reps, then one at a time (each result decides again)."""
    if progress(rule, records).done:
        return []
    missing = [p for p in range(blocks(rule)) if any(k not in records for k in block(rule, p))]
    if rule.target_ci is None:
        return missing
    needed = -(-rule.min_reps // rule.reps_per_process)
    first = [p for p in missing if p < needed]
    return first or missing[:1]
