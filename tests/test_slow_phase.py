"""The rule for paired ratios taken across a change of the host's phase (sbcore/slow_phase.py)."""

from sbcore.slow_phase import MIN_RATIOS, TOLERANCE, across_phase_flags


def test_ratios_across_a_change_are_flagged_and_the_rest_kept():
    # 20 trials within +-1 % of 2.0 and four across an edge: the baseline slowed (2.0 x 1.6) or the
    # member (2.0 / 1.4)
    core = [2.0 * (1 + 0.01 * ((7 * i) % 11 - 5) / 5) for i in range(20)]
    across = [3.2, 1.43, 2.9, 1.5]
    assert across_phase_flags(core + across) == [False] * 20 + [True] * 4


def test_noise_spread_evenly_is_never_a_phase():
    # +-10 % spread evenly, no phase: the tolerance follows the ratios' own spread
    ratios = [1 + 0.1 * (2 * i / 30 - 1) for i in range(31)]
    assert not any(across_phase_flags(ratios))
    assert across_phase_flags([*ratios, 1.6])[-1]


def test_the_tolerance_has_a_floor_and_too_few_ratios_flag_nothing():
    exact = [1.25] * MIN_RATIOS
    assert not any(across_phase_flags([*exact, 1.25 * (1 + TOLERANCE / 2)]))
    assert across_phase_flags([*exact, 1.25 * (1 + 2 * TOLERANCE)])[-1]
    assert not any(across_phase_flags([1.0] * (MIN_RATIOS - 2) + [5.0]))


def test_a_ratio_that_is_no_number_takes_no_part():
    exact = [1.25] * MIN_RATIOS
    assert across_phase_flags([*exact, float("nan"), 0.0, 2.5]) == [False] * (MIN_RATIOS + 2) + [True]
