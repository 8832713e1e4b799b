"""Report section: provenance, the campaign's manifest as key/value tables (nested objects as their own
groups, lists of objects as tables; long groups folded)."""

from __future__ import annotations

import json

import pandas as pd

from analysis.outputs.report.blocks import Block, folded

FOLD_OVER = 8  # groups with more entries than this are folded


def _text(value) -> str:
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ", ".join(map(str, value))
    if isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values()):
        return ", ".join(f"{k} {_text(v)}" for k, v in sorted(value.items()))  # e.g. a node's topology
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else str(value)


def groups(manifest: dict) -> list[tuple[str, dict | pd.DataFrame]]:
    """Top-level scalars in one group, then one group per nested object (lists of objects: a table)."""
    top = {k: _text(v) for k, v in manifest.items() if not isinstance(v, dict) and not _is_records(v)}
    out: list[tuple[str, dict | pd.DataFrame]] = [("campaign", top)] if top else []
    for key, value in manifest.items():
        if isinstance(value, dict):
            flat = {k: v for k, v in value.items() if not _is_records(v)}
            out.append((key, {k: _text(v) for k, v in flat.items()}))
            out += [(f"{key}.{k}", pd.DataFrame(v)) for k, v in value.items() if _is_records(v)]
        elif _is_records(value):
            out.append((key, pd.DataFrame(value)))
    return out


def _is_records(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def section(result, plots) -> list[Block]:
    c = result.campaign
    b = []
    experiment = c.config.get("experiment") if isinstance(c.config.get("experiment"), dict) else c.config
    description = experiment.get("description") or c.config.get("description")
    if description:
        b.append(Block("p", f"Experiment: {description}"))
    if not c.manifest:
        b.append(Block("p", "manifest.json is missing or unreadable: provenance unknown."))
    for name, group in groups(c.manifest):
        block = Block("kv", group) if isinstance(group, dict) else Block("table", group)
        b.append(
            folded(f"{name} ({len(group)} entries)", [block]) if len(group) > FOLD_OVER else Block("h3", name)
        )
        if len(group) <= FOLD_OVER:
            b.append(block)
    return b
