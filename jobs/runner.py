"""Local campaign run: every invocation each case meant for this machine still needs, interleaved in a
seeded random order across cases so that slow drift (thermal, other load) spreads over all cases instead
of biasing whichever ran last. Cases with a precision target are sampled in passes: after each pass,
the cases that have not met their target (sbcore.sampling) get one more invocation each, again in a
shuffled order, until every case is done or has failed. Cases planned with a comparison family
(`interleave = "family"`, jobs/families.py) run in trials instead of one by one: the members of a
family needing the same invocation back to back, in a fresh random order. Ctrl-C stops after killing
the running kernel; finished records stay. With a comparison target (`comparison_target_ci`,
jobs/comparison_sampling.py), once every case has met its own rule, the runner keeps running trials of
the family whose paired speedups are least precise, until all meet it or its budget is spent; a
family in a slow cache-line transfer is passed over or waited out (jobs/trial_pacer.py). With a run
budget (`run_budget_s`, jobs/run_deadline.py) the trials run in rounds and none starts that the time
left cannot finish; the runner says in one line where the budget ended the run.
"""

import os
import random
import socket
import sys
import time
from pathlib import Path

from tqdm import tqdm

from jobs import simd_bounds
from jobs.campaign import campaign_run_budget, campaign_seed, load_cases
from jobs.comparison_sampling import RecordCache, comparison_target, family_needs
from jobs.conduct_plan import conducted_references
from jobs.config import load_node_types
from jobs.duets import duet_partners, run_duet
from jobs.families import DEFAULT_COMPARISON_WAIT_S, numbered_trial, trials
from jobs.hostinfo import host_topology
from jobs.measure_lock import measuring
from jobs.pinning import pin_cpus
from jobs.run_deadline import RunDeadline, end_line, in_trials, startable
from jobs.runcase import Context, run_invocation
from jobs.status import next_invocations, ok_records
from jobs.transfer_state import TransferWatch, probe_round_trip
from jobs.trial_pacer import TrialPacer
from sbcore import campaign_access, sampling
from sbcore.clock import utc_stamp


def local_node_types() -> set[str]:
    return {name for name, node in load_node_types().items() if node.detect}


def pending_work(
    campaign_dir: Path, cases: list[dict], rng: random.Random, rounds: bool = False
) -> list[tuple[dict, int, dict]]:
    """One pass: (case, invocation) pairs that the cases' sampling rules ask for now, in trials (in
    rounds under a run budget, jobs/run_deadline.py)."""
    work = [(case, p) for case in cases for p in next_invocations(campaign_dir, case)]
    return trials(work, rng, rounds=rounds)


def trials_run(campaign_dir: Path, case: dict) -> int:
    """The trials the case has a measured process in (its invocations without a trial: one each)."""
    records = ok_records(campaign_dir, case).values()
    return len({r.get("trial", r.get("invocation")) for r in records})


