"""Resubmitting what a campaign still lacks: its missing and failed cases as new arrays per node type.

The files say what is done (jobs.status.case_states); the queue says what is still on its way
(jobs.slurm.queue.queue_states). Resume refuses while any case it would resubmit is still queued, so no
case runs twice at the same time, except for cases a submit limit held back (never queued), which it
submits while the rest still runs; run-case itself only runs the repetitions that have no record yet.
"""

import sys
from pathlib import Path

from jobs.site_options import SiteOptions
from jobs.slurm.arrayspec import format_array_spec
from jobs.slurm.checks import check_controller, check_placements, check_throttle, slurm_node_types
from jobs.slurm.limits import assumed_limits, read_limits
from jobs.slurm.queue import queue_states
from jobs.slurm.rounds import submit_round
from jobs.slurm.submissions import read_submissions, unsubmitted
from sbcore.errors import ScalebenchError


def next_round(campaign_dir: Path) -> int:
    """1 + the highest round submitted or whose scripts exist (dry runs leave scripts, not submissions)."""
    rounds = [int(e.get("round", 1)) for e in read_submissions(campaign_dir)]
    jobs_dir = campaign_dir / "jobs"
    if (jobs_dir / "analysis.sbatch").exists():
        rounds.append(1)
    for script in jobs_dir.glob("resume*-analysis.sbatch"):
        digits = script.name.removeprefix("resume").split("-", 1)[0]
        if digits.isdigit():
            rounds.append(int(digits) + 1)
    return max(rounds, default=0) + 1


def resume_campaign(
    campaign_dir: Path,
    throttle: int,
    dry_run: bool,
    out=sys.stdout,
    site: SiteOptions | None = None,
    max_array_size: int | None = None,
) -> list[str]:
    from jobs.campaign import load_cases
    from jobs.status import case_states

    check_throttle(throttle)
    cases = load_cases(campaign_dir)
    states = case_states(campaign_dir)
    todo = [s["index"] for s in states if s["state"] != "done"]
    if not todo:
        print(f"campaign {campaign_dir.name}: all {len(cases)} case(s) done; nothing to resume", file=out)
        return []
    nodes = slurm_node_types(dict.fromkeys(cases[i]["node_type"] for i in todo), site=site)
    limits = assumed_limits(max_array_size)
    if not dry_run:
        check_controller()
        limits = read_limits(max_array_size)
        queued = queue_states(campaign_dir)
        busy = [i for i in todo if i in queued]
        # Cases a submit limit held back were never queued: they may go while the others still run.
        waiting = unsubmitted(campaign_dir, todo)
        if busy and waiting:
            print(
                f"campaign {campaign_dir.name}: {len(busy)} case(s) still in the Slurm queue; submitting "
                f"the {len(waiting)} case(s) not submitted yet",
                file=out,
            )
            todo = waiting
        elif busy:
            seen = sorted({queued[i] for i in busy})
            raise ScalebenchError(
                f"campaign {campaign_dir.name}: case(s) {format_array_spec(busy)} still in the Slurm queue "
                f"({'/'.join(seen)}); wait for them or scancel them, then resume again (nothing submitted)"
            )
        check_placements(nodes, out)
    round_no = next_round(campaign_dir)
    failed = sum(1 for s in states if s["state"] == "failed" and s["index"] in set(todo))
    print(
        f"campaign {campaign_dir.name}: resubmitting {len(todo)} of {len(cases)} case(s) "
        f"({failed} failed, {len(todo) - failed} missing): {format_array_spec(todo)}",
        file=out,
    )
    command = "resume" + (" --dry-run" if dry_run else "")
    return submit_round(campaign_dir, cases, todo, nodes, throttle, round_no, command, dry_run, limits, out)
