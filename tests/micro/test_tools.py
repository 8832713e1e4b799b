"""The standard tools as kernels (kernels/tools/standard_tools.py behind build/bin/*-tool-*): their
outputs parse into our definition of one operation, the binaries speak the kernel protocol (help, bad
input exit 2, records that validate), the context switches they cause per operation confirm the
definition, and the analysis pairs each tool case with ours (same kernel params, node type and CPUs) and
judges the ratio."""

import importlib.util
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.outputs.report.sections.micro import tool_blocks
from analysis.stats.micro import AGREEMENT, tools_table
from jobs.binaries import binary_options
from sbcore.errors import ScalebenchError

from ..kernel_records import assert_usage_error, run_raw, run_records

# A kernel, not a module of a package: loaded from its file, as its build/bin wrapper runs it.
_SPEC = importlib.util.spec_from_file_location(
    "standard_tools", Path(__file__).resolve().parents[2] / "kernels" / "tools" / "standard_tools.py"
)
tools = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tools)

PERF_OUT = """# Running 'sched/pipe' benchmark:
# Executed 2000 pipe operations between two processes

     Total time: 0.016 [sec]

       8.317000 usecs/op
         120235 ops/sec
"""
STRESS_OUT = """stress-ng: metrc: [8939] switch  20000  0.27  0.02  0.10  73390.95  165708.32
stress-ng: metrc: [8939] switch             13574.12 nanosecs per context switch (pipe method)
"""
CYCLIC_OUT = """Thread 0 Interval: 1500
       0:       0:   99702
       0:       1:  107994
       0:       2:  109382
       0:       3:   92818
T: 0 (26433) P: 0 I:1000 C:      4 Min:  92818 Act:  92818 Avg:  102474 Max:  109382
"""
TOOL_BINARIES = list(tools.TOOLS)
HAVE_TOOLS = all(shutil.which(t) for t in ("perf", "stress-ng", "cyclictest", "chrt", "taskset"))


def test_perf_pipe_round_trip_is_two_switches():
    r = tools.parse_perf_pipe(PERF_OUT)
    assert r.work == 2000
    assert r.result["their_op_s"] == pytest.approx(8.317e-6)
    assert r.result["mean_s"] == pytest.approx(8.317e-6 / 2) and r.result["our_ops_per_their_op"] == 2


def test_stress_ng_message_is_two_switches():
    r = tools.parse_stress_switch(STRESS_OUT)
    assert r.work == 20000 and r.result["mean_s"] == pytest.approx(13574.12e-9 / 2)


def test_cyclictest_statistics_are_ours_over_its_samples():
    r = tools.parse_cyclictest(CYCLIC_OUT)
    c = r.result
    assert r.work == 4 and c["samples"] == 4
    assert (c["min_s"], c["max_s"]) == pytest.approx((92818e-9, 109382e-9))
    assert c["median_s"] == pytest.approx((99702 + 107994) / 2 * 1e-9)  # not its Avg: our median
    assert c["mean_s"] == pytest.approx(102474e-9, rel=1e-5) and c["their_op_s"] == pytest.approx(102474e-9)


@pytest.mark.parametrize("parse", [tools.parse_perf_pipe, tools.parse_stress_switch, tools.parse_cyclictest])
def test_unparsable_output_is_one_clear_error(parse):
    with pytest.raises(ScalebenchError, match="no '|no per-wake-up"):
        parse("Segmentation fault\n")


