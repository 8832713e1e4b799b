"""The comparison target and slow cache-line transfers (sbcore/slow_transfer.py, jobs/transfer_state.py):
the runner counts the trials the analysis counts, defers a family whose contended member is in the
slow state while another family runs, waits when no family is unaffected (up to `comparison_wait_s`,
not charged to `comparison_budget_s`), with a stand-in kernel whose CPUs are placed apart in planted
windows of its timeline."""

import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.records.machine_state import probe_columns
from analysis.stats.disturbance import flag_disturbed
from analysis.stats.paired import paired_ratio, trial_times
from jobs.campaign import load_cases
from jobs.comparison_sampling import CaseTimes, Need, paired_ratios, process_times
from jobs.config import load_experiment, load_node_types
from jobs.transfer_state import TransferWatch, choose
from sbcore import record_store
from sbcore.errors import UsageError
from tests.jobs.conftest import ROOT, run_cli, stand_in_bin_dir
from tests.records import case_records, minimal_record

FAKE = Path(__file__).resolve().parent / "sampling_fake" / "fake_kernel_transfer.py"
NEAR, APART = 5e-8, 4e-7


def synthetic_records(rng: random.Random) -> dict[str, dict[int, dict]]:
    """Three cases of one family over 30 trials: a serial baseline (two runs a trial, no round trip),
    a contended member (2 workers, twice as slow apart) and a static one (2 workers, as fast apart),
    two repetitions per process, each apart with probability 0.3 and a round trip around 2x normal in
    some (the rule's edge)."""
    records: dict[str, dict[int, dict]] = {"base": {}, "contended": {}, "static": {}}
    for t in range(30):
        slots = {"base": [0, 2], "contended": [1], "static": [3]}
        for case, places in slots.items():
            for run, slot in enumerate(places):
                p = t * len(places) + run
                for r in range(2):
                    k = 2 * p + r
                    apart = case != "base" and rng.random() < 0.3
                    edge = case != "base" and not apart and rng.random() < 0.1
                    trip = APART if apart else (2 * NEAR if edge else NEAR * (1 + 0.2 * rng.random()))
                    wall = (1.0 if case == "base" else 0.5) * (1 + 0.02 * rng.random())
                    wall *= 2 if apart and case == "contended" else 1
                    side = {"cpus": [0, 1], "xfer_s": [None, trip]} if case != "base" else {"cpus": [0]}
                    records[case][k] = {
                        "case_id": case,
                        "rep": k,
                        "invocation": p,
                        "trial": t,
                        "trial_slot": slot,
                        "hostname": "n1",
                        "wall_s": wall,
                        "setup_s": 0.0,
                        "threads": 1 if case == "base" else 2,
                        "probe": {"before": side, "after": side},
                    }
    return records


