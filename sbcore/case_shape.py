"""A case's shape, declared once for the runner and the analysis: its workers (threads x ranks)
and whether they oversubscribe the cores. Each works on plain numbers and on pandas columns alike,
and on a case dict (`case_workers`)."""


def workers(threads, ranks):
    """Threads x ranks: every worker of the case (numbers or columns)."""
    return threads * ranks


def case_workers(case: dict) -> int:
    """Workers of a case as `cases.jsonl` or a record holds it (threads and ranks default to 1)."""
    return workers(case.get("threads", 1), case.get("ranks", 1))


def oversubscribed(workers, cores):
    """More workers than cores (scalars or columns). `cores` may be the node type's core count or a
    speedup's usable_cores, min(workers, cores) (analysis/checks.py): the workers exceed either exactly
    when they exceed the cores. Unknown cores (NaN) oversubscribe nothing."""
    return workers > cores
