"""Atomic writes of the analysis outputs (tables, plots, reports, cache).

The mechanism (temp file, fsync, rename) is the engine's, `jobs.atomic`; the analysis only adds that
its output directories are created on first use.
"""

from pathlib import Path

from jobs.atomic import write_atomic


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))
