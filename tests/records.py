"""Reading what a run stored, for tests: every record of a campaign or of one case, from the cases'
records.jsonl (and rep-<k>.json files of the older layout), parsed as json.loads sees them."""

import json
from pathlib import Path

from sbcore import layout, record_store


def case_records(campaign: Path, case_id: str) -> list[dict]:
    """Every record of the case, in file order (records.jsonl lines, then rep-<k>.json files by k)."""
    directory = layout.case_dir(campaign, case_id)
    data = record_store.read(directory / layout.RECORDS_FILE)
    records = [json.loads(line) for _, line in record_store.complete_lines(data)]
    legacy = sorted(
        (int(m.group(1)), p) for p in directory.glob("rep-*.json") if (m := layout.REP_FILE.match(p.name))
    )
    return records + [json.loads(p.read_text()) for _, p in legacy]


def case_record(campaign: Path, case_id: str, rep: int) -> dict:
    """The record of repetition `rep` of the case (KeyError when there is none)."""
    by_rep = {r["rep"]: r for r in reversed(case_records(campaign, case_id))}
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
