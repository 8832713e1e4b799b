"""Reading what a run stored, for tests: every counted record of a campaign or of one case, through the one
reader of a case directory (sbcore/stored_records.py: scalebench.run/2 rows and facts, records.jsonl and
rep-<k>.json files of older campaigns), as json.loads sees them."""

import json
from pathlib import Path

from sbcore import layout, record_rows, record_store, stored_records


def case_records(campaign: Path, case_id: str) -> list[dict]:
    """Every counted record of the case, in the order they were written."""
    read = stored_records.read(layout.case_dir(campaign, case_id), case_id)
    order = sorted(read.records, key=lambda k: stored_records.written_order(read.places[k]))
    return [read.records[k] for k in order]


def case_record(campaign: Path, case_id: str, rep: int) -> dict:
    """The record of repetition `rep` of the case (KeyError when there is none)."""
    by_rep = {r["rep"]: r for r in case_records(campaign, case_id)}
    return by_rep[rep]


def campaign_records(campaign: Path) -> list[dict]:
    """Every record of every case of the campaign."""
    raw = Path(campaign) / layout.RAW_DIR
    return [r for d in sorted(raw.iterdir()) if d.is_dir() for r in case_records(campaign, d.name)]


def case_probe(campaign: Path, case_id: str, rep: int) -> dict:
    """The per-CPU probe times of repetition `rep` of the case (its probes.jsonl line; KeyError when
    there is none)."""
    data = record_store.read(layout.probes_path(campaign, case_id))
    by_rep = {line["rep"]: line for line in (json.loads(raw) for _, raw in record_store.complete_lines(data))}
    return by_rep[rep]


def minimal_record(case_id: str, rep: int, **extra) -> dict:
    """The smallest record that counts (sbcore/record_lines.py: the fields the analysis relies on)."""
    return {
        "schema": "scalebench.run/1", "kernel": "mcpi", "lang": "c", "model": "serial", "threads": 1,
        "ranks": 1, "params": {}, "rep": rep, "wall_s": 0.1, "checksum": "x", "case_id": case_id,
        "status": "ok", **extra,
    }  # fmt: skip


def plant(directory: Path, records: list[dict]) -> None:
    """Append records to a case directory as the runner stores them (scalebench.run/2: a facts line per
    record and its row), without the writer's checks: a test's stray or conflicting records."""
    for record in records:
        read = stored_records.read(directory, directory.name)
        facts, (part,) = record_rows.split([record])
        line, facts_tables = record_rows.facts_encode(facts, read.processes)
        with (directory / stored_records.FACTS_FILE).open("ab") as handle:
            handle.write(line)
        for table, payload in facts_tables.items():
            path = directory / record_rows.facts_table_file(table)
            _append(path, record_rows.FACTS_TABLE_HEADERS[table], payload)
        row, tables = record_rows.encode(part, read.processes)
        reps = directory / stored_records.REPS_FILE
        for table, payload in tables.items():
            _append(stored_records.table_path(reps, table), record_rows.TABLE_HEADERS[table], payload)
        _append(reps, record_rows.HEADER, row)


def _append(path: Path, header: bytes, payload: bytes) -> None:
    with path.open("ab") as handle:
        handle.write((b"" if path.stat().st_size else header) + payload)
