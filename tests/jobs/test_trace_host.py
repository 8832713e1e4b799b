"""The simulated host that replays real noise traces (sampling_fake/trace_host.py) and the stand-in
kernel on it (sampling_fake/fake_kernel_trace.py), through the real runner: the replay's arithmetic
on a small trace written here, and on the shared traces of a 2-vCPU guest (read at test time from
the shared directory beside the clone, skipped where it is absent) a deterministic campaign whose
times follow the trace."""

import json
import statistics
import sys
from pathlib import Path

import pandas as pd
import pytest

from jobs.campaign import load_cases
from tests.jobs.conftest import run_cli, stand_in_bin_dir
from tests.records import case_records

HERE = Path(__file__).resolve().parent / "sampling_fake"
sys.path.insert(0, str(HERE))
from trace_host import TraceHost  # noqa: E402

FAKE = HERE / "fake_kernel_trace.py"
NOISE = Path(__file__).resolve().parents[3] / "shared" / "noise"
TRACE = NOISE / "intel-xeon-model207-mcpi-scalar.csv"


def write_trace(path: Path, walls: dict[int, list[float]]) -> Path:
    lines = ["cpu,seq,wall_s"] + [f"{c},{i},{w}" for c, ws in walls.items() for i, w in enumerate(ws)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mean_factors_follow_the_trace(tmp_path):
    # CPU 0: 1 s at the median speed, 1 s, then 2 s at half speed (factor 2), then 1 s; CPU 1: always 1
    host = TraceHost(write_trace(tmp_path / "t.csv", {0: [1.0, 1.0, 2.0, 1.0], 1: [1.0, 1.0, 1.0, 1.0]}))
    assert host.length == 4.0  # the shorter CPU's trace
    assert host.mean_factor(0, 2.0, 2.0) == pytest.approx(2.0)
    assert host.mean_factor(0, 1.5, 1.0) == pytest.approx(1.5)  # half at 1, half at 2
    assert host.mean_factor(0, 5.0, 0.5) == pytest.approx(1.0)  # wraps round: 5 s is 1 s in
    assert host.repetition(1.0, 2.0, [0]) == pytest.approx(2.0)
    # split over both CPUs at t = 2: CPU 0 at factor 2, CPU 1 at 1
    assert host.repetition(1.0, 2.0, [0, 1]) == pytest.approx(1.0)  # static: the slow half ends it
    assert host.repetition(1.0, 2.0, [0, 1], balanced=True) == pytest.approx(1 / 1.5)


def test_a_trace_without_rows_is_refused(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("cpu,seq,wall_s\n")
    with pytest.raises(ValueError, match="no repetitions"):
        TraceHost(path)


EXPERIMENT = """
description = "trials on a host replaying a real noise trace"
interleave = "family"
repetitions = 12
warmup = 1
reps_per_process = 1
seed = 5

[[sweep]]
binary = ["tracehost-py-serial"]
params = {{ trace = ["{trace}"], timeline = ["{timeline}"], true_s = [0.013] }}

[[sweep]]
binary = ["tracehost-py-omp"]
threads = [2]
[sweep.params]
trace = ["{trace}"]
timeline = ["{timeline}"]
true_s = [0.013]
schedule = ["static", "dynamic"]
"""


def run_on_trace(tmp_path: Path, name: str) -> dict[str, list[float]]:
    experiment = tmp_path / f"{name}.toml"
    experiment.write_text(EXPERIMENT.format(trace=TRACE, timeline=tmp_path / f"{name}.timeline"))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", name, "--no-progress")
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / name
    times = {}
    for case in load_cases(campaign):
        key = f"{case['model']} {case['params'].get('schedule', '')}".strip()
        records = sorted(case_records(campaign, case["case_id"]), key=lambda r: (r["invocation"], r["rep"]))
        times[key] = [r["wall_s"] for r in records]
    return times


@pytest.mark.skipif(not TRACE.is_file(), reason="the shared noise traces are not beside this clone")
def test_a_campaign_on_the_replayed_trace_is_deterministic_and_follows_it(tmp_path, monkeypatch):
    stand_in_bin_dir(tmp_path / "bin", FAKE, ("tracehost-py-serial", "tracehost-py-omp"), monkeypatch)
    first = run_on_trace(tmp_path, "a")
    assert first == run_on_trace(tmp_path, "b")  # the host's time is the campaign's own, not the clock's
    serial = first["serial"]
    # the trace's serial pi repetitions run up to 1.7x their median and more in its slow phases, and
    # never much faster: a replay that ignored the trace would give 0.013 s every time
    assert max(serial) / min(serial) > 1.3
    assert min(serial) > 0.013 * 0.8
    # the dynamic split gives the faster CPU more work: never slower than the static split at the
    # same moment, so its median is lower
    assert statistics.median(first["omp dynamic"]) < statistics.median(first["omp static"])
    line = json.loads((tmp_path / "res" / "a" / "cases.jsonl").read_text().splitlines()[0])
    assert line["family"]  # measured in trials


ONE_CPU_FAMILY = """
description = "a family whose every speedup is 1 on a host replaying a real noise trace"
interleave = "family"
repetitions = 24
warmup = 1
reps_per_process = 1
seed = 7

[[sweep]]
binary = ["tracehost-py-serial"]
params = {{ trace = ["{trace}"], timeline = ["{timeline}"], true_s = [0.05] }}

[[sweep]]
binary = ["tracehost-py-omp"]
threads = [1]
[sweep.params]
trace = ["{trace}"]
timeline = ["{timeline}"]
true_s = [0.05]
schedule = ["static", "dynamic", "guided"]
"""


@pytest.mark.skipif(not TRACE.is_file(), reason="the shared noise traces are not beside this clone")
def test_ratios_across_a_phase_change_are_left_out_and_the_truth_stays_covered(tmp_path, monkeypatch):
    """Serial and three 1-thread OpenMP cases of the same true time on the replayed pi trace (a third of
    its repetitions in slow phases up to 1.7x): every paired speedup and variant ratio is 1 in truth.
    Some trials' ratios were taken across a change of phase and are left out; what is left stays on
    the truth, inside its interval."""
    from analysis.pipeline import Options, analyze

    stand_in_bin_dir(tmp_path / "bin", FAKE, ("tracehost-py-serial", "tracehost-py-omp"), monkeypatch)
    experiment = tmp_path / "one.toml"
    experiment.write_text(ONE_CPU_FAMILY.format(trace=TRACE, timeline=tmp_path / "one.timeline"))
    run = run_cli("run", experiment, "--results-dir", tmp_path / "res", "--name", "one", "--no-progress")
    assert run.returncode == 0, run.stderr
    result = analyze(tmp_path / "res" / "one", Options(n_resamples=400, seed=1))
    speedups = result.paired_speedup.rename(columns=lambda c: c.replace("speedup", "ratio"))
    variants = result.paired_variant_ratio.rename(columns=lambda c: c.replace("ratio_b_over_a", "ratio"))
    table = pd.concat([speedups, variants], ignore_index=True)
    assert len(table) == 3 + 3
    assert table["left_out_across_phase"].sum() > 0
    assert (table["trials_together"] + table["left_out_across_phase"] == 24).all()
    assert ((table["paired_together_ci_low"] <= 1.0) & (table["paired_together_ci_high"] >= 1.0)).all()
    assert (abs(table["paired_together_ratio"] - 1) <= 0.02).all()
