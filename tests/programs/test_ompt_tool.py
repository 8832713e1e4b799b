"""scalebench's OMPT tool on a GCC-built OpenMP program run on LLVM's libomp (the stand-in), and its
report read back as record fields: load balance against the balance the program's work predicts,
lock waiting, and every way a report or a program can be refused."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from kernels.programs.ompt_report import (
    OmptReportError,
    OmptUnavailable,
    lib_dir,
    ompt_env,
    read_ompt_report,
    tool_path,
)
from tests.programs.conftest import others_share

HERE = Path(__file__).parent
N = 200  # iterations; iteration i costs (i + 1) units
OTHERS_SHARE = 0.1  # above it, other processes preempt the threads: the balance is not the program's

pytestmark = pytest.mark.skipif(
    not tool_path().is_file() or not (lib_dir() / "libomp-as-libgomp" / "libgomp.so.1").exists(),
    reason="the OMPT tool or the libomp stand-in was not built (make kernels needs libomp-14-dev)",
)


def predicted_static_balance(n: int, threads: int) -> float:
    """mean / max of the threads' work under schedule(static): contiguous blocks of n / threads."""
    block = n // threads
    work = [sum(i + 1 for i in range(t * block, (t + 1) * block)) for t in range(threads)]
    return sum(work) / len(work) / max(work)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prog") / "imbalanced_omp"
    subprocess.run(["gcc", "-O2", "-fopenmp", str(HERE / "imbalanced_omp.c"), "-o", str(out)], check=True)
    return out


def run(program: Path, tmp_path: Path, schedule: str, *args: str, mode: str = "libomp") -> dict:
    report = tmp_path / f"ompt-{schedule.replace(',', '_')}.json"
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_SCHEDULE=schedule)
    env |= ompt_env(mode, report, program)
    subprocess.run([str(program), *args], env=env, check=True, capture_output=True, timeout=120)
    return read_ompt_report(report)


def balance(fields: dict) -> float:
    return fields["worker_useful_mean_s"] / fields["worker_useful_max_s"]


def test_static_schedule_shows_the_predicted_imbalance(program, tmp_path):
    found = {}
    others = others_share(lambda: found.update(run(program, tmp_path, "static", str(N), "3000", "3")))
    if others > OTHERS_SHARE:
        pytest.skip(f"the host was loaded: other processes took {others:.0%} of its CPUs during the run")
    fields = found
    assert fields["ompt_threads"] == 2 and fields["ompt_regions"] == 3
    assert "LLVM" in fields["ompt_runtime"]
    # wall-clock useful time: a preempted thread's lost time counts as useful, so a loaded machine
    # moves the figure; 0.04 is about a tenth of the gap between the two schedules
    assert balance(fields) == pytest.approx(predicted_static_balance(N, 2), abs=0.04)
    assert fields["worker_useful_max_s"] <= fields["parallel_s"] * 1.001
    assert fields["worker_wait_mean_s"] == 0.0


def test_dynamic_schedule_balances(program, tmp_path):
    fields = run(program, tmp_path, "dynamic,1", str(N), "3000", "3")
    assert balance(fields) > 0.96
    assert fields["serial_s"] < 0.5 * fields["parallel_s"]


def test_a_critical_section_is_lock_waiting(program, tmp_path):
    fields = run(program, tmp_path, "dynamic,1", str(N), "1500", "2", "critical")
    # the two threads take turns in one critical section: each waits about as long as it works
    assert fields["worker_wait_mean_s"] > 0.3 * fields["parallel_s"]
    assert fields["worker_useful_mean_s"] < 0.7 * fields["parallel_s"]


def test_libgomp_has_no_ompt_so_there_is_no_report(program, tmp_path):
    report = tmp_path / "none.json"
    env = dict(os.environ, OMP_NUM_THREADS="2") | ompt_env("native", report)
    subprocess.run([str(program), "20", "10"], env=env, check=True, capture_output=True, timeout=60)
    with pytest.raises(OmptReportError, match="wrote no report"):
        read_ompt_report(report)


