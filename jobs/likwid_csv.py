"""Parser for `likwid-perfctr -O` CSV as written by likwid 4.3 to 5.2 (`printOutput` in likwid.lua; see
notes in README, "Hardware counters").

Layout: per group (and, in marker mode, per region) a `STRUCT,Info,<n>` block, then tables announced by
`TABLE,[Region <tag>,]Group <n> <Raw|Raw STAT|Metric|Metric STAT>,<GROUP>,<rows>` with one header row and
<rows> data rows; marker-mode Raw tables carry three region-info rows first that <rows> does not count.
Rows are padded with commas to the widest table (likwid 4.3 pads less). Per-thread columns are labelled
`Core <n>` up to likwid 5.0 and `HWThread <n>` from 5.1 on; the rest of the writer is the same.

One event may be measured on several counters (Intel MEM: CAS_COUNT_RD on every memory channel), so
events are kept per counter, with a per-event total over its counters. STAT tables exist only for more
than one hardware thread, so sum/min/max/avg are computed when they are missing. Unmeasured values (`-`,
`nan`, `inf`) become None.

Files may hold several runs one after another (a region seen again starts the next run): only the first
run is read. Text outside STRUCT/TABLE blocks (program output) is skipped; anything inside a block that
does not fit the layout is an error naming the file and line.
"""

import math
from pathlib import Path

from sbcore.errors import ScalebenchError

KINDS = ("Raw", "Raw STAT", "Metric", "Metric STAT")
STATS = ("sum", "min", "max", "avg")
# Column label prefix -> the likwid versions that print it.
LABEL_STYLES = {"Core": "4.3-5.0", "HWThread": "5.1+"}


