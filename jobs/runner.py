"""Local campaign run: every missing repetition of every case meant for this machine, interleaved in a
seeded random order across cases so that slow drift (thermal, other load) spreads over all cases instead
of biasing whichever ran last. Ctrl-C stops after killing the running kernel; finished records stay.
"""

import os
import random
import socket
import sys
from pathlib import Path

from tqdm import tqdm

from jobs.campaign import campaign_seed, load_cases
from jobs.config import load_node_types
from jobs.runcase import Context, run_rep
from jobs.status import missing_reps
from sbcore.clock import utc_stamp


def local_node_types() -> set[str]:
    return {name for name, node in load_node_types().items() if node.detect}


def pending_work(campaign_dir: Path, cases: list[dict], seed: int) -> list[tuple[dict, int]]:
    work = [(case, k) for case in cases for k in missing_reps(campaign_dir, case)]
    random.Random(seed).shuffle(work)
    return work


def run_local(campaign_dir: Path, progress: bool = True, out=sys.stderr) -> dict:
    """Run what is missing; returns counts {"ok", "failed", "skipped_cases", "interrupted"}."""
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
    work = pending_work(campaign_dir, mine, campaign_seed(campaign_dir))
    counts = {"ok": 0, "failed": 0, "skipped_cases": len(cases) - len(mine), "interrupted": False}
    if not work:
        return counts
    ctx = Context.for_campaign(campaign_dir)
    log_path = campaign_dir / "logs" / f"run-{utc_stamp()}-{socket.gethostname()}-{os.getpid()}.log"
    log_path.parent.mkdir(exist_ok=True)
    bar = tqdm(total=len(work), unit="rep", file=out, disable=not progress, dynamic_ncols=True)
    # Line-buffered: a kill -9 loses at most the line being written; the records are the truth anyway.
    with log_path.open("a", buffering=1) as log:
        try:
            for case, k in work:
                bar.set_description(f"case {case['index']} rep {k}")
                result = run_rep(ctx, case, k)
                reason = result.get("reason", "")
                where = f"case {case['index']} {case['case_id']} rep {k}"
                log.write(f"{utc_stamp()} {where} {result['outcome']} {reason}\n")
                if result["outcome"] == "failed":
                    counts["failed"] += 1
                    bar.write(f"case {case['index']} ({case['case_id']}) rep {k} failed: {reason}", file=out)
                elif result["outcome"] == "ok":
                    counts["ok"] += 1
                bar.set_postfix(ok=counts["ok"], failed=counts["failed"])
                bar.update()
        except KeyboardInterrupt:
            counts["interrupted"] = True
            log.write(f"{utc_stamp()} interrupted\n")
        finally:
            bar.close()
    return counts