@pytest.mark.parametrize("name", TOOL_BINARIES)
def test_help_documents_the_options_the_planner_reads(kernel, name):
    proc = run_raw(kernel(name), "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    want = {o.name for o in tools.TOOLS[name].options} | {"reps", "warmup", "help", "check-args"}
    assert set(binary_options(kernel(name))) == want


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("perfbench-tool-pipe", ["--loops", "x"], ["--loops", "'x'", "integer"]),
        ("perfbench-tool-pipe", ["--mode", "fork"], ["--mode", "'fork'", "process|thread"]),
        ("stressng-tool-switch", ["--ops", "0"], ["--ops", "'0'"]),
        ("stressng-tool-switch", ["--policy", "rr"], ["--policy", "'rr'"]),
        ("cyclictest-tool-nanosleep", ["--period-us", "0"], ["--period-us", "'0'"]),
        ("cyclictest-tool-nanosleep", ["--bogus", "1"], ["unknown option", "--bogus"]),
        ("cyclictest-tool-nanosleep", ["--count"], ["--count", "missing value"]),
        ("cyclictest-tool-nanosleep", ["--reps", "0"], ["--reps", "'0'"]),
    ],
)
def test_bad_input_exits_2_with_one_line(kernel, name, args, expected):
    assert_usage_error(run_raw(kernel(name), *args), name, expected)


@pytest.mark.skipif(not HAVE_TOOLS, reason="perf, stress-ng, cyclictest, chrt or taskset missing")
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("perfbench-tool-pipe", ["--loops", "2000", "--mode", "process"]),
        ("perfbench-tool-pipe", ["--loops", "2000", "--mode", "thread"]),
        ("stressng-tool-switch", ["--ops", "2000"]),
    ],
)
def test_switch_tools_make_two_switches_per_their_op(kernel, record_validator, name, args):
    """The definition behind halving their figure, counted: the tool's processes switch twice per op.
    SCHED_FIFO keeps other tasks from adding involuntary switches on a shared machine."""
    warm, measured = run_records(
        Path("/usr/bin/taskset"),
        "-c",
        "0",
        kernel(name),
        *args,
        "--policy",
        "fifo",
        "--reps",
        "1",
        "--warmup",
        "1",
    )
    assert warm["warmup"] and not measured["warmup"]
    for record in (warm, measured):
        record_validator.validate(record)
    r = measured["result"]
    assert r["op"] == "switch" and measured["placement"] == [[0, 0]] and measured["lang"] == "tool"
    assert 1.95 <= r["switches_per_their_op"] <= 2.1
    assert r["mean_s"] == pytest.approx(r["their_op_s"] / 2)
    assert r["compares_with"]["params"]["policy"] == "fifo" and r["command"][:3] == ["chrt", "-f", "50"]
    assert warm["checksum"] == measured["checksum"]  # what was done, not how long it took


@pytest.mark.skipif(not HAVE_TOOLS, reason="cyclictest or taskset missing")
def test_cyclictest_kernel_pins_to_the_cpu_it_was_given(kernel, record_validator):
    (record,) = run_records(
        Path("/usr/bin/taskset"), "-c", "1", kernel("cyclictest-tool-nanosleep"), "--count", "20"
    )
    record_validator.validate(record)
    r = record["result"]
    assert record["placement"] == [[1, 1]] and r["command"][-2:] == ["-a", "1"]
    assert r["samples"] == 20 and 0 < r["min_s"] <= r["median_s"] <= r["max_s"] < 0.1
    assert r["compares_with"] == {
        "kernel": "timing",
        "params": {"period-us": "1000", "policy": "other", "pin": "yes", "load": "none", "wait": "sleep",
                   "udp": "no"},
        "stat": "median_s",
    }  # fmt: skip


def _record(case_id, kernel, params, stat_value, *, lang="c", cpus=(0,), node="ws", result=None):
    return {
        "case_id": case_id,
        "kernel": kernel,
        "lang": lang,
        "params": params,
        "node_type": node,
        "pin": {"cpus": list(cpus) if cpus else None},
        "result": {"op": "switch", "mean_s": stat_value, **(result or {})},
    }


def _perf(case_id, mean_s, cpus=(0,), node="ws", expected=AGREEMENT):
    wants = {"kernel": "osbench", "params": {"op": "ctxsw-process", "policy": "fifo"}, "stat": "mean_s"}
    result = {"compares_with": wants, "expected_ratio": list(expected), "definition": "d",
              "our_ops_per_their_op": 2, "switches_per_their_op": 2.0}  # fmt: skip
    return _record(case_id, "perfbench", {"mode": "process"}, mean_s, lang="tool", cpus=cpus, node=node,
                   result=result)  # fmt: skip


