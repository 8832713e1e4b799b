"""The verdict engine (analysis/stats/verdicts.py) on intervals alone."""

import numpy as np
import pytest

from analysis.stats.verdicts import Band, equivalence, judge, reps_for_rank_test, smallest_rank_test_p

BAND = Band.around_one(0.1, 0.1)  # [0.9, 1.1]


@pytest.mark.parametrize(
    "ratio, low, high, verdict",
    [
        (1.15, 1.12, 1.18, "regressed"),  # the whole CI above the band
        (0.80, 0.75, 0.85, "improved"),
        (1.00, 0.95, 1.05, "within"),
        (1.15, 1.05, 1.25, "inconclusive"),  # the median beyond the band is not enough
        (1.00, 0.85, 1.15, "inconclusive"),  # too wide to say it is inside
        (1.0, np.nan, np.nan, "inconclusive"),  # no CI
    ],
)
def test_verdict_comes_from_the_interval(ratio, low, high, verdict):
    (got,), _ = judge([ratio], [low], [high], BAND, [10])
    assert got == verdict


def test_repetitions_needed_shrink_the_interval_enough():
    verdict, needed = judge([1.15, 1.0, 1.15], [1.05, 0.85, 1.12], [1.25, 1.15, 1.18], BAND, [10, 10, 10])
    assert list(verdict) == ["inconclusive", "inconclusive", "regressed"]
    # half-width 0.10, ratio 0.05 from the edge: (0.10 / 0.05)^2 = 4 times the repetitions;
    # half-width 0.15, 0.10 from both edges: 10 x 1.5^2 = 22.5 -> 23; decided: none more
    assert needed[0] == 40 and needed[1] == 23 and needed[2] == 0
    # with that many, a CI of half-width 0.1 * sqrt(10 / 40) = 0.05 no longer straddles 1.1
    (decided,), _ = judge([1.15], [1.15 - 0.0499], [1.15 + 0.0499], BAND, [40])
    assert decided == "regressed"


def test_equivalence_is_the_same_engine_on_a_90_percent_interval():
    verdict, _ = equivalence([1.0, 1.3, 1.1], [0.97, 1.25, 0.95], [1.03, 1.35, 1.25], margin=0.1)
    assert list(verdict) == ["agrees", "differs", "inconclusive"]


def test_a_band_must_contain_one():
    with pytest.raises(ValueError, match="band"):
        Band(1.1, 1.2)


def test_rank_test_floor():
    assert smallest_rank_test_p(3, 3) == pytest.approx(0.1)  # 2 / C(6, 3)
    assert reps_for_rank_test(0.05) == 4  # 2 / C(8, 4) = 0.029
    # scipy's exact test agrees with the floor on completely separated samples
    from scipy.stats import mannwhitneyu

    assert mannwhitneyu([1, 2, 3], [4, 5, 6]).pvalue == pytest.approx(smallest_rank_test_p(3, 3))


def test_equivalence_in_judges_against_any_band_around_one():
    """ours / a tool in [1, 2] (the range two definitions predict): inside agrees, outside differs."""
    from analysis.stats.verdicts import Band, equivalence_in

    verdict, needed = equivalence_in(
        [1.5, 2.5, 1.9], [1.4, 2.2, 1.7], [1.6, 2.7, 2.2], Band(1.0, 2.0), [5, 5, 5]
    )
    assert list(verdict) == ["agrees", "differs", "inconclusive"]
    assert needed[0] == needed[1] == 0 and needed[2] > 5
