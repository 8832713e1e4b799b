"""Parser for `likwid-perfctr -O` CSV (likwid 5.2 `printOutput` in likwid.lua).

Layout: per group (and, in marker mode, per region) a `STRUCT,Info` block, then tables announced by
`TABLE,[Region <tag>,]Group <n> <Raw|Raw STAT|Metric|Metric STAT>,<GROUP>,<rows>` with one header row and
<rows> data rows; marker-mode Raw tables carry three region-info rows first that <rows> does not count.
Rows are padded with commas to the widest table. STAT tables exist only for more than one hardware thread,
so sum/min/max/avg are computed here when they are missing. Unmeasured values (`-`, `nan`, `inf`) become
None.
"""

import math
from pathlib import Path

from sbcore.errors import ScalebenchError

KINDS = ("Raw", "Raw STAT", "Metric", "Metric STAT")


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


def _summary(per: dict) -> dict:
    values = [v for v in per.values() if isinstance(v, int | float)]
    if not values:
        return {"sum": None, "min": None, "max": None, "avg": None}
    return {"sum": sum(values), "min": min(values), "max": max(values), "avg": sum(values) / len(values)}


class _Reader:
    def __init__(self, lines: list[str], source: str):
        self.lines, self.pos, self.source = lines, 0, source

    def take(self, what: str) -> list[str]:
        if self.pos >= len(self.lines):
            raise ScalebenchError(f"{self.source}: truncated: end of file while reading {what}")
        self.pos += 1
        return _fields(self.lines[self.pos - 1])


def parse_perfctr_csv(text: str, source: str = "likwid-perfctr CSV") -> dict:
    """{region or None: {"group", "hwthreads", "events", "metrics", "region_info"}}.

    events/metrics map a name to {"per_hwthread": {"<cpu>": value}, "sum", "min", "max", "avg"}
    (events also carry "counter"); region_info holds per-thread "runtime_s" and "call_count" (marker mode).
    """
    reader = _Reader(text.splitlines(), source)
    regions: dict = {}
    while reader.pos < len(reader.lines):
        line = reader.lines[reader.pos]
        if not line.startswith("TABLE,"):
            reader.pos += 1
            continue
        header = reader.take("a TABLE line")
        if len(header) >= 5 and header[1].startswith("Region "):
            region, kind_text, group, count_text = (
                header[1][len("Region ") :],
                header[2],
                header[3],
                header[4],
            )
        elif len(header) >= 4:
            region, kind_text, group, count_text = None, header[1], header[2], header[3]
        else:
            raise ScalebenchError(f"{source}:{reader.pos}: malformed TABLE line {line!r}")
        kind = kind_text.split(" ", 2)[-1] if kind_text.startswith("Group ") else ""
        if kind not in KINDS:
            raise ScalebenchError(f"{source}:{reader.pos}: unknown table kind {kind_text!r}")
        try:
            count = int(count_text)
        except ValueError:
            raise ScalebenchError(f"{source}:{reader.pos}: bad row count {count_text!r}") from None
        entry = regions.setdefault(
            region, {"group": group, "hwthreads": [], "events": {}, "metrics": {}, "region_info": {}}
        )
        if kind == "Raw" and region is not None:
            _region_info(reader, entry)
        columns = reader.take(f"the header of {kind_text}")
        rows = [reader.take(f"row {i + 1} of {count} of {kind_text}") for i in range(count)]
        if kind == "Raw":
            _per_thread(reader, entry, entry["events"], columns, rows, first_value=2)
        elif kind == "Metric":
            _per_thread(reader, entry, entry["metrics"], columns, rows, first_value=1)
        else:
            _stat(reader, entry["events" if kind == "Raw STAT" else "metrics"], columns, rows, kind)
    for entry in regions.values():
        for table in (entry["events"], entry["metrics"]):
            for values in table.values():
                if "sum" not in values:
                    values.update(_summary(values["per_hwthread"]))
    if not regions:
        raise ScalebenchError(f"{source}: no TABLE found (not likwid-perfctr -O output, or empty)")
    return regions


def _thread_ids(reader: _Reader, names: list[str]) -> list[str]:
    ids = []
    for name in names:
        if not name.startswith("HWThread "):
            raise ScalebenchError(
                f"{reader.source}:{reader.pos}: expected 'HWThread <n>' column, got {name!r}"
            )
        ids.append(name.split(" ", 1)[1])
    return ids


def _region_info(reader: _Reader, entry: dict) -> None:
    head = reader.take("the region info")
    if not head or head[0] != "Region Info":
        raise ScalebenchError(f"{reader.source}:{reader.pos}: expected 'Region Info' row, got {head!r}")
    ids = _thread_ids(reader, head[1:])
    for key in ("runtime_s", "call_count"):
        row = reader.take("the region info")
        entry["region_info"][key] = {i: _number(v) for i, v in zip(ids, row[1:], strict=False)}


def _per_thread(reader, entry, table, columns, rows, first_value: int) -> None:
    ids = _thread_ids(reader, columns[first_value:])
    entry["hwthreads"] = [int(i) for i in ids]
    for row in rows:
        if len(row) < first_value + len(ids):
            raise ScalebenchError(f"{reader.source}: truncated row {','.join(row)!r} ({len(ids)} threads)")
        item = {"per_hwthread": {i: _number(v) for i, v in zip(ids, row[first_value:], strict=False)}}
        if first_value == 2:
            item["counter"] = row[1]
        table[row[0]] = item


def _stat(reader, table, columns, rows, kind) -> None:
    first = columns.index("Sum") if "Sum" in columns else None
    if first is None:
        raise ScalebenchError(f"{reader.source}:{reader.pos}: {kind} table without a Sum column")
    for row in rows:
        name = row[0].removesuffix(" STAT")
        if len(row) < first + 4:
            raise ScalebenchError(f"{reader.source}: truncated row {','.join(row)!r} in {kind}")
        stats = dict(
            zip(("sum", "min", "max", "avg"), (_number(v) for v in row[first : first + 4]), strict=True)
        )
        table.setdefault(name, {"per_hwthread": {}}).update(stats)


def parse_perfctr_file(path: Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ScalebenchError(f"{path}: cannot read likwid-perfctr output: {err.strerror}") from None
    return parse_perfctr_csv(text, str(path))
