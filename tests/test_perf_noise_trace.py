"""perf/record_noise_trace.py: a short trace of this machine in the shared traces' columns plus the
integer-ALU block's, never written over an existing file, and judged when asked."""

import csv
import os

import pandas as pd

from tests.perf_scripts import ROOT, load_perf_script

SHARED_TRACE = ROOT.parent / "shared" / "noise" / "intel-xeon-model207-mcpi-scalar.csv"
# The shared traces' header (their README), as the recorder must begin its own.
SHARED_COLUMNS = [
    "cpu",
    "seq",
    "started",
    "wall_s",
    "cpu_user_s",
    "ctx_involuntary",
    "clock_ghz",
    "probe_before_fp_tput_s",
    "probe_after_fp_tput_s",
    "probe_before_fp_lat_s",
    "probe_after_fp_lat_s",
    "probe_before_int_mul_s",
    "probe_after_int_mul_s",
]


def run(monkeypatch, *argv) -> int:
    script = load_perf_script("record_noise_trace")
    monkeypatch.setattr("sys.argv", ["record_noise_trace.py", *map(str, argv)])
    return script.main()


def test_a_short_trace_has_the_shared_columns_and_the_integer_alu_block(tmp_path, monkeypatch, capsys):
    cpus = sorted(os.sched_getaffinity(0))[:2]
    out = tmp_path / "trace.csv"
    argv = ["--out", out, "--seconds", 1, "--reps", 3, "--cpus", ",".join(map(str, cpus))]
    assert run(monkeypatch, *argv, "--", "--samples", 20000) == 0
    with open(out, newline="") as f:
        header = next(csv.reader(f))
    if SHARED_TRACE.is_file():
        with open(SHARED_TRACE, newline="") as f:
            assert next(csv.reader(f)) == SHARED_COLUMNS
    assert header == [*SHARED_COLUMNS, "probe_before_int_alu_s", "probe_after_int_alu_s", "probe_runq_wait_s"]
    trace = pd.read_csv(out)
    assert set(trace["cpu"]) == set(cpus)
    for _, rows in trace.groupby("cpu"):
        assert list(rows["seq"]) == list(range(len(rows))) and len(rows) >= 3
    assert (trace[["probe_before_int_alu_s", "probe_after_int_alu_s", "wall_s"]] > 0).all().all()
    # within one process a repetition's before is the previous one's after
    first = trace[trace["cpu"] == cpus[0]]
    assert first["probe_before_int_alu_s"].iloc[1] == first["probe_after_int_alu_s"].iloc[0]
    printed = capsys.readouterr().out
    assert "int_alu (after) > 1.1x its median" in printed and "analysis: shared integer ALUs" in printed


def test_an_existing_trace_is_never_overwritten(tmp_path, monkeypatch):
    out = tmp_path / "trace.csv"
    out.write_text("measured before\n")
    assert run(monkeypatch, "--out", out, "--seconds", 1) == 2
    assert out.read_text() == "measured before\n"


def test_a_given_trace_is_judged(tmp_path, monkeypatch, capsys):
    rows = [
        {"cpu": 0, "seq": k, "wall_s": 1.5 if k < 10 else 1.0, "cpu_user_s": 1.0}
        | {
            f"probe_{side}_int_alu_s": 2.0 if k < 5 and side == "after" else 1.0
            for side in ("before", "after")
        }
        for k in range(40)
    ]
    path = tmp_path / "planted.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert run(monkeypatch, "--judge", path) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("int_alu (after)"))
    assert "cpu 0:  50.0 % of 10 /  0.0 %" in line
    assert run(monkeypatch, "--judge", tmp_path / "absent.csv") == 2
