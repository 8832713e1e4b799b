"""The whole run's deadline (the experiment key `run_budget_s`, kept in campaign.toml's [campaign]
table): the local runner's measuring phase ends within that many seconds of wall time, whatever the
host's speed.

The runner (jobs/runner.py) runs its trials in rounds when the campaign has a run budget (trial t of
every trial group before trial t+1 of any, jobs/families.py), so a deadline that comes first leaves
every family with about the same number of trials instead of some with all and others with none. It
starts a trial only when the trial's processes, at the times this run measured for their cases (the
longest of each case; a case not yet run: the longest of any), end before the deadline: a trial that
cannot finish is not begun (half a trial pairs nothing); a smaller one of the same round that can
still runs, and no trial of a later round begins (startable), so every case ends within one trial of
the others however the host's speed changed while the last round ran. The
comparison target's trials (jobs/comparison_sampling.py) obey the same test: the neediest family or
pair whose trial fits runs next, and they stop when none fits.
When the deadline stops the run, the runner says so in one line: how many trials each case got, the
cases cut short below their own minimum (`min_reps`), and the comparisons the comparison target still
wanted (the analysis reports each comparison left wider than its target and why,
analysis/stats/wide_comparisons.py).
"""

from __future__ import annotations

import time

from jobs.families import trial_of
from sbcore.cross_pairs import numbering_group


class RunDeadline:
    """Whether a trial fits the time left, from the process times this run measured."""

    def __init__(self, budget_s: float | None, clock=time.monotonic):
        self.budget_s = budget_s
        self.clock = clock
        self.start = clock()
        self.longest: dict[str, float] = {}  # case_id -> its longest process in this run (seconds)
        self.ended = False  # a trial was refused for the deadline

    @property
    def active(self) -> bool:
        return self.budget_s is not None

    def left(self) -> float:
        return float("inf") if self.budget_s is None else self.budget_s - (self.clock() - self.start)

    def ran(self, case: dict, seconds: float) -> None:
        """One process of the case took `seconds` of the runner's wall time."""
        cid = case["case_id"]
        self.longest[cid] = max(self.longest.get(cid, 0.0), seconds)

    def estimate(self, work: list[tuple]) -> float:
        """Seconds the processes of `work` ((case, invocation, ...) tuples) are expected to take."""
        unknown = max(self.longest.values(), default=0.0)
        return sum(self.longest.get(w[0]["case_id"], unknown) for w in work)

    def would_fit(self, work: list[tuple]) -> bool:
        """The trial `work` would end before the deadline (always without a budget)."""
        return self.budget_s is None or self.estimate(work) <= self.left()

    def fits(self, work: list[tuple]) -> bool:
        """would_fit; refusing a trial marks the run as ended by its budget."""
        if self.would_fit(work):
            return True
        self.ended = True
        return False


def in_trials(work: list[tuple]) -> list[list[tuple]]:
    """`work` ((case, invocation, place) in the runner's order) cut into its trials: the runs of one
    trial group's trial back to back (a case without a family: each process alone)."""
    out: list[list[tuple]] = []
    key = None
    for item in work:
        case, p, place = item
        here = (numbering_group(case), place.get("trial", trial_of(case, p)))
        if not case.get("family"):
            here = (case["case_id"], p)
        if out and here == key:
            out[-1].append(item)
        else:
            out.append([item])
        key = here
    return out


def round_of(trial: list[tuple]) -> int:
    """The round of a trial ((case, invocation, place) tuples): its trial index, or the invocation of
    a case without a family (the key jobs/families.py's trials sorts rounds by)."""
    case, p, place = trial[0]
    return place.get("trial", trial_of(case, p)) if case.get("family") else p


def startable(trials: list[list[tuple]], deadline: RunDeadline):
    """The trials to begin, in order, each checked against the time left when it is due: every one
    that fits; once one does not, only the others of its round that still fit, none of a later one."""
    refused = None
    for trial in trials:
        if refused is not None and round_of(trial) > refused:
            return
        if deadline.fits(trial):
            yield trial
        elif refused is None:
            refused = round_of(trial)


def end_line(deadline: RunDeadline, trials_by_case: dict[str, int], minimum: dict[str, int], wanted) -> str:
    """The runner's one line when the deadline stopped it: trials per case (fewest-most), the cases
    cut short below their own minimum, and the comparisons the comparison target still wanted."""
    counts = sorted(trials_by_case.values()) or [0]
    short = sorted(c for c, n in trials_by_case.items() if n < minimum.get(c, 0))
    line = (
        f"run budget: {deadline.budget_s:g} s ended the run: {counts[0]}-{counts[-1]} trials per case"
        if counts[0] != counts[-1]
        else f"run budget: {deadline.budget_s:g} s ended the run: {counts[0]} trials per case"
    )
    line += f"; {len(short)} cases cut short below their min_reps" if short else "; none cut short"
    wanted = list(wanted)
    if wanted:
        shown = ", ".join(wanted[:6]) + (f" and {len(wanted) - 6} more" if len(wanted) > 6 else "")
        line += f"; the comparison target still wanted trials of {shown}"
    return line + " (analyze lists the comparisons left wide and why)"
