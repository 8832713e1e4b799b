"""The quiet gate lets a study through only when the load average and the CPUs' busy share are below
their bounds, waits up to the stated time, then stops with exit 3 and one line; and `make seeds`'s
module runs a study through gate, run and analyze into the doc with the conditions beside the table."""

import json
import shutil
import subprocess
import sys
import tarfile

import pytest

from jobs.quiet_gate import cpu_busy_share, wait_for_quiet
from sbcore.errors import EnvironmentProblem

from ..jobs.conftest import ROOT
from .test_seed_end_to_end import generated, scaled_down


class FakeMachine:
    """Load averages one per poll; a clock advanced by the gate's sleeps."""

    def __init__(self, loads, busy=0.05):
        self.loads, self.busy_share, self.now, self.polls = list(loads), busy, 0.0, 0

    def loadavg(self):
        self.polls += 1
        return (self.loads.pop(0) if len(self.loads) > 1 else self.loads[0], 0.0, 0.0)

    def sleep(self, s):
        self.now += s

    def gate(self, **kw):
        return wait_for_quiet(loadavg=self.loadavg, busy=lambda: self.busy_share, clock=lambda: self.now,
                              sleep=self.sleep, poll_s=15, **kw)  # fmt: skip


def test_a_quiet_machine_passes_at_once_and_the_check_says_what_it_saw():
    check = FakeMachine([0.3]).gate(load_below=1.5, busy_below=0.25, max_wait_s=600)
    assert (check.load_1min, check.busy_share, check.waited_s, check.skipped) == (0.3, 0.05, 0, False)


def test_the_gate_waits_for_the_load_to_fall():
    machine = FakeMachine([3.0, 2.0, 1.2])
    check = machine.gate(load_below=1.5, busy_below=0.25, max_wait_s=600)
    assert check.waited_s == 30 and machine.polls == 3


@pytest.mark.parametrize(("loads", "busy", "seen"), [([4.0], 0.05, "load average 4.00"),
                                                     ([0.5], 0.9, "CPUs 90% busy")])  # fmt: skip
def test_a_busy_machine_stops_the_gate_after_the_stated_wait(loads, busy, seen):
    machine = FakeMachine(loads, busy)
    with pytest.raises(EnvironmentProblem, match=f"after waiting 600 s: .*{seen}") as err:
        machine.gate(load_below=1.5, busy_below=0.25, max_wait_s=610)
    assert err.value.exit_code == 3 and "\n" not in str(err.value)


def test_busy_share_reads_proc_stat_deltas():
    lines = iter(["cpu 100 0 100 800 0 0 0 0 0 0", "cpu 150 0 150 900 0 0 0 0 0 0"])
    assert cpu_busy_share(0, read=lambda: next(lines), sleep=lambda s: None) == pytest.approx(0.5)


def seeds(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "jobs.seeds", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=600)  # fmt: skip


def test_seeds_stops_with_exit_3_and_one_line_on_a_busy_machine(tmp_path):
    proc = seeds("--load-below", "1e-9", "--max-wait", 0, "--results-dir", tmp_path)
    assert proc.returncode == 3
    assert proc.stderr.count("\n") == 1 and "machine not quiet after waiting 0 s" in proc.stderr
    assert not any(tmp_path.iterdir())  # nothing measured


@pytest.mark.slow
def test_seeds_runs_a_study_and_writes_its_table_with_the_conditions(tmp_path):
    doc = tmp_path / "doc.md"
    shutil.copy(ROOT / "docs" / "seed-reproductions.md", doc)
    experiment = scaled_down("seed-000-tc01", tmp_path, repetitions=5)
    proc = seeds("--experiment", experiment, "--no-wait-for-quiet", "--results-dir", tmp_path / "res",
                 "--doc", doc)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = generated(doc.read_text(), "seed-000:tc01")
    assert "quiet gate skipped" in section and "1-minute load average" in section
    assert "of repetitions flagged disturbed by the probe" in section
    assert "| measured [interval] (coverage) |" in section and "±10%" in section and "trials" in section
    (campaign,) = (tmp_path / "res").glob("seed-000-tc01-seeds-*")
    conditions = json.loads((campaign / "quiet_gate.json").read_text())
    assert conditions["before"]["skipped"] and conditions["duration_s"] > 0
    assert conditions["platform"]["kernel"] and "cpu" in conditions["platform"]
    shipped = (ROOT / "docs" / "seed-reproductions.md").read_text()
    assert generated(doc.read_text(), "seed-001") == generated(shipped, "seed-001")  # others untouched
    # the campaigns behind the doc, as an archive a reader can analyse; analysis outputs left out
    (archive,) = (tmp_path / "res").glob("seed-campaigns-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert f"{campaign.name}/cases.jsonl" in names and f"{campaign.name}/quiet_gate.json" in names
    assert not any(n.startswith(f"{campaign.name}/analysis/") for n in names)
    unpacked = tmp_path / "reader"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    reader = subprocess.run([sys.executable, str(ROOT / "scalebench"), "analyze", unpacked / campaign.name],
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert reader.returncode == 0, reader.stderr
    assert (unpacked / campaign.name / "analysis" / "reference.csv").is_file()
    # re-rendering from the existing campaign measures nothing and writes the same section
    before = generated(doc.read_text(), "seed-000:tc01")
    doc.write_text((ROOT / "docs" / "seed-reproductions.md").read_text())
    again = seeds("--experiment", experiment, "--render-only", "--results-dir", tmp_path / "res",
                  "--doc", doc)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(list((tmp_path / "res").glob("seed-000-tc01-seeds-*"))) == 1
    assert generated(doc.read_text(), "seed-000:tc01") == before


def test_render_only_without_a_campaign_says_so(tmp_path):
    proc = seeds("--studies", "001", "--render-only", "--results-dir", tmp_path)
    assert proc.returncode == 2 and "no campaign seed-001-osbench-seeds-<stamp>" in proc.stderr


MICRO = """
description = "small seed 001"
repetitions = 5
warmup = 0
timeout_s = 60

[[sweep]]
binary = ["osbench-c-serial"]
pin = ["compact"]
params = { op = ["thread-create"], ops = [200], batch = [100] }
"""


@pytest.mark.slow
def test_seeds_writes_a_microbenchmark_study_section(tmp_path):
    doc = tmp_path / "doc.md"
    shutil.copy(ROOT / "docs" / "seed-reproductions.md", doc)
    experiment = tmp_path / "small-001.toml"
    experiment.write_text(MICRO)
    proc = seeds("--experiment", experiment, "--no-wait-for-quiet", "--results-dir", tmp_path / "res",
                 "--doc", doc)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = generated(doc.read_text(), "seed-001")
    row = next(line for line in section.splitlines() if line.startswith("| thread create + join, n = 100 |"))
    assert "| not comparable |" in row and "another machine" in row and "(93.8%)" in row, row
    assert "not reproducible here: the report's own minima" in section  # the semaphore figure, listed
    assert "quiet gate skipped" in section
    shipped = (ROOT / "docs" / "seed-reproductions.md").read_text()
    assert generated(doc.read_text(), "seed-003") == generated(shipped, "seed-003")  # no timing records
