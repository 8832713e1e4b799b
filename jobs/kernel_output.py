"""What a kernel process prints: its JSON records (scalebench.run/1) among other stdout lines."""

import json

from sbcore.record_fields import SCHEMA


def parse_records(stdout: str) -> tuple[list[dict], list[dict]]:
    """(warm-up records, measured records) among stdout lines; anything else on stdout is ignored."""
    warm, measured = [], []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        # (a measured record without a field the rule requires is refused by name: run_case)
        if not isinstance(record, dict) or record.get("schema") != SCHEMA or "warmup" not in record:
            continue
        (warm if record["warmup"] else measured).append(record)
    return warm, measured