def test_standin_refuses_programs_it_cannot_replace(tmp_path):
    static = tmp_path / "static_omp"
    subprocess.run(
        ["gcc", "-O2", "-fopenmp", "-static", str(HERE / "imbalanced_omp.c"), "-o", str(static)],
        check=True,
        capture_output=True,
    )
    with pytest.raises(OmptUnavailable, match="does not load libgomp.so.1 dynamically"):
        ompt_env("libomp", tmp_path / "r.json", static)
    rpath = tmp_path / "rpath_omp"
    subprocess.run(
        [
            "gcc",
            "-O2",
            "-fopenmp",
            str(HERE / "imbalanced_omp.c"),
            "-o",
            str(rpath),
            "-Wl,--disable-new-dtags,-rpath,/opt/x",
        ],
        check=True,
    )
    with pytest.raises(OmptUnavailable, match="DT_RPATH"):
        ompt_env("libomp", tmp_path / "r.json", rpath)
    newer = tmp_path / "omp51.c"
    newer.write_text("#include <omp.h>\nint main(void) { omp_display_env(0); return 0; }\n")
    subprocess.run(["gcc", "-fopenmp", str(newer), "-o", str(tmp_path / "omp51")], check=True)
    with pytest.raises(OmptUnavailable, match=r"lacks \(OMP_5\.1\)"):
        ompt_env("libomp", tmp_path / "r.json", tmp_path / "omp51")
    with pytest.raises(OmptUnavailable, match="not one of"):
        ompt_env("gomp", tmp_path / "r.json")


GOOD = {
    "schema": "scalebench.ompt/1",
    "runtime": "LLVM OMP version: 5.0.20140926",
    "tool_s": 1.0,
    "parallel_s": 0.8,
    "regions": 2,
    "threads_dropped": 0,
    "callbacks": {"implicit_task": True},
    "threads": [
        {"useful_s": 0.7, "lock_wait_s": 0.05, "regions": 2},
        {"useful_s": 0.5, "lock_wait_s": 0.0, "regions": 2},
    ],
}


def test_report_fields_from_a_written_report(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(GOOD))
    fields = read_ompt_report(path)
    assert fields["worker_useful_mean_s"] == pytest.approx(0.6)
    assert fields["worker_useful_max_s"] == pytest.approx(0.7)
    assert fields["worker_wait_mean_s"] == pytest.approx(0.025)
    assert fields["worker_wait_at_useful_max_s"] == pytest.approx(0.05)
    assert fields["serial_s"] == pytest.approx(0.2)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"schema": "other/1"}, "schema"),
        ({"parallel_s": 2.0}, "longer than the tool's lifetime"),
        ({"tool_s": -1.0}, "negative or not finite"),
        ({"threads": [{"useful_s": 0.9, "lock_wait_s": 0.0, "regions": 2}]}, "longer than the parallel time"),
        ({"threads": [{"useful_s": 0.1, "lock_wait_s": 0.0, "regions": 9}]}, "ran 9 regions of 2"),
        ({"threads_dropped": 3}, "were not measured"),
        ({"extra": 1}, "not an OMPT report"),
        ({"threads": "x"}, "not an OMPT report"),
    ],
)
def test_bad_reports_are_refused_in_one_line(tmp_path, change, message):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(GOOD | change))
    with pytest.raises(OmptReportError, match=message) as err:
        read_ompt_report(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_report_links_and_fifos_are_refused(tmp_path):
    target = tmp_path / "real.json"
    target.write_text(json.dumps(GOOD))
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(OmptReportError, match="cannot open"):
        read_ompt_report(link)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(OmptReportError, match="not a regular file"):
        read_ompt_report(fifo)
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps(GOOD).replace('"tool_s": 1.0', '"tool_s": NaN'))
    with pytest.raises(OmptReportError):
        read_ompt_report(nan)
