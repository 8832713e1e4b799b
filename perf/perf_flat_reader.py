"""Reading a campaign's records: the analysis's load (analysis/records/load.py) of the flat
scalebench.run/2 layout (read in columns: arrow_reader.py, stored_frame.py) and of records.jsonl (format
v1, record by record: derive.py), on the same generated repetitions. Each load runs cold (no analysis
cache) in a fresh process under /usr/bin/time -v: wall time and peak resident memory. Prints; asserts
nothing.

    perf/perf_flat_reader.py [--reps 200000,1000000] [--per-case 1000] [--per-process 10] [--keep DIR]
                             [--formats v2,v1]

The repetitions are the records of tests/fixtures/campaign-v1, their times varied, written by
sbcore/record_rows.py (the runner's encoding) without the runner's lock and reading back.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sbcore import layout, record_rows, record_store, stored_records  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "campaign-v1"


def templates() -> list[dict]:
    out = []
    for directory in sorted((FIXTURE / "raw").iterdir()):
        records, _ = layout.case_lines(FIXTURE, directory.name)
        out.extend(records.values())
    return out


def generate(root: Path, reps: int, per_case: int, per_process: int) -> None:
    """root/v1 (records.jsonl per case) and root/v2 (facts.jsonl, reps.csv, long tables) with the same
    records."""
    rng = random.Random(1)
    bases = templates()
    for n_case in range(max(1, reps // per_case)):
        case_id = f"{n_case:012x}"
        base = bases[n_case % len(bases)]
        v1_dir, v2_dir = (root / v / "raw" / case_id for v in ("v1", "v2"))
        v1_dir.mkdir(parents=True)
        v2_dir.mkdir(parents=True)
        v1, facts, rows, tables = [], [], [], {}
        for start in range(0, per_case, per_process):
            process = start // per_process
            records = [
                base
                | {"case_id": case_id, "rep": k, "invocation": process, "in_process_rep": k - start}
                | {"wall_s": base["wall_s"] * rng.uniform(0.9, 1.2), "setup_s": rng.uniform(0, 1e-3)}
                for k in range(start, min(per_case, start + per_process))
            ]
            v1.extend(record_store.encode(r) for r in records)
            shared, parts = record_rows.split(records)
            facts.append(record_rows.facts_line(shared, process))
            for part in parts:
                row, items = record_rows.encode(part, process)
                rows.append(row)
                for table, payload in items.items():
                    tables.setdefault(table, []).append(payload)
        (v1_dir / stored_records.RECORDS_FILE).write_bytes(b"".join(v1))
        (v2_dir / stored_records.FACTS_FILE).write_bytes(b"".join(facts))
        (v2_dir / stored_records.REPS_FILE).write_bytes(record_rows.HEADER + b"".join(rows))
        for table, payloads in tables.items():
            (v2_dir / f"reps.{table}.csv").write_bytes(record_rows.TABLE_HEADERS[table] + b"".join(payloads))


def read_loader(campaign: Path) -> str:
    """The analysis's load (analysis/records/load.py), cold: the records frame it builds."""
    from analysis.records import load

    start = time.perf_counter()
    loaded = load.load_records(campaign, processes=2, use_cache=False)
    rows, columns = loaded.records.shape
    seconds = time.perf_counter() - start
    return f"rows {rows} columns {columns} problems {len(loaded.problems)} in {seconds:.2f} s"


def measured(campaign: Path) -> str:
    """The analysis's load in a fresh process under /usr/bin/time -v."""
    run = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, __file__, "--read", str(campaign)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", run.stderr).group(1)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    return f"{run.stdout.strip()}; process wall {wall}, peak RSS {rss / 1024:.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", default="200000,1000000")
    parser.add_argument("--per-case", type=int, default=1000)
    parser.add_argument("--per-process", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="generate into this directory and keep it")
    parser.add_argument("--formats", default="v2,v1", help="which layouts to load, in this order")
    parser.add_argument("--read", metavar="CAMPAIGN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read:
        print(read_loader(Path(args.read)))
        return
    for reps in (int(n) for n in args.reps.split(",")):
        root = args.keep / str(reps) if args.keep else Path(tempfile.mkdtemp(prefix="sb-flat-"))
        try:
            start = time.perf_counter()
            made = "kept from an earlier run"
            if not (root / "v2").is_dir():
                generate(root, reps, args.per_case, args.per_process)
                made = f"generated in {time.perf_counter() - start:.0f} s"
            print(
                f"{reps} repetitions ({args.per_case} per case, {args.per_process} per process): {made}",
                flush=True,
            )
            sizes = {
                v: sum(p.stat().st_size for p in (root / v).rglob("*") if p.is_file()) for v in ("v1", "v2")
            }
            print(f"  bytes: v1 {sizes['v1'] / 2**20:.0f} MiB, v2 {sizes['v2'] / 2**20:.0f} MiB", flush=True)
            for layout_name in args.formats.split(","):
                what = {"v1": "records.jsonl (v1)", "v2": "flat (v2)"}[layout_name]
                print(f"  analysis load, {what:<18}: {measured(root / layout_name)}", flush=True)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
