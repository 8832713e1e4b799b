"""The whole run's deadline (`run_budget_s`, jobs/run_deadline.py) kept by the real runner on stand-in
kernels that take real time: the run stops within its budget, in rounds (every family about as many
trials), starts no trial it cannot finish, and says in one line which comparisons it cut."""

import io
from pathlib import Path

import pytest

from jobs import runner
from jobs.campaign import campaign_run_budget, create_campaign, load_cases
from jobs.config import load_experiment, load_node_types
from jobs.run_deadline import RunDeadline
from jobs.runner import run_local
from sbcore.errors import UsageError
from tests.jobs.conftest import stand_in_bin_dir
from tests.records import case_records

FAKE = Path(__file__).resolve().parent / "sampling_fake" / "fake_kernel_distribution.py"
SLEEP_S = 0.05  # each stand-in process's own time

EXPERIMENT = """
description = "slow kernels under a run budget"
interleave = "family"
target_ci = 0.5
min_reps = 6
max_reps = 40
warmup = 0
seed = 7
comparison_target_ci = 0.001
comparison_budget_s = 60
{budget}

[[sweep]]
binary = ["fakedist-py-serial", "fakedist-py-omp"]
params = {{ spread = [0.1, 0.2], sleep = [{sleep}] }}
"""


@pytest.fixture
def slow_bin_dir(tmp_path, monkeypatch) -> Path:
    # A lock of its own: another measurer on this host would hold the test's clock.
    monkeypatch.setenv("SCALEBENCH_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    return stand_in_bin_dir(tmp_path / "bin", FAKE, ("fakedist-py-serial", "fakedist-py-omp"), monkeypatch)


def campaign_for(tmp_path, budget: str, sleep: float = SLEEP_S) -> Path:
    experiment = tmp_path / "budget.toml"
    experiment.write_text(EXPERIMENT.format(sleep=sleep, budget=budget))
    return create_campaign(experiment, name="b", results_dir=tmp_path / "res")


def trials_of(campaign: Path) -> dict[str, int]:
    return {
        c["case_id"]: len({r["trial"] for r in case_records(campaign, c["case_id"])})
        for c in load_cases(campaign)
    }


class WatchedDeadline(RunDeadline):
    """The real deadline on the wall clock, remembering each trial it let begin: (the seconds that trial
    was expected to take, the seconds left then)."""

    made: list = []

    def __init__(self, budget_s):
        super().__init__(budget_s)
        self.begun: list[tuple[float, float]] = []
        WatchedDeadline.made.append(self)

    def fits(self, work):
        estimate, left = self.estimate(work), self.left()
        fitting = super().fits(work)
        if fitting:
            self.begun.append((estimate, left))
        return fitting


def test_slow_kernels_stop_within_the_run_budget_and_say_what_was_cut(tmp_path, slow_bin_dir, monkeypatch):
    """Two families of two cases, 6 trials each by their own rule (3 processes a trial, the baseline
    twice, of at least 0.25 s each: 36 processes, at least 9 s however fast the runner and the host)
    and an unreachable comparison target: on the wall clock, a 5 s budget begins only
    trials expected to end within it, then ends the run (how long a process really takes on a loaded
    host is no test's to assert: the counted-clock tests below check the decisions exactly), every
    case with about as many trials (rounds), and the line names the families the comparison target
    still wanted and the cases cut short."""
    WatchedDeadline.made.clear()
    monkeypatch.setattr(runner, "RunDeadline", WatchedDeadline)
    campaign = campaign_for(tmp_path, "run_budget_s = 5", sleep=0.25)
    assert campaign_run_budget(campaign) == 5
    out = io.StringIO()
    counts = run_local(campaign, progress=False, out=out)
    [deadline] = WatchedDeadline.made
    assert deadline.begun and all(estimate <= left for estimate, left in deadline.begun), deadline.begun
    assert deadline.ended  # a trial was refused: the budget, not the cases' own rule, ended the run
    trials = trials_of(campaign)
    assert max(trials.values()) - min(trials.values()) <= 1
    assert min(trials.values()) < 6  # the budget came first
    line = counts["budget_line"]
    assert line.startswith("run budget: 5 s ended the run: ") and "\n" not in line
    assert "cases cut short below their min_reps" in line
    assert "the comparison target still wanted trials of family fakedist-py-" in line
    log = next((campaign / "logs").glob("run-*.log")).read_text()
    assert line in log


class CountingDeadline(RunDeadline):
    """The run budget on a clock that counts processes (each one "second"): the same decisions
    whatever the host's load."""

    made: list = []

    def __init__(self, budget_s):
        self.processes = 0
        super().__init__(budget_s, clock=lambda: self.processes)
        CountingDeadline.made.append(self)

    def ran(self, case, seconds):
        self.processes += 1
        super().ran(case, 1.0)


def test_the_comparison_target_stops_at_the_run_budget(tmp_path, slow_bin_dir, monkeypatch):
    """A budget of 45 processes: the cases' own trials (6 each by their rule, a 7th where a case's
    times asked for it; 3 processes a trial, 2 families), then the comparison target's trials of 3
    processes until the next would pass 45; the line says what the target still wanted."""
    CountingDeadline.made.clear()
    monkeypatch.setattr(runner, "RunDeadline", CountingDeadline)
    campaign = campaign_for(tmp_path, "run_budget_s = 45")
    counts = run_local(campaign, progress=False, out=io.StringIO())
    [deadline] = CountingDeadline.made
    trials = trials_of(campaign)
    assert min(trials.values()) >= 6
    assert counts["comparison_trials"] >= 1
    assert 45 - 3 < deadline.processes <= 45  # stopped where one more trial would not fit
    assert "still wanted trials of family fakedist-py-" in counts["budget_line"]


class SlowFamilyDeadline(CountingDeadline):
    """The counted clock, but one family's processes take three "seconds" each, as when the host
    slowed down while that family's last trial ran: its next trial stops fitting before the other
    family's does."""

    def ran(self, case, seconds):
        slow = case["params"]["spread"] == 0.2
        self.processes += 3 if slow else 1
        RunDeadline.ran(self, case, 3.0 if slow else 1.0)


@pytest.mark.parametrize("budget", [20, 23, 26, 31])
def test_a_family_slower_near_the_deadline_does_not_break_the_rounds(
    tmp_path, slow_bin_dir, monkeypatch, budget
):
    """Trials of 3 processes: 3 "seconds" for one family, 9 for the other. When the slow family's
    trial no longer fits, the fast family may still run its trial of that round but none after it:
    every case ends within one trial of the others."""
    CountingDeadline.made.clear()
    monkeypatch.setattr(runner, "RunDeadline", SlowFamilyDeadline)
    campaign = campaign_for(tmp_path, f"run_budget_s = {budget}")
    counts = run_local(campaign, progress=False, out=io.StringIO())
    [deadline] = CountingDeadline.made
    trials = trials_of(campaign)
    assert max(trials.values()) - min(trials.values()) <= 1, trials
    assert deadline.processes <= budget and counts["budget_line"]


def test_once_a_trial_is_refused_no_later_round_begins():
    """startable: every trial that fits; after a refusal, the smaller ones of the same round only."""
    from jobs.run_deadline import startable

    left = [10.0]
    deadline = RunDeadline(10.0, clock=lambda: 10.0 - left[0])
    deadline.longest = {"big": 4.0, "small": 1.0}
    big, small = ({"case_id": x, "family": x} for x in ("big", "small"))

    def trial(case, t):
        return [(case, t, {"trial": t})]

    order = [trial(big, 0), trial(small, 0), trial(big, 1), trial(small, 1), trial(small, 2)]
    begun = []
    for t in startable(order, deadline):
        begun.append((t[0][0]["case_id"], t[0][1]))
        left[0] -= deadline.estimate(t)
    # 10 s: big 0 (4), small 0 (1), big 1 (4) leaves 1: small 1 fits its round; small 2 is a later round
    assert begun == [("big", 0), ("small", 0), ("big", 1), ("small", 1)]
    left[0] = 3.0
    deadline.ended = False
    begun = [(t[0][0]["case_id"], t[0][1]) for t in startable(order[2:], deadline)]
    assert begun == [("small", 1)] and deadline.ended  # big 1 refused, small 1 of its round still runs


def test_without_a_budget_the_run_says_nothing_of_one(tmp_path, slow_bin_dir):
    campaign = campaign_for(tmp_path, "")
    assert campaign_run_budget(campaign) is None
    text = (campaign / "campaign.toml").read_text()
    assert "run_budget_s" not in text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("run_budget_s = 0", r"bad.toml: run_budget_s = 0: must be a finite number > 0$"),
        ("run_budget_s = -5", r"bad.toml: run_budget_s = -5: must be a finite number > 0$"),
        ('run_budget_s = "180"', r"bad.toml: run_budget_s = '180': must be a number$"),
        ("run_budget_s = inf", r"bad.toml: run_budget_s = inf: must be <= 604800$"),
        ("run_budget_s = true", r"bad.toml: run_budget_s = true: must be a number$"),
    ],
)
def test_a_run_budget_is_checked_in_one_line(tmp_path, line, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'description = "x"\n{line}\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n')
    with pytest.raises(UsageError, match=message) as caught:
        load_experiment(path, load_node_types())
    assert "\n" not in str(caught.value)


