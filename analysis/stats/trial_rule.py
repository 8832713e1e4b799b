"""How many paired trials a seed experiment runs, decided before the run by one rule for all.

n_0 = max(MIN_INDEPENDENT, ceil((z 1.2533 s / m)^2)), z = 1.645: at least the count at which a
distribution-free 90 % interval exists for both factor forms (analysis/stats/median_interval.py: 6,
the ratio of two independent medians; paired trials need 5), and enough that the interval of a median
of per-trial ratios with relative spread `s` (standard deviation / value; 1.2533 = the standard error of
a median over that of a mean, for normal data) is expected to reach at most the margin `m` on each
side, so that a measured factor at the published value can be decided "agrees". Then n is the smallest
count >= n_0 at which, if the machine-state probe flags each repetition with probability `d`
independently (a paired trial survives when neither of its two cases is flagged: (1 - d)^2), at least
MIN_UNDISTURBED trials survive with probability SURVIVAL (90 %): the verdicts rest on undisturbed
repetitions only (analysis/stats/undisturbed.py). `d` is the share the probe flagged in the previous run
(`planning_disturbed` of the study in config/reference/seed-000.toml). `s` is our measured
spread, stated per study case as `planning_spread` in config/reference/seed-000.toml with where it comes
from; `m` the smallest margin of the case's factors. Whether the published effect can be told from no
effect at that margin is not a question of trials: analysis/stats/reference.py says "cannot decide at
this margin" instead.
"""

from __future__ import annotations

import math

from scipy import stats

from analysis.stats.median_interval import MIN_INDEPENDENT
from analysis.stats.undisturbed import MIN_UNDISTURBED

CONFIDENCE = 0.90
SURVIVAL = 0.90  # the probability that enough undisturbed trials remain
MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)  # 1.2533: sd of a sample median / sd of a sample mean


def trials_needed(
    spread: float, margin: float, disturbed: float = 0.0, confidence: float = CONFIDENCE
) -> int:
    """The trial count of the rule above for relative spread `spread`, margin `margin` and the share of
    repetitions the probe is expected to flag, `disturbed`."""
    if not (spread >= 0 and margin > 0 and 0 <= disturbed < 1):
        raise ValueError(
            f"trials_needed: spread {spread} must be >= 0, margin {margin} > 0, "
            f"disturbed {disturbed} in [0, 1)"
        )
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    n = max(MIN_INDEPENDENT, math.ceil((z * MEDIAN_EFFICIENCY * spread / margin) ** 2 - 1e-9))
    survives = (1 - disturbed) ** 2
    while stats.binom.sf(MIN_UNDISTURBED - 1, n, survives) < SURVIVAL:
        n += 1
    return n
