"""One scaled-down end-to-end run of the OS-overhead and timing-precision experiment families on this
machine: plan, run, analyze; the microbenchmark tables and report section come out with our values
beside the published ones, and the standard tools' cases beside ours. (The SMT family runs on the test
cluster: tests/slurm.)"""

import json
import subprocess
import sys

import pandas as pd
import pytest

from tests.records import campaign_records
from tests.report_html import rendered_sections

from .scaled import ROOT, scaled_experiment


def scalebench(*args, timeout=300):
    return subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), *map(str, args)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("experiment", "kernel", "tools", "published"),
    [
        ("seed-001-osbench.toml", "osbench", {"perfbench", "stressng"}, "thread create + join, n = 100"),
        ("seed-003-timing.toml", "timing", {"cyclictest"}, None),
    ],
)
def test_family_runs_end_to_end(tmp_path, bin_dir, experiment, kernel, tools, published):
    exp = scaled_experiment(experiment, tmp_path)
    proc = scalebench(
        "run", exp, "--results-dir", tmp_path / "results", "--name", "c", "--no-progress", "--analyze"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    campaign = tmp_path / "results" / "c"
    records = campaign_records(campaign)
    cases = (campaign / "cases.jsonl").read_text().splitlines()
    assert records and all(r["status"] == "ok" for r in records), [r.get("reason") for r in records]
    assert len(records) == len(cases)
    micro = pd.read_csv(campaign / "analysis" / "micro.csv")
    assert set(micro["kernel"]) == {kernel} | tools and len(micro) == len(cases)
    # every tool case of the experiment found the case of ours that measures the same quantity
    pairs = pd.read_csv(campaign / "analysis" / "micro_tools.csv")
    tool_cases = sum(1 for line in cases if json.loads(line)["kernel"] in tools)
    assert len(pairs) == tool_cases and (pairs["ratio"] > 0).all()
    assert (micro.loc[micro["kernel"] == kernel, "median_s"] >= 0).all()  # the switch tools give a mean only
    assert (micro["mean_s"] > 0).all()
    ref = pd.read_csv(campaign / "analysis" / "micro_reference.csv")
    if published:
        row = ref[ref["what"] == published].iloc[0]
        assert row["ours"] > 0 and row["ratio"] == pytest.approx(row["ours"] / row["published"], rel=1e-4)
    report = (campaign / "analysis" / "report.md").read_text()
    assert "## Microbenchmarks: OS overhead, timing precision, SMT" in report
    assert "micro" in rendered_sections(campaign / "analysis" / "report.html")
