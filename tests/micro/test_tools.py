"""The standard-tool adapter: real outputs of perf bench, stress-ng and cyclictest parse into our
op definitions, records validate, and ours/theirs ratios come with the ±25 % verdict."""

import json
import shutil

import pytest

from analysis.micro import agreement
from jobs import tools
from sbcore.errors import ScalebenchError

PERF_OUT = """# Running 'sched/pipe' benchmark:
# Executed 2000 pipe operations between two processes

     Total time: 0.016 [sec]

       8.317000 usecs/op
         120235 ops/sec
"""
STRESS_OUT = """stress-ng: metrc: [8939] switch  20000  0.27  0.02  0.10  73390.95  165708.32
stress-ng: metrc: [8939] switch             13574.12 nanosecs per context switch (pipe method)
"""
CYCLIC_OUT = "T: 0 ( 8920) P:80 I:1000 C:    200 Min:     16 Act:   50 Avg:   41 Max:     499\n"


def test_perf_pipe_round_trip_is_two_switches():
    r = tools.parse_perf_pipe(PERF_OUT)
    assert r.work == 2000
    assert r.result["round_trip_s"] == pytest.approx(8.317e-6)
    assert r.result["mean_s"] == pytest.approx(8.317e-6 / 2)


def test_stress_ng_and_cyclictest_parse():
    assert tools.parse_stress_switch(STRESS_OUT).result["mean_s"] == pytest.approx(13574.12e-9)
    c = tools.parse_cyclictest(CYCLIC_OUT).result
    assert (c["min_s"], c["mean_s"], c["max_s"], c["samples"]) == pytest.approx((16e-6, 41e-6, 499e-6, 200))


@pytest.mark.parametrize("parse", [tools.parse_perf_pipe, tools.parse_stress_switch, tools.parse_cyclictest])
def test_unparsable_output_is_one_clear_error(parse):
    with pytest.raises(ScalebenchError, match="no '"):
        parse("Segmentation fault\n")


def test_agreement_verdict():
    ours = {"result": {"op": "switch", "mean_s": 1.2e-6}}
    close = {"result": {"op": "switch", "mean_s": 1.0e-6, "definition": "x"}}
    far = {"result": {"op": "switch", "mean_s": 2.0e-6, "definition": "why"}}
    assert agreement(ours, close)["within_25pct"]
    verdict = agreement(ours, far)
    assert not verdict["within_25pct"] and verdict["ratio"] == pytest.approx(0.6)
    with pytest.raises(ScalebenchError):
        agreement(ours, {"result": {"op": "wakeup_lateness", "mean_s": 1.0}})


@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("perf", "stress-ng", "cyclictest")), reason="tools missing"
)
def test_side_by_side_run_writes_valid_records_with_ratios(tmp_path, bin_dir, record_validator):
    out = tmp_path / "tools.jsonl"
    args = ["--out", str(out), "--loops", "500", "--reps", "1", "--cpu", "0", "--bin-dir", str(bin_dir)]
    assert tools.main(args) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for r in records:
        record_validator.validate(r)
    kinds = {r["kernel"] for r in records}
    assert kinds == {"osbench", "timing", "perf-bench", "stress-ng", "cyclictest"}
    ours = next(r for r in records if r["kernel"] == "osbench" and r["params"]["op"] == "ctxsw-process")
    perf = next(r for r in records if r["kernel"] == "perf-bench")
    verdict = agreement(ours, perf)
    assert 0 < verdict["ratio"] < float("inf") and "two switches" in verdict["definition"]
    assert tools.main(args) == 2  # never overwrites records
