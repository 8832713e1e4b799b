"""Planning conducted trials (experiment key `conduct = true`, jobs/conduct.py): which cases are
conducted (`conduct` in cases.jsonl), and the baseline each of them runs with."""

from jobs.binaries import is_mpi
from jobs.families import grouped, is_baseline
from sbcore.case_shape import case_workers


def mark_conducted(cases: list[dict], cpus_of: dict[str, int]) -> None:
    """Marks `conduct = True`, in place, on each family member with more than one worker, no more than
    its node type's CPUs, one kernel process (no MPI launcher, no user's program: the turns' pipes
    reach the kernel itself only) and a pinned or confined placement, whose family
    has a serial baseline; the others run as before."""
    for members in grouped(cases, "family").values():
        if not any(is_baseline(c) for c in members):
            continue
        for case in members:
            workers = case_workers(case)
            placed = case.get("pin", "none") != "none" or case.get("cpus")
            one_process = case.get("ranks", 1) == 1 and not is_mpi(case["model"]) and not case.get("program")
            if 1 < workers <= cpus_of[case["node_type"]] and one_process and placed:
                case["conduct"] = True


def conducted_references(cases: list[dict]) -> dict[str, dict]:
    """case_id -> its family's serial baseline, for the members planned with `conduct = true`
    (jobs/conduct.py)."""
    found = {}
    for members in grouped(cases, "family").values():
        baseline = next((c for c in members if is_baseline(c)), None)
        if baseline is not None:
            found |= {c["case_id"]: baseline for c in members if c.get("conduct")}
    return found
