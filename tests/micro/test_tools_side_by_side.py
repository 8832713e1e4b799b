"""Ours and the standard tools side by side in one scaled-down campaign (tools_side_by_side.toml): the
tools run as cases of the same run, shuffled among ours and pinned to the same CPU, and each of ours /
theirs lies in the range its definitions predict: [0.75, 1.33] where both measure the same thing (perf
bench sched pipe per switch, cyclictest's wake-up lateness), [1, 2] for stress-ng's switch stressor,
whose one-way stream makes half our pipe calls per switch (kernels/tools/standard_tools.py says why).

Context switches are compared under SCHED_FIFO: under SCHED_OTHER any other runnable task on the CPU may
take a turn at every switch, and perf bench and stress-ng report only a mean, which such turns move
(seed-001 also runs the SCHED_OTHER pairs; the report shows them). Wake-ups are compared by the median,
under both policies. A pair outside its range is measured once more in a fresh run: load by other users
of a shared 2-vCPU guest can push one run's medians apart, a difference of definition shows in both."""

import subprocess
import sys

import pandas as pd
import pytest

from analysis.stats.micro import AGREEMENT
from tests.records import campaign_records

from .scaled import ROOT

EXPERIMENT = ROOT / "tests" / "micro" / "tools_side_by_side.toml"
PAIRS = {  # theirs (tool kernel and mode/policy) -> ours
    ("perfbench", "process", "fifo"): "osbench op=ctxsw-process cpus=same policy=fifo",
    ("perfbench", "thread", "fifo"): "osbench op=ctxsw-thread cpus=same policy=fifo",
    ("stressng", "", "fifo"): "osbench op=ctxsw-process cpus=same policy=fifo",
    ("cyclictest", "", "other"): "timing period-us=1000 policy=other pin=yes load=none wait=sleep udp=no",
    ("cyclictest", "", "fifo"): "timing period-us=1000 policy=fifo pin=yes load=none wait=sleep udp=no",
}
EXPECTED = {"perfbench": AGREEMENT, "cyclictest": AGREEMENT, "stressng": (1.0, 2.0)}


def side_by_side(tmp_path, name: str) -> tuple[pd.DataFrame, str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), "run", str(EXPERIMENT), "--results-dir",
         str(tmp_path), "--name", name, "--no-progress", "--analyze"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    campaign = tmp_path / name
    records = campaign_records(campaign)
    assert records and all(r["status"] == "ok" and not r["pin"]["violations"] for r in records)
    assert {r["pin"]["cpus"][0] for r in records} == {0}  # ours and theirs on the same CPU
    table = pd.read_csv(campaign / "analysis" / "micro_tools.csv")
    assert table["agrees"].dtype == bool  # written as true/false
    return table, (campaign / "analysis" / "report.md").read_text()


def key(row) -> tuple[str, str, str]:
    params = dict(p.split("=") for p in row["theirs"].split()[1:])
    return row["theirs"].split()[0], params.get("mode", ""), params["policy"]


def test_ours_and_theirs_agree_where_the_definitions_match(tmp_path, bin_dir):
    table, report = side_by_side(tmp_path, "first")
    assert sorted(map(key, table.to_dict("records"))) == sorted(PAIRS)  # each tool found exactly its pair
    for row in table.to_dict("records"):
        assert row["ours"] == PAIRS[key(row)]
        assert (row["expected_low"], row["expected_high"]) == pytest.approx(EXPECTED[key(row)[0]])
        if row["theirs"].startswith(("perfbench", "stressng")):
            # their op is two of ours, and the switches counted in the run say so
            assert row["our_ops_per_their_op"] == 2 and 1.95 <= row["switches_per_their_op"] <= 2.1
    assert "Beside the standard tools" in report and "pairs: " in report and "docs/verdict-rule.md" in report
    # a pair whose 90 % CI lies wholly outside the range its definitions predict (on a loaded machine
    # a pair may stay inconclusive: the CI straddles an edge; that is not a disagreement)
    missed = {key(r): r["ratio"] for r in table.to_dict("records") if r["verdict"] == "differs"}
    if missed:
        again, _ = side_by_side(tmp_path, "again")
        still = {key(r): (missed[key(r)], r["ratio"]) for r in again.to_dict("records") if key(r) in missed}
        assert all(r["verdict"] != "differs" for r in again.to_dict("records") if key(r) in missed), (
            f"ours / theirs outside the expected range twice (first, again): {still}"
        )
