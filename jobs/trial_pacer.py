"""The pace of the runner's comparison trials (jobs/runner.py): which family's trial runs next with
the hosts's slow cache-line transfer state in mind (jobs/transfer_state.py: `choose` passes over a
family slowed now), how long to wait when every family that needs a trial is affected (up to the
experiment's `comparison_wait_s`, in steps of WAIT_STEP_S), and the campaign log's lines and the
runner's counts of both."""

from __future__ import annotations

import time

from jobs import transfer_state
from jobs.comparison_sampling import Need
from jobs.transfer_state import TransferWatch, choose, transfer_line
from sbcore.clock import utc_stamp


class TrialPacer:
    """Picks the family of each comparison trial with the transfer state in mind (choose), waits when
    every family that needs a trial is affected, and keeps the campaign log's lines and the runner's
    counts of it (`comparison_deferrals`, `comparison_waits`, `comparison_wait_s`)."""

    def __init__(self, watch: TransferWatch, wait_s: float, counts: dict, log):
        self.watch = watch
        self.wait_left = wait_s
        self.counts = counts
        self.log = log
        self.deferred: set[str] = set()  # families passed over now (logged once per spell)

    def pick(self, needs: list[Need]) -> tuple[Need | None, float]:
        """(the family to run, None after a wait step: decide again; the seconds spent on probe runs
        and waiting, which the comparison budget does not charge). With the wait spent, the neediest
        family runs whatever its state."""
        began = time.monotonic()
        chosen, passed = choose(self.watch, needs, measure=self.wait_left > 0)
        for need, apart in passed:
            if need.name not in self.deferred:
                self.counts["comparison_deferrals"] += 1
                self.log.write(f"{utc_stamp()} comparison deferred: {transfer_line(need, apart)}\n")
        self.deferred = {need.name for need, _ in passed}
        waiting = chosen is None and self.wait_left > 0
        if waiting:
            time.sleep(min(transfer_state.WAIT_STEP_S, max(0.0, self.wait_left - (time.monotonic() - began))))
            self.counts["comparison_waits"] += 1
        spent = time.monotonic() - began
        self.wait_left -= spent
        self.counts["comparison_wait_s"] += spent
        if waiting:
            reasons = "; ".join(transfer_line(need, apart) for need, apart in passed)
            self.log.write(f"{utc_stamp()} comparison waited {spent:.1f} s: {reasons}\n")
            return None, spent
        return chosen or needs[0], spent
