"""perf/perf_worker_times.py's two regime-independent figures of the sampled lock's cost: the on/off
ratio within matched hand-off regimes, and the bound from the lock path's cost on one thread (and the
probe that measures it, perf/lock_path_cost.c)."""

import json
import math
import re
import subprocess

import pytest

from tests.perf_scripts import ROOT, load_perf_script

pwt = load_perf_script("perf_worker_times")


def reps(wall: float, switches: int, count: int, trip: float | None = None) -> list[dict]:
    probe = {"before": {"xfer_s": [None, trip]}, "after": {"xfer_s": [None, trip]}}
    return [{"wall_s": wall, "ctx_voluntary": switches, "probe": probe} for _ in range(count)]


def test_regime_is_the_octave_of_the_context_switches():
    octaves = [pwt.regime(n)[1] for n in (0, 1, 2, 3, 4, 7, 8, 204, 391)]
    assert octaves == [0, 1, 2, 2, 3, 3, 4, 8, 9]


def test_matched_overhead_compares_only_repetitions_with_the_cpus_in_the_same_state():
    # the CPUs apart (a 6x round trip) make the lock 40 % faster; on spent more of its repetitions
    # there: pooled by context switches alone on would look faster, within each state it is 1 % slower
    on = reps(1.01, 0, 3, trip=60e-9) + reps(0.606, 0, 9, trip=360e-9)
    off = reps(1.0, 0, 9, trip=60e-9) + reps(0.6, 0, 3, trip=360e-9)
    overhead, compared = pwt.matched_overhead(on, off)
    assert overhead == pytest.approx(0.01)
    assert compared == 12


def test_matched_overhead_leaves_out_a_regime_only_one_build_reached():
    # the plain medians differ by half (more of on's repetitions fell in the slow regime);
    # within the regime both reached, on is 2 % slower
    on = reps(1.02, 0, 3) + reps(2.0, 500, 3)
    off = reps(1.0, 0, 5) + reps(2.0, 300, 1)
    overhead, compared = pwt.matched_overhead(on, off)
    assert overhead == pytest.approx(0.02)
    assert compared == 6


def test_matched_overhead_weights_each_regime_by_its_smaller_count():
    on = reps(1.01, 0, 3) + reps(2.06, 2000, 6)
    off = reps(1.0, 5, 4) + reps(2.0, 1900, 6)  # 0 and 5 differ: regimes 0 and 3
    on += reps(1.01, 6, 3)
    overhead, compared = pwt.matched_overhead(on, off)
    assert overhead == pytest.approx((0.01 * 3 + 0.03 * 6) / 9)
    assert compared == 18


def test_matched_overhead_is_none_without_a_common_regime():
    assert pwt.matched_overhead(reps(1.0, 0, 5), reps(1.0, 100, 5)) is None


def test_lock_bound_adds_the_paths_and_two_clock_reads_per_timed_acquisition():
    cost = {
        "plain_ns": 10.0,
        "sampled_ns": 10.5,
        "queue_plain_ns": 20.0,
        "queue_sampled_ns": 21.0,
        "clock_ns": 25.0,
        "timed_first": 64,
        "sample_every": 64,
    }
    case = pwt.Case("k", [], None, locks=6400, ranges=1000)
    bound, terms = pwt.lock_bound(cost, case, workers=2, wall_off=0.01)
    timed = 2 * 64 + 6400 / 64
    assert bound == pytest.approx((4400 * 0.5e-9 + 1000 * 1e-9 + timed * 50e-9) / 0.01)
    assert "4400 x 0.50 ns" in terms and "1000 x 1.00 ns" in terms and "228 x 50.0 ns" in terms


def test_lock_bound_counts_a_path_measured_cheaper_than_plain_as_free():
    cost = {
        "plain_ns": 10.0,
        "sampled_ns": 9.9,
        "queue_plain_ns": 20.0,
        "queue_sampled_ns": 19.0,
        "clock_ns": 25.0,
        "timed_first": 64,
        "sample_every": 64,
    }
    bound, _ = pwt.lock_bound(cost, pwt.Case("k", [], None, locks=6400, ranges=1000), 2, 0.01)
    assert bound == pytest.approx((2 * 64 + 6400 / 64) * 50e-9 / 0.01)


def test_lock_path_cost_probe_prints_its_figures_and_the_sampling_constants():
    subprocess.run(["make", "-s", str(pwt.LOCK_PATH_COST)], cwd=ROOT, check=True, timeout=600)
    out = subprocess.run(
        [str(ROOT / pwt.LOCK_PATH_COST)], capture_output=True, text=True, check=True, timeout=600
    )
    figures = json.loads(out.stdout)
    for key in ("plain_ns", "sampled_ns", "queue_plain_ns", "queue_sampled_ns", "clock_ns"):
        assert math.isfinite(figures[key]) and 0 < figures[key] < 10_000, (key, figures)
    header = (ROOT / "kernels" / "common" / "sb_lock_sample.h").read_text()
    for key, macro in (("timed_first", "SB_LOCK_TIMED_FIRST"), ("sample_every", "SB_LOCK_SAMPLE_EVERY")):
        assert figures[key] == int(re.search(rf"#define {macro} (\d+)", header).group(1))
    assert figures["worker_times"] == 1