def analysis_trials(records: dict[str, dict[int, dict]], num: str, den: str) -> int:
    rows = [r | probe_columns(r["probe"]) for case in records.values() for r in case.values()]
    times = trial_times(flag_disturbed(pd.DataFrame(rows)))
    return paired_ratio(times.loc[num], times.loc[den], np.random.default_rng(0), 50)["trials"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_runner_counts_the_trials_the_analysis_counts(seed):
    """On the same records, the runner's usable paired trials (jobs/comparison_sampling.py) are the
    analysis' `trials` (analysis/stats/paired.py after stats/disturbance.py's flags): contended trials
    apart are left out of both, the static member's are kept by both."""
    records = synthetic_records(random.Random(seed))
    runner = {case: process_times(r)[0] for case, r in records.items()}
    for num, den in [("base", "contended"), ("base", "static"), ("contended", "static")]:
        assert len(paired_ratios(runner[num], runner[den])) == analysis_trials(records, num, den), (num, den)
    assert len(paired_ratios(runner["base"], runner["contended"])) < 30
    assert len(paired_ratios(runner["base"], runner["static"])) == 30


EXPERIMENT = """
description = "comparison trials on a host whose CPUs are placed apart in planted windows"
interleave = "family"
target_ci = 0.9
min_reps = 6
max_reps = 20
warmup = 0
seed = 5
baseline_every = 0
comparison_target_ci = 0.02
comparison_budget_s = {budget}
comparison_wait_s = {wait}
{families}
"""

FAMILY = """
[[sweep]]
binary = ["fakexfer-py-serial"]
params = {{ timeline = ["{timeline}"], apart = ["{apart}"], jitter = [{jitter}] }}

[[sweep]]
binary = ["fakexfer-py-omp"]
threads = [{threads}]
params = {{ timeline = ["{timeline}"], apart = ["{apart}"], jitter = [{jitter}] }}
"""


@pytest.fixture
def fake_bin_dir(tmp_path, monkeypatch) -> Path:
    return stand_in_bin_dir(tmp_path / "bin", FAKE, ("fakexfer-py-serial", "fakexfer-py-omp"), monkeypatch)


# `scalebench` with the runner's wait step set to argv[1] seconds: the stand-in's timeline moves one slot
# per process (a probe run included), not with the clock, so the same waits happen in less time.
WAIT_STEP_CLI = """import sys
import jobs.transfer_state
jobs.transfer_state.WAIT_STEP_S = float(sys.argv.pop(1))
from jobs.entry import main
sys.exit(main())
"""


def run_experiment(tmp_path: Path, budget: float, wait: float, families: list[dict], wait_step=None):
    timeline = tmp_path / "timeline"
    text = EXPERIMENT.format(
        budget=budget,
        wait=wait,
        families="".join(FAMILY.format(timeline=timeline, **family) for family in families),
    )
    experiment = tmp_path / "transfer.toml"
    experiment.write_text(text)
    args = ["run", experiment, "--results-dir", tmp_path / "res", "--name", "x", "--no-progress"]
    if wait_step is None:
        run = run_cli(*args)
    else:
        command = [sys.executable, "-c", WAIT_STEP_CLI, str(wait_step), *map(str, args)]
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    campaign = tmp_path / "res" / "x"
    log = "".join(p.read_text() for p in (campaign / "logs").glob("run-*.log"))
    return run, campaign, log


def comparison_slots(campaign: Path, case: dict) -> dict[int, list[int]]:
    """The case's comparison trials -> the timeline slots of their processes."""
    slots: dict[int, list[int]] = {}
    for r in case_records(campaign, case["case_id"]):
        if r.get("comparison_trial"):
            slots.setdefault(r["trial"], []).append(r["work"])
    return slots


def test_a_family_apart_is_deferred_while_another_runs(tmp_path, fake_bin_dir):
    """Family A (a 2-worker contended member) and family B (1 worker) each need comparison trials;
    the CPUs are apart in slots 24-35, right after their own 6 trials (24 processes). A runs at most
    its one trial that shows the state there; B's trials run in the window instead."""
    a = {"threads": 2, "apart": "24-36", "jitter": 0.2}
    b = {"threads": 1, "apart": "24-36", "jitter": 0.05}
    run, campaign, log = run_experiment(tmp_path, budget=120, wait=60, families=[a, b], wait_step=0.2)
    cases = {
        (c["threads"] if c["model"] != "serial" else 0, c["params"]["jitter"]): c
        for c in load_cases(campaign)
    }
    family_a = cases[2, 0.2]["family"]
    assert f"comparison deferred: family {family_a} in a slow cache-line transfer" in log
    assert "deferred for a slow cache-line transfer" in run.stdout
    assert "4e-07 s, 8.0x its normal 5e-08 s" in log
    window = range(24, 36)
    a_trials = {
        t
        for case in (cases[0, 0.2], cases[2, 0.2])
        for t, slots in comparison_slots(campaign, case).items()
        if any(s in window for s in slots)
    }
    b_in_window = [
        s for s in comparison_slots(campaign, cases[1, 0.05]).values() if any(x in window for x in s)
    ]
    assert len(a_trials) <= 1 and b_in_window
    assert comparison_slots(campaign, cases[2, 0.2]), "A's trials run once the window has passed"


def test_with_only_affected_families_the_runner_waits_then_proceeds_uncharged(tmp_path, fake_bin_dir):
    """One contended family, apart from its last own trial on: the runner waits comparison_wait_s
    (1 s: a probe run says apart still), then runs its trial anyway. The budget (0.05 s: less than
    one trial of two processes) lets exactly one trial start, so the wait was not charged to it."""
    family = {"threads": 2, "apart": "10-100000", "jitter": 0.1}
    run, campaign, log = run_experiment(tmp_path, budget=0.05, wait=1, families=[family])
    waits = [line for line in log.splitlines() if "comparison waited" in line]
    assert len(waits) == 1 and "waited 1.0 s: family" in waits[0] and "slow cache-line transfer" in waits[0]
    assert (
        "(1 trials for the comparison target; 1 deferred for a slow cache-line transfer; "
        "waited 1.0 s for it to pass)" in run.stdout
    )
    omp = next(c for c in load_cases(campaign) if c["model"] == "omp")
    assert len(comparison_slots(campaign, omp)) == 1


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("comparison_wait_s = -1", "comparison_wait_s = -1: must be a finite number of seconds >= 0"),
        ('comparison_wait_s = "60"', "comparison_wait_s = '60': must be a finite number of seconds >= 0"),
        ("comparison_wait_s = true", "comparison_wait_s = true: must be a finite number of seconds >= 0"),
        ("comparison_wait_s = inf", "comparison_wait_s = inf: must be a finite number of seconds >= 0"),
    ],
)
def test_a_bad_comparison_wait_is_one_line(tmp_path, line, message):
    path = tmp_path / "bad.toml"
    path.write_text(
        'description = "x"\ninterleave = "family"\ncomparison_target_ci = 0.02\ncomparison_budget_s = 10\n'
        f'{line}\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n'
    )
    with pytest.raises(UsageError) as error:
        load_experiment(path, load_node_types())
    assert str(error.value) == f"{path}: {message} (0: never wait)"