def run_local(campaign_dir: Path, progress: bool = True, out=sys.stderr, wait_for_lock: bool = True) -> dict:
    """Run what is missing; returns counts {"ok", "failed", "skipped_cases", "interrupted",
    "comparison_trials", "comparison_deferrals", "comparison_waits", "comparison_wait_s"}."""
    campaign_dir = Path(campaign_dir)
    cases = load_cases(campaign_dir)
    local = local_node_types()
    mine = [c for c in cases if c["node_type"] in local]
    others = sorted({c["node_type"] for c in cases} - local)
    if others:
        print(
            f"note: {len(cases) - len(mine)} cases of node types {', '.join(others)} are not run locally; "
            "submit them to Slurm",
            file=out,
        )
    rng = random.Random(campaign_seed(campaign_dir))
    deadline = RunDeadline(campaign_run_budget(campaign_dir))
    work = pending_work(campaign_dir, mine, rng, rounds=deadline.active)
    counts = {
        "ok": 0,
        "failed": 0,
        "skipped_cases": len(cases) - len(mine),
        "interrupted": False,
        "comparison_trials": 0,
        "comparison_deferrals": 0,  # times a family was passed over for a slow cache-line transfer
        "comparison_waits": 0,  # wait steps with every family that needed a trial in one
        "comparison_wait_s": 0.0,  # seconds of those steps and of probe runs (not charged to the budget)
        "budget_line": None,  # the line saying where the run budget ended the run (jobs/run_deadline.py)
    }
    if not work and not comparison_target(mine):
        return counts
    ctx = Context.for_campaign(campaign_dir, wait_for_lock)
    log_path = campaign_dir / "logs" / f"run-{utc_stamp()}-{socket.gethostname()}-{os.getpid()}.log"
    log_fd = campaign_access.open_in(
        campaign_dir, log_path.relative_to(campaign_dir), os.O_WRONLY | os.O_CREAT | os.O_APPEND
    )
    bar = tqdm(total=len(work), unit="run", file=out, disable=not progress, dynamic_ncols=True)
    failed_cases: set[str] = set()  # not retried in this run: a failure is for a person to look at
    # Line-buffered: a kill -9 loses at most the line being written; the records are the truth anyway.
    with open(log_fd, "a", buffering=1) as log:

        def run_one(case: dict, p: int, place: dict, beyond_target: bool = False, **duet) -> float:
            """Runs invocation p of the case; returns how long it waited for the measurement lock.
            `duet`: cpu and lock_held of a duet half (run_invocation)."""
            if case["case_id"] in failed_cases:
                bar.update()
                return 0.0
            bar.set_description(f"case {case['index']} run {p}")
            began = time.monotonic()
            reference = references.get(case["case_id"])
            result = run_invocation(
                ctx, case, p, beyond_target=beyond_target, place=place, reference=reference, **duet
            )
            lock_wait = float((result.get("record") or {}).get("lock_wait_s") or 0.0)
            deadline.ran(case, time.monotonic() - began - lock_wait)  # its own time, without the wait
            reason = result.get("reason", "")
            where = f"case {case['index']} {case['case_id']} invocation {p}"
            log.write(f"{utc_stamp()} {where} {result['outcome']} {reason}\n")
            if result["outcome"] == "failed":
                counts["failed"] += 1
                failed_cases.add(case["case_id"])
                bar.write(f"case {case['index']} ({case['case_id']}) run {p} failed: {reason}", file=out)
            elif result["outcome"] == "ok":
                counts["ok"] += result["records"]
            bar.set_postfix(reps=counts["ok"], failed=counts["failed"])
            bar.update()
            return lock_wait

        partners = duet_partners(mine)
        references = conducted_references(mine)

        def duet_half(case: dict, p: int, cpu: int, partner: dict) -> float:
            where = {"trial": p, "duet_partner": partner["case_id"], "duet_cpu": cpu}
            return run_one(case, p, where, cpu=cpu, lock_held=True)

        duet_cpus = None

        def run_pass(work: list[tuple[dict, int, dict]]) -> None:
            """Runs one pass; the two halves of a duet at once, when both need that invocation."""
            nonlocal duet_cpus
            pending = {(case["case_id"], p) for case, p, _ in work}
            done: set[tuple[str, int]] = set()
            for trial in startable(in_trials(work), deadline):  # those the time left can finish
                for case, p, place in trial:
                    if (case["case_id"], p) in done:
                        continue
                    partner = partners.get(case["case_id"])
                    if (
                        partner is None
                        or (partner["case_id"], p) not in pending
                        or partner["case_id"] in failed_cases
                    ):
                        run_one(case, p, place)
                        continue
                    duet_cpus = duet_cpus or pin_cpus("cores", 2, host_topology(ctx.host))
                    with measuring(ctx.wait_for_lock):
                        run_duet(duet_half, case, partner, p, duet_cpus)
                    done.add((partner["case_id"], p))

        try:
            # The host's SIMD bounds, measured once per host and campaign, before the first process:
            # not in the process times the run budget plans with.
            with measuring(ctx.wait_for_lock):
                simd_bounds.cached_or_measured(campaign_dir)
            while work and not deadline.ended:
                run_pass(work)
                unmet = [c for c in mine if c["case_id"] not in failed_cases]
                work = pending_work(campaign_dir, unmet, rng, rounds=deadline.active)
                bar.total += len(work)
                bar.refresh()
            target = comparison_target(mine)
            if target and not deadline.ended:
                # Waits for another measurer's lock and for a slow transfer to pass do not count.
                start, waited = time.monotonic(), 0.0
                cache = RecordCache(campaign_dir)  # records read once; a case's again after it ran
                watch = TransferWatch(cache, ctx.hostname, lambda case: probe_round_trip(ctx, case))
                wait_s = min(target.get("wait_s", DEFAULT_COMPARISON_WAIT_S), max(0.0, deadline.left()))
                pacer = TrialPacer(watch, wait_s, counts, log)
                while time.monotonic() - start - waited < target["budget_s"]:
                    usable = [c for c in mine if c["case_id"] not in failed_cases]
                    needs = family_needs(cache, usable, target["target_ci"])
                    if not needs:
                        break
                    fitting = [n for n in needs if deadline.would_fit(n.work)]
                    if not fitting:  # the run budget has no room for any of them
                        deadline.ended = True
                        break
                    need, spent = pacer.pick(fitting)
                    waited += spent
                    if need is None:
                        continue
                    trial = need.work
                    if not deadline.fits(trial):
                        break
                    bar.total += len(trial)
                    for case, p, place in numbered_trial(trial, need.trial, rng):
                        waited += run_one(case, p, place, beyond_target=True)
                        cache.forget(case)
                        watch.ran(case)
                    counts["comparison_trials"] += 1
            if deadline.ended:
                counts["budget_line"] = budget_end(campaign_dir, deadline, mine, target, failed_cases)
                log.write(f"{utc_stamp()} {counts['budget_line']}\n")
        except KeyboardInterrupt:
            counts["interrupted"] = True
            log.write(f"{utc_stamp()} interrupted\n")
        finally:
            bar.close()
    return counts


def budget_end(campaign_dir: Path, deadline: RunDeadline, cases: list[dict], target, failed: set) -> str:
    """The line saying where the run budget ended the run (jobs/run_deadline.py's end_line)."""
    usable = [c for c in cases if c["case_id"] not in failed]
    wanted = []
    if target:
        wanted = [need.name for need in family_needs(RecordCache(campaign_dir), usable, target["target_ci"])]
    return end_line(
        deadline,
        {c["case_id"]: trials_run(campaign_dir, c) for c in usable},
        {c["case_id"]: sampling.trial_bounds(c)[0] for c in usable},
        wanted,
    )
