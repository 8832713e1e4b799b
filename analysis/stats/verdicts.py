"""The one verdict engine: a confidence interval of a ratio judged against a band. No file I/O.

Performance gate (`check`, `compare`, `history`): the ratio is measured / reference of a time (for a
speedup, reference / measured, so that above 1 is always slower). With the band [low, high] around 1:

- `regressed`: the whole CI lies above `high` (slower beyond the tolerance);
- `improved`: the whole CI lies below `low`;
- `within`: the whole CI lies inside the band;
- `inconclusive`: otherwise (the CI straddles an edge of the band), with the repetitions it would take
  to decide: a CI's half-width shrinks as 1/sqrt(n), so n x (half-width / distance of the ratio to the
  nearest edge)^2 (None when the ratio sits on an edge).

Equivalence (two one-sided tests at alpha = 5 %, the form a reproduction states "agrees with the
published figure" in): the same judgement of the 90 % CI against the band [1 - margin, 1 + margin]:
`agrees` when it lies inside, `differs` when it lies wholly outside, `inconclusive` otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

VERDICTS = ("regressed", "improved", "within", "inconclusive")
EQUIVALENCE = ("agrees", "differs", "inconclusive")
EQUIVALENCE_CONFIDENCE = 0.90  # two one-sided tests at alpha = 5 %
DEFAULT_MARGIN = 0.10  # a reproduction's margin when its figure states none: +-10 % of the published value


@dataclass(frozen=True)
class Band:
    """Tolerated ratios measured / reference: [low, high], low <= 1 <= high."""

    low: float
    high: float

    @classmethod
    def around_one(cls, below: float, above: float) -> Band:
        """From tolerated fractions: 0.1 below and 0.1 above -> [0.9, 1.1]."""
        return cls(1.0 - below, 1.0 + above)

    def __post_init__(self):
        if not (0 < self.low <= 1 <= self.high and math.isfinite(self.high)):
            raise ValueError(f"tolerance band [{self.low}, {self.high}]: need 0 < low <= 1 <= high")


def judge(ratio, ci_low, ci_high, band: Band, n) -> tuple[np.ndarray, np.ndarray]:
    """(verdicts, repetitions needed) of arrays of ratios, their CIs and repetition counts. A case without
    a CI (NaN) is inconclusive with no estimate; a decided case needs no more repetitions (0)."""
    ratio, low, high = (np.asarray(x, dtype=float) for x in (ratio, ci_low, ci_high))
    n = np.asarray(n, dtype=float)
    verdict = np.full(ratio.shape, "inconclusive", dtype=object)
    verdict[low > band.high] = "regressed"
    verdict[high < band.low] = "improved"
    verdict[(low >= band.low) & (high <= band.high)] = "within"
    half_width = np.fmax(high - ratio, ratio - low)
    distance = np.fmin(np.abs(ratio - band.low), np.abs(ratio - band.high))
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.ceil(n * (half_width / distance) ** 2 - 1e-9)  # (not 41 for 40 + rounding)
    needed = np.where(np.isfinite(needed) & (distance > 0), needed, np.nan)
    needed = np.where(verdict == "inconclusive", needed, 0)
    return verdict, needed


def equivalence(ratio, ci90_low, ci90_high, margin: float, n=1) -> tuple[np.ndarray, np.ndarray]:
    """(agrees|differs|inconclusive, repetitions needed) of ratios and their 90 % CIs against
    [1 - margin, 1 + margin]: the engine of `judge`, named for a reproduction."""
    return equivalence_in(ratio, ci90_low, ci90_high, Band.around_one(margin, margin), n)


def equivalence_in(ratio, ci90_low, ci90_high, band: Band, n=1) -> tuple[np.ndarray, np.ndarray]:
    """`equivalence` against any band around 1 (e.g. the range two definitions of an operation
    predict for ours / a standard tool's)."""
    verdict, needed = judge(ratio, ci90_low, ci90_high, band, n)
    names = {
        "within": "agrees",
        "regressed": "differs",
        "improved": "differs",
        "inconclusive": "inconclusive",
    }
    return np.array([names[v] for v in verdict], dtype=object).reshape(verdict.shape), needed


def smallest_rank_test_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value a Mann–Whitney test of n_a against n_b repetitions can give
    (exact, no ties: every repetition of one side below every one of the other): 2 / C(n_a + n_b, n_a).
    With 3 and 3 it is 0.1: no difference is ever significant at 5 %, however large."""
    if min(n_a, n_b) < 1:
        return 1.0
    return min(1.0, 2 / math.comb(int(n_a) + int(n_b), int(n_a)))


def reps_for_rank_test(alpha: float = 0.05) -> int:
    """The fewest repetitions per side (equal sides) at which the rank test can reach alpha."""
    n = 1
    while smallest_rank_test_p(n, n) >= alpha:
        n += 1
    return n
