"""The records table's columns of stored records (scalebench.run/2) read by analysis/records/arrow_reader.py,
without a Python object per repetition: the same columns analysis/records/derive.py gives record by
record (its reference, tested to agree).

- Copied fields: a repetition's from its reps.csv column, a process's from its facts line.
- A process's derived columns (params, build, counters, ...): derive.derived(..., PROCESS) once per
  distinct set of the facts they come from.
- A repetition's derived columns: the clock, the probe, the ranks' times, the warm-up count and the last
  warm-up's time from their columns at once; the pinning, placement, scheduling scenario and result
  (which repeat over a case's repetitions) by derive's functions once per distinct set of their cells and
  long-table items.
- A row with extra_json (a value the flat shape does not hold) is derived whole, by derive.

`invalid_cases` names the cases whose rows the one rule (sbcore/record_lines.py) might not all count as
they are: those are read by sbcore/stored_records.py instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analysis.records import derive
from analysis.records.arrow_reader import ARROW_TYPES, CASE, LINE, PROCESS_READ, ArrowRecords, tables_of
from analysis.records.machine_state import CHAINS
from sbcore import layout, record_rows, stored_records
from sbcore import record_fields as rf
from sbcore.record_lines import value_problem

PROCESS = record_rows.PROCESS_KEY
# The REP fields derived once per distinct value, and the long tables holding their items.
_DISTINCT_FIELDS = tuple(f for f in rf.REP_FIELDS if f.read == rf.REPEATING)
_DISTINCT_TABLES = tables_of(_DISTINCT_FIELDS)


@dataclass
class Columns:
    columns: dict[str, object]  # name -> an Arrow array or a list, a value per row
    hwthreads: pd.DataFrame | None = None  # case_id, rep, metric, hwthread, value
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file:line, why)


def invalid_cases(ar: ArrowRecords) -> set[str]:
    """Cases holding a row or facts line the rule might not count as it is: a required field missing or
    out of bounds, a row without its process's facts line, a repetition twice, an item of a long table
    missing (a row whose cells are all empty counts as missing)."""
    bad: set[str] = set()
    seen: set[tuple[str, int]] = set()
    for case, line in zip(ar.facts_case, ar.facts, strict=True):
        key = (case, line.process)
        ok = key not in seen and 0 <= line.process < 2**21 and line.case_id == case  # (a row key's range)
        seen.add(key)
        if not ok or any(value_problem(n, _value(getattr(line, n))) for n in _REQUIRED_FACTS):
            bad.add(case)
    reps = ar.reps
    if not reps.num_rows:
        return bad
    cases = _cases(reps)
    process, rep = _ints(reps[PROCESS]), _ints(reps["rep"])
    problem = ~_in_range(process, rep) | (_fact_rows(ar, cases, process) < 0)
    for spec in _REQUIRED_ROWS:  # (typed columns: of their type or null)
        column = reps[spec.name]
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        problem |= column.is_null().to_numpy(zero_copy_only=False)
        values = pc.fill_null(column, 0 if spec.minimum is not None else "").to_numpy(zero_copy_only=False)
        if spec.type == rf.NUMBER:
            problem |= ~np.isfinite(values)
        if spec.const is not None:
            problem |= values != spec.const
        if spec.minimum is not None:
            problem |= values <= spec.minimum if spec.exclusive else values < spec.minimum
    problem |= pd.DataFrame({"case": cases, "rep": rep}).duplicated().to_numpy()  # a repetition twice
    key = _row_key(cases, process, rep)
    for table in ar.tables:
        problem |= _items_missing(ar.tables[table], table, reps, cases, key)
    bad |= set(np.asarray(reps[CASE].combine_chunks().dictionary)[np.unique(cases[problem])])
    return bad


_REQUIRED_FACTS = [f.name for f in rf.REQUIRED if f.level == rf.PROCESS]
_REQUIRED_ROWS = [f for f in rf.REQUIRED if f.level == rf.REP]


def _value(value):
    """A facts value as the rule sees it (an object or array kept as its JSON text: its kind)."""
    if isinstance(value, msgspec.Raw):
        return {b"{": {}, b"[": []}.get(bytes(value)[:1])
    return value


def _ints(column) -> np.ndarray:
    """An integer column as int64, null as -1."""
    return pc.fill_null(column, -1).to_numpy().astype(np.int64, copy=False)


def _cases(table: pa.Table) -> np.ndarray:
    return table[CASE].combine_chunks().indices.to_numpy().astype(np.int64)


def _in_range(process: np.ndarray, rep: np.ndarray) -> np.ndarray:
    """Whether a (process, rep) fits a row key (a row outside: its case goes to the one reader)."""
    return (process >= 0) & (process < 2**21) & (rep >= 0) & (rep < 2**22)


def _row_key(cases: np.ndarray, process: np.ndarray, rep: np.ndarray) -> np.ndarray:
    """One int64 per (case, process, rep): case < 2^20 (a chunk's cases), `_in_range` ones exact."""
    return (cases << 43) | ((process & (2**21 - 1)) << 22) | (rep & (2**22 - 1))


def _case_codes(reps: pa.Table) -> dict[str, int]:
    """Each case's code in the case_dir column of reps."""
    return {name: i for i, name in enumerate(reps[CASE].combine_chunks().dictionary.to_pylist())}


def _fact_rows(ar: ArrowRecords, cases: np.ndarray, process: np.ndarray) -> np.ndarray:
    """Each row's facts line (its index in ar.facts), -1 where its process has none."""
    code = _case_codes(ar.reps)
    facts = zip(ar.facts_case, ar.facts, strict=True)
    fact_keys = np.array([(code.get(c, -1) << 32) | (f.process & 0xFFFFFFFF) for c, f in facts], np.int64)
    return _lookup(fact_keys, (cases << 32) | (process & 0xFFFFFFFF))


def _lookup(known: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Each key's position in `known` (unique int64 keys), -1 where it is not there."""
    if not len(known):
        return np.full(len(keys), -1, np.int64)
    order = np.argsort(known, kind="stable")
    at = np.searchsorted(known[order], keys).clip(0, len(order) - 1)
    return np.where(known[order][at] == keys, order[at], -1)


def _item_rows(table: pa.Table, reps: pa.Table, row_keys: np.ndarray) -> np.ndarray:
    """Each item's reps.csv row (-1 for an item of no row)."""
    code = _case_codes(reps)
    names = table[CASE].combine_chunks().dictionary.to_pylist()
    cases = np.array([code.get(n, -1) for n in names], np.int64)[_cases(table)]
    process, rep = _ints(table[PROCESS]), _ints(table["rep"])
    found = _lookup(row_keys, _row_key(cases, process, rep))
    return np.where((cases >= 0) & _in_range(process, rep), found, -1)


def _items_missing(table: pa.Table, name: str, reps: pa.Table, cases, row_keys) -> np.ndarray:
    """Rows whose arrays in this long table lack an item, or hold one twice."""
    missing = np.zeros(reps.num_rows, bool)
    rows = _item_rows(table, reps, row_keys)
    index = _ints(table["index"])
    placed = rows >= 0
    pairs = rows[placed] * 2**20 + index[placed]
    unique, counts = np.unique(pairs, return_counts=True)
    missing[(unique[counts > 1] // 2**20).astype(np.int64)] = True
    for count_column, (_, item_columns) in ((c, a) for c, a in record_rows.ARRAYS.items() if a[0] == name):
        wanted = _ints(reps[count_column]).clip(0)
        present = np.any([table[c].is_valid().to_numpy(zero_copy_only=False) for c in item_columns], axis=0)
        ok = placed & present & (index >= 0) & (index < wanted[np.maximum(rows, 0)])
        missing |= np.bincount(rows[ok], minlength=reps.num_rows) != wanted
    return missing


def columns(ar: ArrowRecords) -> Columns:
    """Every column of the records table but record_file, rows in the order of (case_id, rep)."""
    reps = ar.reps
    cases = _cases(reps)
    process, rep = _ints(reps[PROCESS]), _ints(reps["rep"])
    names = np.asarray(reps[CASE].combine_chunks().dictionary.to_pylist(), dtype=object)
    order = np.lexsort((rep, np.argsort(np.argsort(names))[cases]))
    if (np.diff(order) < 0).any():  # (files hold their rows in order of repetition, mostly)
        reps = reps.take(pa.array(order))
    cases, process, rep = cases[order], process[order], rep[order]
    fact = _fact_rows(ar, cases, process)
    out: dict[str, object] = {"case_id": reps[CASE], "rep": reps["rep"]}
    for name in derive.COPIED:  # a repetition's from its column, a process's from its facts line
        if name in reps.column_names:
            out[name] = reps[name]
        else:
            type_ = ARROW_TYPES[rf.BY_NAME[name].type]
            out[name] = pa.array([getattr(line, name) for line in ar.facts], type_).take(pa.array(fact))
    process_keys, process_rows = _process_distinct(ar.facts)
    which = process_keys[fact]
    out |= _spread([derive.derived(r, rf.PROCESS) for r in process_rows], which)
    out |= _rep_columns(reps)
    row_keys = _row_key(cases, process, rep)
    items = {t: (ar.tables[t], _item_rows(ar.tables[t], reps, row_keys)) for t in ar.tables}
    fact_loads, loads = _load_codes(ar.facts)
    load_codes = fact_loads[fact] if len(fact_loads) else np.zeros(len(fact), np.int64)
    out |= _rep_distinct(reps, items, load_codes, loads)
    if pc.max(reps["rank_wall_s_n"]).as_py():
        out |= _rank_walls(ar.tables["ranks"], reps, row_keys)
    out["warmup_last_s"] = _last_warmups(*items["warmups"], reps.num_rows)
    out[LINE] = reps[LINE]
    extra = np.flatnonzero(reps[record_rows.EXTRA].is_valid().to_numpy(zero_copy_only=False))
    if len(extra):
        _patch_extra(out, reps, extra, items, [ar.facts[f] for f in fact[extra]])
    problems: list[tuple[str, str]] = []
    lines = _ints(reps[LINE])
    return Columns(out, _hwthreads(process_rows, which, names[cases], rep, lines, problems), problems)


_PROCESS_INPUTS = [f.name for f in PROCESS_READ if f.name not in derive.COPIED]


def _process_distinct(facts: list) -> tuple[np.ndarray, list[dict]]:
    """(each facts line's distinct inputs of derive.derived(..., PROCESS), those inputs as a record)."""
    columns = []
    for name in _PROCESS_INPUTS:
        values = list(map(attrgetter(name), facts))
        if values and isinstance(values[0], msgspec.Raw):
            values = list(map(bytes, values))
        columns.append(pd.factorize(np.array(values, dtype=object), use_na_sentinel=False)[0])
    codes, first = _group_codes(columns, len(facts))
    records = []
    for f in first.tolist():
        record = {}
        for name in _PROCESS_INPUTS:
            value = getattr(facts[f], name)
            if value is not msgspec.UNSET:
                record[name] = msgspec.json.decode(value) if isinstance(value, msgspec.Raw) else value
        records.append(record)
    return codes, records


def _group_codes(columns: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(each row's group, the first row of each group) of rows equal in every column (integer codes,
    -1 for none), groups numbered in the order of their first row."""
    frame = pd.DataFrame(dict(enumerate(columns)), index=pd.RangeIndex(n))
    key = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(np.int64)
    return key, np.unique(key, return_index=True)[1]


def _spread(rows: list[dict], which: np.ndarray) -> dict[str, object]:
    """Columns of values derived once per distinct input (rows), on every row (which: its input)."""
    names = list(dict.fromkeys(k for row in rows for k in row))
    take = pa.array(which)
    out = {}
    for name in names:
        values = [row.get(name) for row in rows]
        try:
            out[name] = pa.array(values).take(take)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # a mix Arrow does not type
            out[name] = [values[i] for i in which.tolist()]
    return out


def _rep_columns(reps: pa.Table) -> dict[str, object]:
    """The warm-up count, the clock and the probe of every row from their columns."""
    out: dict[str, object] = {"n_warmup": pc.fill_null(reps["warmup_wall_s_n"], 0)}
    before, after = (
        pc.if_else(pc.greater(reps[c], 0), reps[c], None) for c in ("clock_before_ghz", "clock_after_ghz")
    )
    out["clock_max_ghz"] = pc.coalesce(pc.max_element_wise(before, after), reps["clock_ghz"])
    out |= {f"probe_{c}_{m}_s": reps[f"probe_{m}_s_{c}"] for c in CHAINS for m in ("min", "max")}
    out["probe_runq_wait_s"] = reps["probe_runq_wait_s"]
    cpus = reps["probe_n_cpus"]
    out["probe_cpus"] = pc.if_else(pc.greater(cpus, 0), cpus, None)
    return out


def _load_codes(facts: list) -> tuple[np.ndarray, list]:
    """(each facts line's distinct load, the distinct loads decoded)."""
    seen: dict = {}
    codes = np.array([seen.setdefault(bytes(f.load), len(seen)) for f in facts], dtype=np.int64)
    return codes, [msgspec.json.decode(raw) for raw in seen]


def _rep_distinct(reps: pa.Table, items: dict, load_codes: np.ndarray, loads: list) -> dict[str, object]:
    """Pinning, placement, scenario and result columns, derived once per distinct set of their cells, long
    table items and process load."""
    n = reps.num_rows
    own = [c for c in reps.column_names if any(c.startswith(f.name + "_") for f in _DISTINCT_FIELDS)]
    codes = [load_codes] + [pd.factorize(reps[c].to_pandas())[0] for c in own]
    for table in _DISTINCT_TABLES:
        codes += list(_item_matrix(*items[table], n).T)
    which, first = _group_codes(codes, n)
    rows = []
    for r, record in zip(first.tolist(), _parts(reps, first, own, items, _DISTINCT_FIELDS), strict=True):
        record["load"] = loads[load_codes[r]] if loads else None
        row = derive.pin_columns(record.get("pin"))
        row["placement_cpus"] = derive.placement_cpus(record.get("placement"))
        row |= derive.scenario_columns(record.get("sched"), record.get("load"))
        if record.get("result") is not None:
            row["result_json"] = derive.result_json(record["result"])
        rows.append(row)
    return _spread(rows, which)


def _item_matrix(table: pa.Table, rows: np.ndarray, n: int) -> np.ndarray:
    """Per row, the code of its items' cells at each index (-1: no item there)."""
    cells = [c for c in table.column_names if c not in (CASE, LINE, PROCESS, "rep", "index")]
    codes = table.select(cells).to_pandas().groupby(cells, dropna=False, sort=False).ngroup()
    index = _ints(table["index"])
    keep = (rows >= 0) & (index >= 0)
    width = int(index[keep].max()) + 1 if keep.any() else 1
    matrix = np.full((n, width), -1, np.int64)
    matrix[rows[keep], index[keep]] = codes.to_numpy()[keep]
    return matrix


def _parts(reps: pa.Table, chosen: np.ndarray, own: list[str], items: dict, fields) -> list[dict]:
    """The fields of the chosen rows rebuilt from their cells and items, as sbcore/record_rows.py stores
    them (an array whose long table is not read: absent)."""
    known = [c for c in own if c not in record_rows.ARRAYS or record_rows.ARRAYS[c][0] in items]
    cells = reps.select(known).take(pa.array(chosen)).to_pylist()
    at = {r: k for k, r in enumerate(chosen.tolist())}
    mine: list[dict] = [{} for _ in chosen]
    for table, (data, rows) in items.items():
        picked = np.flatnonzero(np.isin(rows, chosen))
        for i, item in zip(picked.tolist(), data.take(pa.array(picked)).to_pylist(), strict=True):
            present = {c: v for c, v in item.items() if v is not None}  # (an empty cell: absent)
            mine[at[int(rows[i])]].setdefault(table, {})[item["index"]] = present
    return [
        record_rows.part_of({c: v for c, v in row.items() if v is not None}, own_items, fields)
        for row, own_items in zip(cells, mine, strict=True)
    ]


def _rank_walls(table: pa.Table, reps: pa.Table, row_keys: np.ndarray) -> dict[str, object]:
    """rank_wall_min_s and rank_wall_max_s per row from the ranks table (null: no rank times)."""
    rows = _item_rows(table, reps, row_keys)
    values = table["rank_wall_s"].to_numpy(zero_copy_only=False)
    keep = (rows >= 0) & ~np.isnan(values)
    low = np.full(reps.num_rows, np.inf)
    high = np.full(reps.num_rows, -np.inf)
    np.minimum.at(low, rows[keep], values[keep])
    np.maximum.at(high, rows[keep], values[keep])
    timed = _ints(reps["rank_wall_s_n"]) > 0
    return {
        "rank_wall_min_s": pa.array(low, mask=~(timed & np.isfinite(low))),
        "rank_wall_max_s": pa.array(high, mask=~(timed & np.isfinite(high))),
    }


def _last_warmups(table: pa.Table, rows: np.ndarray, n: int) -> pa.Array:
    """Per row, the wall time of the last warm-up in its warm-ups table items (null: none)."""
    values = table["warmup_wall_s"].to_numpy(zero_copy_only=False).astype(float)
    keep = (rows >= 0) & ~np.isnan(values)
    order = np.lexsort((_ints(table["index"])[keep], rows[keep]))
    held, value = rows[keep][order], values[keep][order]
    last, ends = np.full(n, np.nan), np.diff(held, append=-1) != 0  # each row's last item
    last[held[ends]] = value[ends]
    return pa.array(last, mask=np.isnan(last))


def _patch_extra(out: dict, reps: pa.Table, extra: np.ndarray, items: dict, facts: list) -> None:
    """Rows holding extra_json: every REP column derived from the whole repetition, by derive."""
    own = [c for c in reps.column_names if c not in (CASE, LINE)]
    parts = _parts(reps, extra, own, items, rf.REP_FIELDS)
    for r, line, part in zip(extra.tolist(), facts, parts, strict=True):
        part |= msgspec.json.decode(reps[record_rows.EXTRA][r].as_py())
        part["load"] = msgspec.json.decode(bytes(line.load))
        copied = {n: part.get(n) for n in derive.COPIED if rf.BY_NAME[n].level == rf.REP}
        for name, value in (derive.derived(part, rf.REP) | copied).items():
            column = out.get(name)
            if not isinstance(column, list):
                column = out[name] = column.to_pylist() if column is not None else [None] * reps.num_rows
            column[r] = value


def _hwthreads(facts_records: list[dict], which: np.ndarray, case_id, rep, lines, problems: list):
    """One row per (repetition, counted metric, hardware thread), from its process's counters (values
    that are not a hardware thread's number: a problem of each row, as derive.hwthread_values says).
    The rows of each distinct process input are found once (a sort), not by a pass per input."""
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(len(facts_records) + 1))
    columns: dict[str, list] = {"case_id": [], "rep": [], "metric": [], "hwthread": [], "value": []}
    for d, record in enumerate(facts_records):
        values, dropped = derive.hwthread_values(record)
        rows = order[bounds[d] : bounds[d + 1]]
        for row in rows.tolist() if dropped else ():
            where = f"{layout.RAW_DIR}/{case_id[row]}/{stored_records.REPS_FILE}:{lines[row]}"
            problems.extend((where, f"counters: {why}") for why in dropped)
        if not values or not len(rows):
            continue
        metric, hwthread, value = zip(*values, strict=True)
        columns["case_id"].append(np.repeat(case_id[rows], len(values)))
        columns["rep"].append(np.repeat(rep[rows], len(values)).astype(np.int32))
        columns["metric"].append(np.tile(np.asarray(metric, dtype=object), len(rows)))
        columns["hwthread"].append(np.tile(np.asarray(hwthread, dtype=np.int32), len(rows)))
        columns["value"].append(np.tile(np.asarray(value, dtype=float), len(rows)))
    if not columns["rep"]:
        return None
    return pd.DataFrame({name: np.concatenate(parts) for name, parts in columns.items()})