def test_a_comparison_wait_needs_a_comparison_target(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('description = "x"\ncomparison_wait_s = 30\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n')
    with pytest.raises(UsageError, match=r"bad.toml: comparison_wait_s = 30: needs comparison_target_ci$"):
        load_experiment(path, load_node_types())


class Records:
    """A stand-in for the runner's RecordCache: case id -> its records (repetition -> record)."""

    def __init__(self, campaign_dir: Path, records: dict[str, dict[int, dict]]):
        self.campaign_dir = campaign_dir
        self.records = records

    def get(self, case: dict) -> CaseTimes:
        return CaseTimes({}, set(), set(), self.records[case["case_id"]])


def probe_record(rep: int, wall: float, trip: float | None) -> dict:
    return {
        "rep": rep,
        "hostname": "n1",
        "wall_s": wall,
        "probe": {"min_s": {"xfer": trip}, "max_s": {"xfer": trip}},
    }


def member_case(case_id: str, family: str, threads: int) -> dict:
    return {"case_id": case_id, "index": 0, "family": family, "threads": threads, "ranks": 1}


def test_only_a_member_slowed_in_the_state_defers_its_family(tmp_path):
    """Both 2-worker members' newest records are apart: the contended one ran twice as long in that
    state before, the static one as fast, so only the contended family is passed over, and its
    newest record (not its highest repetition) tells. A probe run saying near lets it run again."""
    near = [probe_record(k, 0.5, NEAR) for k in range(6)]
    records = {
        "contended": {r["rep"]: r for r in near}
        | {6: probe_record(6, 1.0, APART), 7: probe_record(7, 1.0, APART)},
        "static": {r["rep"]: r for r in near} | {6: probe_record(6, 0.5, APART)},
        "serial": {k: probe_record(k, 1.0, None) for k in range(6)},
    }
    contended = member_case("contended", "fc", 2)
    static = member_case("static", "fs", 2)
    serial = member_case("serial", "fc", 1)
    watch = TransferWatch(Records(tmp_path, records), "n1", lambda case: NEAR)
    assert watch.apart(static) is None and watch.apart(serial) is None
    assert watch.apart(contended) == (contended, APART, NEAR)
    needs = [Need(0.1, "family f", [(contended, 8)], 8), Need(0.05, "family f", [(static, 7)], 8)]
    # A trial of the family that runs only its serial member is not affected.
    assert choose(watch, [Need(0.2, "family f", [(serial, 8)], 8)], measure=False)[1] == []
    chosen, passed = choose(watch, needs, measure=False)
    assert chosen is needs[1] and [(n, [a.case["case_id"] for a in apart]) for n, apart in passed] == [
        (needs[0], ["contended"])
    ]
    # Written last (the stored rows' order): a near repetition, though not the highest.
    raw = tmp_path / "raw" / "contended"

    def store_in_order(reps):
        shutil.rmtree(raw, ignore_errors=True)
        raw.mkdir(parents=True)
        for k in reps:  # a process each
            record_store.store(raw, [minimal_record("contended", k, invocation=k) | records["contended"][k]])

    store_in_order((6, 7, 0))
    watch.ran(contended)
    assert watch.apart(contended) is None
    # A probe run replaces the newest record: apart records, but near now.
    store_in_order((0, 6, 7))
    watch.ran(contended)
    assert watch.apart(contended) is not None
    watch.known_at.clear()  # its state came in long ago
    chosen, passed = choose(watch, needs, measure=True)
    assert chosen is needs[0] and passed == []