def test_tools_table_pairs_same_params_node_type_and_cpus_and_takes_medians():
    ours = {"op": "ctxsw-process", "policy": "fifo", "cpus": "same"}
    records = [
        *(_record("a", "osbench", ours, v) for v in (1.0e-6, 1.1e-6, 9.0e-6)),  # median 1.1
        *(_perf("p", v) for v in (1.0e-6, 1.0e-6, 5.0e-6)),  # median 1.0
        _record("b", "osbench", ours | {"policy": "other"}, 1e-6),  # other params: no pair
        _record("c", "osbench", ours, 1e-6, cpus=(1,)),  # other CPU: no pair
        _record("d", "osbench", ours, 1e-6, cpus=None),  # unpinned: no pair
        _record("e", "osbench", ours, 1e-6, node="other"),  # other node type: no pair
    ]
    table = tools_table(records)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["ratio"] == pytest.approx(1.1)
    # one repetition of 9 us in three: the 90 % CI of the ratio reaches beyond 1.33, so no verdict yet
    assert row["verdict"] == "inconclusive" and not row["agrees"] and row["ci_high"] > 1.33
    assert (row["reps_ours"], row["reps_theirs"], row["cpus"]) == (3, 3, "0")
    far = tools_table([*_ours(1.1), *(_perf("p", v) for v in (2e-6, 2e-6, 2e-6))])
    assert far.iloc[0]["ratio"] == pytest.approx(0.55) and far.iloc[0]["verdict"] == "differs"


def _ours(mean_us: float) -> list[dict]:
    return [_record("a", "osbench", {"op": "ctxsw-process", "policy": "fifo"}, mean_us * f * 1e-6)
            for f in (0.99, 1.0, 1.01)]  # fmt: skip


def _theirs(case_id, mean_us: float, **kw) -> list[dict]:
    return [_perf(case_id, mean_us * f * 1e-6, **kw) for f in (0.99, 1.0, 1.01)]


def test_the_expected_range_comes_from_the_tool_record_and_judges_the_ci():
    stress_like = tools_table([*_ours(1.5), *_theirs("s", 1.0, expected=(1.0, 2.0))])
    assert stress_like.iloc[0]["agrees"] and stress_like.iloc[0]["expected_high"] == 2.0
    assert stress_like.iloc[0]["verdict"] == "agrees"
    same_thing = tools_table([*_ours(1.5), *_theirs("s", 1.0)])
    assert same_thing.iloc[0]["verdict"] == "differs"  # 1.5 and its CI are outside [0.75, 1.33]


def test_report_shows_ours_theirs_ratio_verdict_and_each_definition_once():
    ours = _ours(1.5)
    table = pd.concat([tools_table([*ours, *_theirs("s", 1.0)]), tools_table([*ours, *_theirs("t", 1.4)])])
    blocks = tool_blocks(table)
    text = " ".join(str(b.value) for b in blocks if b.kind == "p")
    assert "Of 2 pairs: 1 agrees, 1 differs, 0 inconclusive" in text
    shown = next(b.value for b in blocks if b.kind == "table")
    assert list(shown["ours / theirs"]) == ["1.50", "1.07"] and list(shown["verdict"]) == [
        "differs",
        "agrees",
    ]
    assert list(shown["ours (µs)"]) == ["1.5", "1.5"] and list(shown["expected"]) == ["0.75–1.33"] * 2
    assert next(b.value for b in blocks if b.kind == "ul") == ["d"]
    assert [b.kind for b in tool_blocks(pd.DataFrame())] == ["h3", "skip"]


def test_a_missing_tool_is_a_runtime_failure_with_one_line(kernel):
    proc = run_raw(kernel("perfbench-tool-pipe"), "--loops", "10", env={"PATH": "/nonexistent"})
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == "perfbench-tool-pipe: perf: not installed (scripts/setup.sh installs it)"
