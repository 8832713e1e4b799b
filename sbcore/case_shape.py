"""A case's shape, declared once for the runner and the analysis: its workers (threads x ranks),
whether they oversubscribe the cores and how many cores they can use. Each works on plain numbers and
on pandas columns alike, and on a case dict (`case_workers`)."""


def workers(threads, ranks):
    """Threads x ranks: every worker of the case (numbers or columns)."""
    return threads * ranks


def case_workers(case: dict) -> int:
    """Workers of a case as `cases.jsonl` or a record holds it (threads and ranks default to 1)."""
    return workers(case.get("threads", 1), case.get("ranks", 1))


def oversubscribed(workers, cores):
    """More workers than cores (scalars or columns). `cores` may be the node type's core count or a
    speedup's usable_cores (below): the workers exceed either exactly when they exceed the cores.
    Unknown cores (NaN) oversubscribe nothing."""
    return workers > cores


def usable_cores(workers, cores):
    """min(workers, cores): the cores the case's workers can run on at once, and so the most speedup
    they allow (speedup.csv's usable_cores; not models.csv's amdahl_limit, the speedup a fitted serial
    fraction allows at any worker count). Unknown cores (NaN) leave the workers. Scalars or columns."""
    over = oversubscribed(workers, cores)
    if hasattr(over, "where"):  # columns
        return workers.where(~over, cores)
    return cores if over else workers
