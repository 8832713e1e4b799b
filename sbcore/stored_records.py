"""The one reader of a case's stored records, in either layout: repetition -> its counted record, and the
lines not counted ('<file>:<line>', why). Status, resume, run-case and every jobs-side reader go through
it (sbcore/layout.py: case_lines).

Read in this order, the first record of a repetition counting (sbcore/record_lines.py, the one rule):
1. scalebench.run/1: records.jsonl (one record per line), then rep-<k>.json files of older campaigns
   (where both hold a repetition, the rep-<k>.json file wins, as before);
2. scalebench.run/2: facts.jsonl (one line per kernel process, with the long tables of its fields'
   objects keyed by data: facts.<table>.csv) and reps.csv, reps-<n>.csv (one row per repetition,
   sbcore/record_rows.py); a row is the record of its process's facts and its own columns.
A row whose process has no facts line (or one its facts tables do not complete), a cut last row or
facts line, a row that does not decode: a problem, not counted. Files are read by
sbcore/campaign_access.py (no link followed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from sbcore import campaign_access, record_lines, record_rows

RECORDS_FILE = "records.jsonl"
FACTS_FILE = "facts.jsonl"
REPS_FILE = "reps.csv"
REPS_FILES = re.compile(r"^reps(?:-(\d+))?\.csv$")  # reps.csv, then reps-<n>.csv (another header)
TABLE_FILES = re.compile(r"^reps(?:-\d+)?\.[a-z_]+\.csv$")  # their long tables: reps[-<n>].<table>.csv
FACTS_TABLE_FILES = re.compile(r"^facts\.[a-z_]+\.csv$")  # facts.jsonl's long tables: facts.<table>.csv
REP_FILE = re.compile(r"^rep-(\d+)\.json$")
TABLES = tuple(record_rows.TABLES)  # the long tables beside a reps file (sbcore/record_rows.py)
FACTS_TABLES = tuple(record_rows.FACTS_TABLES)  # the long tables beside facts.jsonl


@dataclass
class CaseRecords:
    records: dict[int, dict] = field(default_factory=dict)
    problems: list[tuple[str, int, str]] = field(default_factory=list)  # (file name, line or 0, why)
    places: dict[int, tuple[str, int]] = field(default_factory=dict)  # rep -> (file name, line or 0)
    processes: int = 0  # facts lines (complete or not): the number the next process takes


def is_v2_file(name: str) -> bool:
    """facts.jsonl, reps.csv, reps-<n>.csv or one of their long tables."""
    return (
        name == FACTS_FILE
        or REPS_FILES.match(name) is not None
        or TABLE_FILES.match(name) is not None
        or FACTS_TABLE_FILES.match(name) is not None
    )


def table_path(reps: Path, table: str) -> Path:
    """The long table `table` of reps.csv (reps.<table>.csv) or of reps-<n>.csv (reps-<n>.<table>.csv)."""
    return reps.with_name(f"{reps.name.removesuffix('.csv')}.{table}.csv")


# The files today's writer writes (sbcore/record_store.py): a case holding no other record file is
# read by the analysis in columns (analysis/records/arrow_reader.py).
WRITER_FILES = (
    FACTS_FILE,
    *(record_rows.facts_table_file(t) for t in FACTS_TABLES),
    REPS_FILE,
    *(table_path(Path(REPS_FILE), t).name for t in TABLES),
)


def reps_files(directory: Path) -> list[str]:
    """reps.csv, then reps-<n>.csv by n."""
    if not directory.is_dir() or directory.is_symlink():
        return []
    found = [(int(m.group(1) or 0), p.name) for p in directory.iterdir() if (m := REPS_FILES.match(p.name))]
    return [name for _, name in sorted(found)]


def read(
    directory: Path,
    case_id: str,
    case: dict | None = None,
    campaign: str | None = None,
    reps: set[int] | None = None,
    records_bytes: int | None = None,
) -> CaseRecords:
    """Every counted record of the case directory (`case_id` its name; with the planned `case` and the
    `campaign` name, records that do not belong to them are problems too). With `reps`, the rows of
    reps.csv and its long tables whose `rep` cell is another repetition are not decoded (nor named as
    problems): whether repetition k counts depends on its own rows only, so the records of `reps`
    come out as a whole read gives them (what the writer asks before it appends). With `records_bytes`,
    only that many bytes of records.jsonl are read (its size when the campaign was listed)."""
    out = CaseRecords()
    _read_v1(directory, case_id, case, campaign, out, records_bytes)
    _read_v2(directory, case_id, case, campaign, out, reps)
    out.records = {k: out.records[k] for k in sorted(out.records)}
    return out


def written_order(place: tuple[str, int]) -> tuple[int, int]:
    """A sort key of where a record is (CaseRecords.places) in the order records were written: older
    rep-<k>.json files, then records.jsonl by line, then reps.csv and reps-<n>.csv by row."""
    name, line = place
    if name == RECORDS_FILE:
        return (1, line)
    match = REPS_FILES.match(name)
    return (2 + int(match.group(1) or 0), line) if match else (0, 0)


def _count(
    out: CaseRecords, name: str, number: int, record: dict | None, why: str | None, case_id, case, campaign
):
    """The rule of sbcore/record_lines.py applied to one decoded record."""
    if why is None:
        why = record_lines.field_problem(record)
    if why is None:
        why = record_lines.placement_problem(record, case_id, out.records)
    if why is None and case is not None:
        why = record_lines.belonging_problem(record, case, campaign)
    if why is None:
        out.records[record["rep"]] = record
        out.places[record["rep"]] = (name, number)
    else:
        out.problems.append((name, number, why))


def _data(directory: Path, name: str, out: CaseRecords) -> bytes | None:
    try:
        return campaign_access.read_path(directory / name, missing=b"")
    except campaign_access.UnsafeFile as err:  # not read: a resume refuses to run the case as well
        out.problems.append((name, 0, f"not read: {str(err).removeprefix(f'{directory / name}: ')}"))
    except OSError as err:
        out.problems.append((name, 0, f"not read: {err.strerror}"))
    return None


def _read_v1(directory, case_id, case, campaign, out: CaseRecords, size: int | None = None) -> None:
    data = _data(directory, RECORDS_FILE, out)
    data = data[:size] if data and size is not None else data
    if data:
        lines = record_lines.classify(data, case_id, case, campaign)
        out.records.update(lines.records)
        out.places.update((rep, (RECORDS_FILE, line)) for rep, line in lines.lines.items())
        out.problems.extend((RECORDS_FILE, number, why) for number, why in lines.problems)
    lines_counted = {rep: line for rep, (name, line) in out.places.items() if name == RECORDS_FILE}
    if not directory.is_dir() or directory.is_symlink():
        return
    for path in sorted(directory.iterdir()):
        match = REP_FILE.match(path.name)
        if not match:
            continue
        try:
            record, why = record_lines.decode_line(campaign_access.read_path(path))
        except OSError as err:
            record, why = None, f"cannot read: {err.strerror}"
        if why is None and (record["case_id"] != case_id or record["rep"] != int(match.group(1))):
            why = "case_id or rep does not match the file's place"
        if why is None and case is not None:
            why = record_lines.belonging_problem(record, case, campaign)
        if why is None:
            rep = int(match.group(1))
            if rep in lines_counted:  # the older file counts, as it always did; the line is named
                out.problems.append(
                    (
                        RECORDS_FILE,
                        lines_counted.pop(rep),
                        record_lines.placement_problem(record, None, {rep}),
                    )
                )
            out.records[rep] = record
            out.places[rep] = (path.name, 0)
        else:
            out.problems.append((path.name, 0, why))


def _other_rep(header: list[str], values: list, reps: set[int] | None) -> bool:
    """The row's `rep` cell holds a repetition outside `reps` (never without `reps`, or when the cell
    does not read as one: the whole decoding then judges the row)."""
    if reps is None or "rep" not in header or len(values) != len(header):
        return False
    text = values[header.index("rep")][0]
    try:
        return int(text) not in reps
    except (TypeError, ValueError):
        return False


def _read_v2(directory, case_id, case, campaign, out: CaseRecords, reps: set[int] | None = None) -> None:
    facts, numbers = {}, {}
    data = _data(directory, FACTS_FILE, out) or b""
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    out.processes = len(lines) + (1 if data[end:] else 0)
    for number, line in enumerate(lines, start=1):
        try:
            decoded = json.loads(line)
            process = decoded[record_rows.PROCESS_KEY] if isinstance(decoded, dict) else None
            if not isinstance(process, int) or isinstance(process, bool):
                raise ValueError("no integer 'process'")
            if process in facts:
                raise ValueError(f"process {process} has an earlier facts line")
            facts[process] = decoded
            numbers[process] = number
        except (ValueError, UnicodeDecodeError) as err:
            out.problems.append((FACTS_FILE, number, f"not a facts line: {err}"))
    if data[end:].strip():
        out.problems.append((FACTS_FILE, len(lines) + 1, record_lines.TRUNCATED))
    facts_of = _process_facts(directory, facts, numbers, out, reps)
    for name in reps_files(directory):
        data = _data(directory, name, out)
        if not data:
            continue
        items = _items(directory, name, out, reps)
        rows, tail = record_rows.complete_rows(data)
        header = None
        for number, raw in rows:
            if header is None:
                header = raw.decode(errors="replace").split(",")
                continue
            if not raw.strip():
                continue
            record, why = None, None
            try:
                values = record_rows.cells(raw)
                if _other_rep(header, values, reps):
                    continue
                process, part = record_rows.rep_part(header, values, items)
                if process not in facts:
                    why = f"process {process} has no facts line in {FACTS_FILE}"
                elif isinstance(own := facts_of(process), str):
                    why = own
                else:
                    record = record_rows.joined(own, part)
            except (ValueError, UnicodeDecodeError) as err:
                why = f"not a row: {err}"
            _count(out, name, number, record, why, case_id, case, campaign)
        if tail.strip():
            out.problems.append((name, (rows[-1][0] + 1) if rows else 1, record_lines.TRUNCATED))


def _process_facts(directory: Path, facts: dict, numbers: dict, out: CaseRecords, reps: set[int] | None):
    """process -> its facts with their fields' objects rebuilt from facts.<table>.csv, or why not (a
    facts line names fields in tables that do not complete them: the rows of its process do not count;
    a facts line whose rows never came, cut by a crash, is no problem). A row of a facts table that
    does not decode is a problem (file:line); a cut last row is not read. With `reps` (the writer's
    question), only the rows of the processes asked for are decoded (and named), when asked."""
    data = {}
    for table in record_rows.FACTS_TABLES:
        name = record_rows.facts_table_file(table)
        if (found := _data(directory, name, out)) is not None:
            data[table] = found
    items: dict = {}
    if reps is None:
        items, problems = record_rows.facts_items(data)
        out.problems.extend(problems)
    rebuilt: dict = {}

    def facts_of(process: int) -> dict | str:
        if process not in rebuilt:
            own = items
            if reps is not None:
                own, problems = record_rows.facts_items(data, {process})
                out.problems.extend(problems)
            try:
                rebuilt[process] = record_rows.process_facts(facts[process], own)
            except ValueError as err:
                rebuilt[process] = f"process {process}: {FACTS_FILE}:{numbers[process]}: {err}"
        return rebuilt[process]

    return facts_of


def _items(directory: Path, name: str, out: CaseRecords, reps: set[int] | None = None) -> dict:
    """The items of the long tables of one reps file: (process, rep) -> table -> index -> columns. A
    row that does not decode is a problem; a row of a repetition missing it is not counted. The last
    row of an item wins: a writer never writes one twice, but after facts.jsonl and reps.csv were
    removed by hand, process numbers start again and the newer rows are the ones their rows count."""
    items: dict = {}
    for table in record_rows.TABLES:
        table_name = table_path(directory / name, table).name
        data = _data(directory, table_name, out)
        if not data:
            continue
        rows, _ = record_rows.complete_rows(data)  # a cut last row: its repetition's row comes later
        header = None
        for number, raw in rows:
            if header is None:
                header = raw.decode(errors="replace").split(",")
                continue
            try:
                values = record_rows.cells(raw)
                if _other_rep(header, values, reps):
                    continue
                (process, rep, index), columns = record_rows.table_rows(header, values, table)
            except (ValueError, UnicodeDecodeError) as err:
                out.problems.append((table_name, number, f"not a row: {err}"))
                continue
            items.setdefault((process, rep), {}).setdefault(table, {})[index] = columns
    return items
