"""Whether a comparison family is in a slow cache-line transfer now, so that the runner's comparison
target (jobs/runner.py) does not spend trials the analysis will leave out (sbcore/slow_transfer.py).

A family's next trial is affected when a member it runs with two or more workers is in the slow
state now (the slowest round trip of its newest record, or of a probe run measured since, over
TRANSFER_SLOW_RATIO x the case's normal on this host) and that case runs slower in the state (its
records so far; a case never measured in it is taken to). The runner then runs another family's trial
(serial or one-worker comparisons, or members not slowed in that state), or, with none left, waits in
steps of WAIT_STEP_S and measures again, up to the experiment's `comparison_wait_s` in one run.

Measuring again: a probe run, one repetition of the member without warm-up, whose record's probe
(docs/formats.md: `after` is the state at its end) is read and not stored; the campaign log keeps the
round trips that keep a family waiting. It holds the host's measurement lock like any process of the runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from jobs.comparison_sampling import Need, RecordCache
from jobs.kernel_output import parse_records
from jobs.measure_lock import measuring
from jobs.runcase import CaseError, Context, build_command, run_process
from sbcore import layout, stored_records
from sbcore.case_shape import case_workers
from sbcore.slow_transfer import case_slowed, in_slow_state, normals, round_trips, transfer_rep

WAIT_STEP_S = 5.0  # a wait step: a tenth of an "apart" phase of our guests (~50 s, docs/campaigns.md)


class Apart(NamedTuple):
    """A member in the slow state now."""

    case: dict
    round_trip: float  # its newest round trip (s)
    normal: float  # its case's normal one on this host (s)


def probe_round_trip(ctx: Context, case: dict) -> float | None:
    """The slowest round trip after one repetition of the case (a probe run, not stored); None when
    the run or its probe gave none."""
    quiet = case | {"warmup": 0, "dump_image": False, "counter_group": None}
    try:
        command = build_command(ctx, quiet, 0, nreps=1)
    except CaseError:
        return None
    directory = layout.case_dir(ctx.campaign_dir, case["case_id"])  # where a kernel's outputs land
    directory.mkdir(parents=True, exist_ok=True)
    with measuring(ctx.wait_for_lock):
        _, out, _, _ = run_process(command.argv, command.env, case["timeout_s"], directory, command.affinity)
    _, measured = parse_records(out)
    probe = measured[-1].get("probe") if measured else None
    after = probe.get("after") if isinstance(probe, dict) else None
    slowest = round_trips({"after": after})[1]
    return slowest if slowest is not None else round_trips(probe)[1]


class TransferWatch:
    """The transfer state of each family member the runner knows: from the newest record, or from a
    probe run measured since (forgotten when the case runs again)."""

    def __init__(self, cache: RecordCache, hostname: str, measure: Callable[[dict], float | None]):
        self.cache = cache
        self.hostname = hostname
        self.measure = measure
        self.probed: dict[str, float | None] = {}
        self.known_at: dict[str, float] = {}  # when the state last came in (monotonic seconds)
        self.newest: dict[str, dict | None] = {}  # the newest record of each case

    def ran(self, case: dict) -> None:
        self.probed.pop(case["case_id"], None)
        self.newest.pop(case["case_id"], None)
        self.known_at[case["case_id"]] = time.monotonic()

    def newest_record(self, case: dict, records: dict[int, dict]) -> dict | None:
        """The case's record written last: its last counted row or line (sbcore/stored_records.py; the
        records come sorted by repetition, and trials run in a shuffled order); the highest repetition
        of an older campaign's rep-<k>.json files."""
        if case["case_id"] not in self.newest:
            directory = layout.case_dir(self.cache.campaign_dir, case["case_id"])
            stored = stored_records.read(directory, case["case_id"])
            order = stored_records.written_order
            written = [(order(place), k) for k, place in stored.places.items() if k in records]
            newest = records[max(written)[1]] if written and max(written)[0][0] > 0 else None
            self.newest[case["case_id"]] = newest or (records[max(records)] if records else None)
        return self.newest[case["case_id"]]

    def apart(self, case: dict) -> Apart | None:
        """The member in the slow state now, in one its case is slowed by; None otherwise."""
        if case_workers(case) < 2:
            return None
        records = self.cache.get(case).records
        reps = [transfer_rep(r) for r in records.values()]
        normal = normals(reps).get(self.hostname)
        last = self.newest_record(case, records)
        if last is None or normal is None or normal <= 0:
            return None
        newest = self.probed.get(case["case_id"], transfer_rep(last).slowest)
        if not in_slow_state(newest, normal):
            return None
        state = [r.host == self.hostname and in_slow_state(r.slowest, normal) for r in reps]
        return Apart(case, newest, normal) if case_slowed(reps, state) else None

    def affected(self, members: list[dict]) -> list[Apart]:
        return [a for a in map(self.apart, members) if a is not None]

    def stale(self, case: dict) -> bool:
        """Its state came in longer than a wait step ago (or before this run's comparison trials)."""
        return time.monotonic() - self.known_at.get(case["case_id"], float("-inf")) > WAIT_STEP_S

    def measure_again(self, case: dict) -> float | None:
        """A probe run of the case: its round trip is the case's state until it runs again."""
        round_trip = self.measure(case)
        self.probed[case["case_id"]] = round_trip
        self.known_at[case["case_id"]] = time.monotonic()
        return round_trip


def choose(watch: TransferWatch, needs: list[Need], measure: bool) -> tuple[Need | None, list]:
    """(the neediest family's trial not affected by a slow transfer, None when all are; the (need,
    [Apart]) of the families passed over). Only the cases the trial runs count: a trial of a
    family's static members beside its baseline runs while its contended ones are slowed. With
    `measure`, a member whose slow state came in longer than WAIT_STEP_S ago is measured again first
    (a probe run)."""
    passed = []
    for need in needs:
        cases = list({case["case_id"]: case for case, _ in need.work}.values())  # the trial's own
        apart = watch.affected(cases)
        if measure and any(watch.stale(a.case) for a in apart):
            for a in apart:
                watch.measure_again(a.case)
            apart = watch.affected(cases)
        if not apart:
            return need, passed
        passed.append((need, apart))
    return None, passed


def transfer_line(need: Need, apart: list[Apart]) -> str:
    """Why a family waits, for the campaign log: its members in the slow state, their round trips."""
    members = ", ".join(
        f"case {a.case['index']} {a.case['case_id']} round trip {a.round_trip:.3g} s, "
        f"{a.round_trip / a.normal:.1f}x its normal {a.normal:.3g} s"
        for a in apart
    )
    return f"{need.name} in a slow cache-line transfer ({members})"
