"""perf/perf_pairing_designs.py's model of a 2-worker case and its baselines on a host whose CPUs run at
known speeds: a baseline that fits the case's schedule finds its perfect scaling, one that does not is
biased the way its docstring says."""

import numpy as np
import pytest

from tests.perf_scripts import load_perf_script

designs = load_perf_script("perf_pairing_designs")
T = designs.TRUE_S


class SteadyHost:
    """CPU 1 runs `slow` times slower than CPU 0, always."""

    length = 100.0

    def __init__(self, slow: float):
        self.slow = slow

    def mean_factor(self, cpu: int, start: float, duration: float) -> float:
        return self.slow if cpu == 1 else 1.0


@pytest.mark.parametrize(
    ("schedule", "baseline", "speedup"),
    [
        ("static", "slower", 2.0),  # the case waits for the slower CPU, as the baseline measures it
        ("static", "cpu0", 1.0),  # the fast CPU's serial time against a case held by the slow CPU
        ("static", "capacity", 4 / 3),
        ("dynamic", "capacity", 2.0),  # the faster CPU takes more: the summed speed is what it gets
        ("dynamic", "cpu0", 1.5),
        ("dynamic", "slower", 3.0),
    ],
)
def test_speedups_on_cpus_of_unequal_speed(schedule, baseline, speedup):
    host = SteadyHost(2.0)
    ratio = designs.baseline_time(host, baseline, 0.0) / designs.case_time(host, schedule, 0.0)
    assert ratio == pytest.approx(speedup)


def test_a_steady_host_gives_a_perfect_case_two_with_no_width():
    rng = np.random.default_rng(1)
    median, halfwidth = designs.comparison(SteadyHost(1.0), "static", "cpu0", 0.015, 0.0, 12, 2.0, rng)
    assert median == pytest.approx(2.0)
    assert halfwidth == pytest.approx(0.0)


def test_the_case_runs_gap_seconds_after_its_baseline():
    class StepHost(SteadyHost):  # both CPUs twice slower from t = 1 s on
        def mean_factor(self, cpu, start, duration):
            return 2.0 if start >= 1.0 else 1.0

    rng = np.random.default_rng(1)
    near, _ = designs.comparison(StepHost(1.0), "static", "cpu0", 0.015, 0.0, 1, 10.0, rng)
    far, _ = designs.comparison(StepHost(1.0), "static", "cpu0", 1.5, 0.0, 1, 10.0, rng)
    assert (near, far) == (pytest.approx(2.0), pytest.approx(1.0))
