"""A copy of a campaign with every case's records stored again as the runner stores them now
(scalebench.run/2, sbcore/record_store.py's store), a kernel process at a time: the records with one
`invocation`, `slurm` and `trial` are one process. What the v1 fixture's conversion test does, for a
campaign given on the command line (perf/compare_tables.py then compares the two analyses).

    python -m tests.convert_records_v2 CAMPAIGN COPY
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from sbcore import layout, record_store, stored_records


def processes(records) -> list[list[dict]]:
    by_process: dict = {}
    for record in records:
        key = (record.get("invocation"), json.dumps(record.get("slurm")), record.get("trial"))
        by_process.setdefault(key, []).append(record)
    return list(by_process.values())


def convert(campaign: Path, copy: Path) -> int:
    """Copies the campaign (without its analysis) and converts every case holding records.jsonl; returns
    how many records were stored."""
    shutil.copytree(campaign, copy, symlinks=True, ignore=shutil.ignore_patterns("analysis"))
    stored = 0
    for directory in sorted((copy / layout.RAW_DIR).iterdir()):
        if not (directory / layout.RECORDS_FILE).is_file():
            continue
        read = stored_records.read(directory, directory.name)
        order = sorted(read.records, key=lambda k: stored_records.written_order(read.places[k]))
        (directory / layout.RECORDS_FILE).unlink()
        for process in processes(read.records[k] for k in order):
            stored += len(record_store.store(directory, process))
    return stored


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.convert_records_v2", description=__doc__)
    parser.add_argument("campaign", type=Path)
    parser.add_argument("copy", type=Path, help="where to write the converted copy (must not exist)")
    args = parser.parse_args(argv)
    if args.copy.exists():
        parser.error(f"{args.copy}: exists")
    print(f"{args.copy}: {convert(args.campaign, args.copy)} records stored as scalebench.run/2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
