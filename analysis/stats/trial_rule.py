"""How many paired trials a seed experiment runs, decided before the run by one rule for all.

n = max(MIN_INDEPENDENT, ceil((z 1.2533 s / m)^2)), z = 1.645: at least the count at which a
distribution-free 90 % interval exists for both factor forms (analysis/stats/median_interval.py: 6,
the ratio of two independent medians; paired trials need 5), and enough that the interval of a median
of per-trial ratios with relative spread `s` (standard deviation / value; 1.2533 = the standard error of
a median over that of a mean, for normal data) is expected to reach at most the margin `m` on each
side, so that a measured factor at the published value can be decided "agrees". `s` is our measured
spread, stated per study case as `planning_spread` in config/reference/seed-000.toml with where it comes
from; `m` the smallest margin of the case's factors. Whether the published effect can be told from no
effect at that margin is not a question of trials: analysis/stats/reference.py says "cannot decide at
this margin" instead.
"""

from __future__ import annotations

import math

from scipy import stats

from analysis.stats.median_interval import MIN_INDEPENDENT

CONFIDENCE = 0.90
MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)  # 1.2533: sd of a sample median / sd of a sample mean


def trials_needed(spread: float, margin: float, confidence: float = CONFIDENCE) -> int:
    """The trial count of the rule above for relative spread `spread` and margin `margin`."""
    if not (spread >= 0 and margin > 0):
        raise ValueError(f"trials_needed: spread {spread} must be >= 0 and margin {margin} > 0")
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    return max(MIN_INDEPENDENT, math.ceil((z * MEDIAN_EFFICIENCY * spread / margin) ** 2 - 1e-9))