def _number(text: str):
    text = text.strip()
    if text in ("-", "", "nan", "-nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):  # a STAT row over only '-' values reports min = inf
        return None
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _fields(line: str) -> list[str]:
    fields = line.rstrip("\r\n").split(",")
    while fields and fields[-1] == "":
        fields.pop()
    return fields


def summary(per: dict) -> dict:
    values = [v for v in per.values() if isinstance(v, int | float)]
    if not values:
        return dict.fromkeys(STATS)
    return {"sum": sum(values), "min": min(values), "max": max(values), "avg": sum(values) / len(values)}


class _Reader:
    def __init__(self, lines: list[str], source: str):
        self.lines, self.pos, self.source = lines, 0, source
        self.style: str | None = None

    def fail(self, message: str, line: int | None = None):
        raise ScalebenchError(f"{self.source}:{line or self.pos}: {message}")

    def take(self, what: str) -> list[str]:
        if self.pos >= len(self.lines):
            raise ScalebenchError(f"{self.source}: truncated: end of file while reading {what}")
        self.pos += 1
        return _fields(self.lines[self.pos - 1])

    def thread_ids(self, names: list[str], line: int | None = None) -> list[str]:
        ids = []
        for name in names:
            style, _, number = name.partition(" ")
            if style not in LABEL_STYLES or not number.isdigit():
                self.fail(f"expected 'HWThread <n>' or 'Core <n>' column, got {name!r}", line)
            if self.style not in (None, style):
                self.fail(f"column {name!r} mixes label styles ('{self.style} <n>' before)", line)
            self.style = style
            ids.append(number)
        if not ids:
            self.fail("table without hardware-thread columns", line)
        return ids


def parse_perfctr_csv(text: str, source: str = "likwid-perfctr CSV") -> dict:
    """{region or None: {"group", "hwthreads", "label_style", "likwid_versions", "cpu", "events", "metrics",
    "region_info"}} of the first run in the text.

    metrics map a name to {"per_hwthread": {"<cpu>": value}, "sum", "min", "max", "avg"}; events map an
    event name to the same over the total of its counters, plus "counters": {counter: {"per_hwthread",
    "sum", "min", "max", "avg"}} (and "counter" when there is only one); region_info holds per-thread
    "runtime_s" and "call_count" (marker mode); cpu holds the `STRUCT,Info` rows ("CPU type", ...).
    """
    reader = _Reader(text.splitlines(), source)
    regions: dict = {}
    cpu: dict = {}
    while reader.pos < len(reader.lines):
        line = reader.lines[reader.pos]
        if line.startswith("STRUCT,"):
            info = _struct(reader)
            if info is not None:
                cpu = info
            continue
        if not line.startswith("TABLE,"):
            reader.pos += 1  # program output around the CSV
            continue
        region, kind, group, count = _table_line(reader)
        if kind == "Raw" and region in regions:
            break  # the same region again: the next run of a concatenated file
        entry = regions.setdefault(
            region,
            {"group": group, "hwthreads": [], "cpu": cpu, "events": {}, "metrics": {}, "region_info": {}},
        )
        if entry["group"] != group:
            reader.fail(f"group {group!r} in a table of region {region!r} of group {entry['group']!r}")
        if kind == "Raw" and region is not None:
            _region_info(reader, entry)
        columns = reader.take(f"the header of the {kind} table")
        start = reader.pos + 1
        rows = [reader.take(f"row {i + 1} of {count} of the {kind} table") for i in range(count)]
        if kind == "Raw":
            _raw(reader, entry, columns, rows, start)
        elif kind == "Metric":
            _metric(reader, entry, columns, rows, start)
        else:
            _stat(reader, entry, kind, columns, rows, start)
        _no_extra_row(reader, len(columns))
    if not regions:
        raise ScalebenchError(f"{source}: no TABLE found (not likwid-perfctr -O output, or empty)")
    for entry in regions.values():
        entry["label_style"] = reader.style
        entry["likwid_versions"] = LABEL_STYLES[reader.style]
        _complete(entry)
    return regions


def _struct(reader: _Reader) -> dict | None:
    head = reader.take("a STRUCT line")
    if len(head) < 3 or not head[2].isdigit():
        reader.fail(f"malformed STRUCT line {','.join(head)!r}")
    rows = [reader.take(f"row {i + 1} of the STRUCT block") for i in range(int(head[2]))]
    if head[1] != "Info":
        return None
    # Values may hold commas themselves (POWER9: "POWER9, altivec supported").
    return {row[0].removesuffix(":"): ",".join(row[1:]) for row in rows if row}


def _table_line(reader: _Reader) -> tuple:
    line = reader.pos + 1
    header = reader.take("a TABLE line")
    if len(header) >= 5 and header[1].startswith("Region "):
        region, kind_text, group, count_text = header[1][len("Region ") :], *header[2:5]
    elif len(header) >= 4:
        region, kind_text, group, count_text = None, *header[1:4]
    else:
        reader.fail(f"malformed TABLE line {','.join(header)!r}", line)
    kind = kind_text.split(" ", 2)[-1] if kind_text.startswith("Group ") else ""
    if kind not in KINDS:
        reader.fail(f"unknown table kind {kind_text!r}", line)
    if not count_text.isdigit():
        reader.fail(f"bad row count {count_text!r}", line)
    return region, kind, group, int(count_text)


def _region_info(reader: _Reader, entry: dict) -> None:
    head = reader.take("the region info")
    if not head or head[0] != "Region Info":
        reader.fail(f"expected 'Region Info' row, got {','.join(head)!r}")
    ids = reader.thread_ids(head[1:])
    for key, label in (("runtime_s", "RDTSC Runtime [s]"), ("call_count", "call count")):
        row = reader.take("the region info")
        if not row or row[0] != label or len(row) != len(ids) + 1:
            reader.fail(f"expected {label!r} row with {len(ids)} values, got {','.join(row)!r}")
        entry["region_info"][key] = {i: _number(v) for i, v in zip(ids, row[1:], strict=True)}


def _values(reader: _Reader, row: list[str], first: int, ids: list[str], line: int) -> dict:
    if len(row) != first + len(ids):
        reader.fail(f"row {','.join(row)!r} has {len(row) - first} values for {len(ids)} threads", line)
    return {i: _number(v) for i, v in zip(ids, row[first:], strict=True)}


def _set_threads(reader: _Reader, entry: dict, ids: list[str]) -> None:
    threads = [int(i) for i in ids]
    if entry["hwthreads"] and entry["hwthreads"] != threads:
        reader.fail(f"threads {threads} differ from the region's other tables {entry['hwthreads']}")
    entry["hwthreads"] = threads


def _raw(reader, entry, columns, rows, start) -> None:
    if columns[:2] != ["Event", "Counter"]:
        reader.fail(f"expected 'Event,Counter,...' header, got {','.join(columns)!r}", start - 1)
    ids = reader.thread_ids(columns[2:], start - 1)
    _set_threads(reader, entry, ids)
    for n, row in enumerate(rows):
        if len(row) < 2 or not row[0] or not row[1]:
            reader.fail(f"event row without event or counter: {','.join(row)!r}", start + n)
        counters = entry["events"].setdefault(row[0], {"counters": {}})["counters"]
        if row[1] in counters:
            reader.fail(f"event {row[0]} on counter {row[1]} twice", start + n)
        counters[row[1]] = {"per_hwthread": _values(reader, row, 2, ids, start + n)}


def _metric(reader, entry, columns, rows, start) -> None:
    if columns[:1] != ["Metric"]:
        reader.fail(f"expected 'Metric,...' header, got {','.join(columns)!r}", start - 1)
    ids = reader.thread_ids(columns[1:], start - 1)
    _set_threads(reader, entry, ids)
    for n, row in enumerate(rows):
        if not row or row[0] in entry["metrics"]:
            reader.fail(f"empty or repeated metric row {','.join(row)!r}", start + n)
        entry["metrics"][row[0]] = {"per_hwthread": _values(reader, row, 1, ids, start + n)}


def _stat(reader, entry, kind, columns, rows, start) -> None:
    first = 2 if kind == "Raw STAT" else 1
    if columns[first : first + 4] != ["Sum", "Min", "Max", "Avg"]:
        reader.fail(f"{kind} table header {','.join(columns)!r} lacks Sum,Min,Max,Avg", start - 1)
    for n, row in enumerate(rows):
        if len(row) != first + 4 or not row[0].endswith(" STAT"):
            reader.fail(f"malformed {kind} row {','.join(row)!r}", start + n)
        name = row[0].removesuffix(" STAT")
        stats = dict(zip(STATS, (_number(v) for v in row[first:]), strict=True))
        if kind == "Raw STAT":
            target = entry["events"].get(name, {}).get("counters", {}).get(row[1])
        else:
            target = entry["metrics"].get(name)
        if target is None:
            reader.fail(f"{kind} row {row[0]!r} has no per-thread row before it", start + n)
        target.update(stats)


def _no_extra_row(reader: _Reader, width: int) -> None:
    """A data row right after a table means its row count was wrong: never drop such a row silently."""
    if reader.pos >= len(reader.lines):
        return
    row = _fields(reader.lines[reader.pos])
    numeric = all(isinstance(_number(v), int | float | None) for v in row[2:])
    if len(row) == width > 2 and row[0] and numeric and not row[0].startswith(("TABLE", "STRUCT")):
        reader.fail(f"row {','.join(row)!r} beyond the table's declared row count", reader.pos + 1)


def _complete(entry: dict) -> None:
    for metric in entry["metrics"].values():
        if "sum" not in metric:
            metric.update(summary(metric["per_hwthread"]))
    for event in entry["events"].values():
        counters = event["counters"]
        for values in counters.values():
            if "sum" not in values:
                values.update(summary(values["per_hwthread"]))
        total = {}
        for thread in entry["hwthreads"]:
            parts = [c["per_hwthread"][str(thread)] for c in counters.values()]
            parts = [p for p in parts if isinstance(p, int | float)]
            total[str(thread)] = sum(parts) if parts else None
        event["per_hwthread"] = total
        event.update(summary(total))
        if len(counters) == 1:
            event["counter"] = next(iter(counters))


def parse_perfctr_file(path: Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as err:
        raise ScalebenchError(f"{path}: cannot read likwid-perfctr output: {err.strerror}") from None
    return parse_perfctr_csv(text, str(path))
