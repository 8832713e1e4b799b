"""Paired ratios taken across a change of the host's phase: the rule the analysis' paired comparisons
(analysis/stats/paired.py) and the runner's comparison target (jobs/comparison_sampling.py) share.

On a shared host another tenant takes part of our core in phases (milliseconds to minutes) that slow
an integer-bound loop up to 1.7x with the clock unchanged, and hit a third of its repetitions. The two
processes of a paired ratio, run side by side in a trial, share the phase most of the time: then it
cancels in their ratio. When a phase began or ended between them, the ratio is off by the phase's
whole slowdown, one way or the other (the baseline slowed: too high; the member: too low), and such
ratios widen the interval of the median over trials far more than their share suggests. They are
detected and left out, not averaged in: a ratio more than the tolerance away from the median of the
comparison's ratios (in logarithms). The tolerance is SPREAD_FACTOR times the ratios' own spread
(their median absolute deviation, scaled to a standard deviation), and at least TOLERANCE: ratios
within the spread the comparison's noise gives them are never left out, so on a host whose noise is
spread evenly nothing is; on one with phases the ratios across a change lie far outside it. The
window is centred on the median of all the ratios, so what is left out on either side cannot move it.
With fewer than MIN_RATIOS ratios nothing is left out.
"""

from __future__ import annotations

import math
from statistics import median

TOLERANCE = 0.04  # in log ratio: about 4 %
SPREAD_FACTOR = 3.0
MAD_TO_SD = 1.4826  # a normal distribution's standard deviation over its median absolute deviation
MIN_RATIOS = 8


def across_phase_flags(ratios: list[float]) -> list[bool]:
    """For each paired ratio of one comparison (one per trial): taken across a change of phase (a
    ratio that is not a positive number is never flagged, and takes no part in the rule)."""
    logs = [math.log(r) if r > 0 and math.isfinite(r) else None for r in ratios]
    known = [x for x in logs if x is not None]
    if len(known) < MIN_RATIOS:
        return [False] * len(logs)
    centre = median(known)
    spread = MAD_TO_SD * median(abs(x - centre) for x in known)
    tolerance = max(TOLERANCE, SPREAD_FACTOR * spread)
    return [x is not None and abs(x - centre) > tolerance for x in logs]