def test_a_trial_starts_only_when_its_processes_end_before_the_deadline():
    """The estimate: each case's longest process of this run, a case not yet run the longest of any;
    a trial that would end after the deadline is refused (and the run marked as ended by it), a
    smaller one still fits."""
    from jobs.run_deadline import in_trials

    now = [0.0]
    deadline = RunDeadline(10.0, clock=lambda: now[0])
    a, b, c = ({"case_id": x, "family": "f", "trial_group": "g"} for x in "abc")
    deadline.ran(a, 1.0)
    deadline.ran(a, 3.0)
    deadline.ran(b, 2.0)
    now[0] = 4.0  # 6 s left
    assert deadline.estimate([(a, 0, {}), (c, 0, {})]) == 6.0  # c unknown: the longest of any (a's 3 s)
    assert deadline.fits([(a, 0, {}), (b, 0, {})]) and not deadline.ended  # 5 s
    assert not deadline.fits([(a, 0, {}), (b, 0, {}), (c, 0, {})])  # 8 s
    assert deadline.ended and deadline.fits([(b, 0, {})])
    assert RunDeadline(None).fits([(a, 0, {})] * 1000)
    work = [(a, 0, {"trial": 0}), (b, 0, {"trial": 0}), (a, 1, {"trial": 1}), ({"case_id": "x"}, 0, {})]
    assert [len(t) for t in in_trials(work)] == [2, 1, 1]
