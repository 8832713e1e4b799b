"""The machine-state probe columns of many records at once (what probe_columns, at the end, gives for one).

A probe holds one time per CPU of the case for each chain, before and after the repetition: on a 64-CPU
case that is 512 numbers, which as Python objects cost more than the rest of the record. So the probes
stay raw bytes when records are decoded; here their structure is decoded into small structs whose
arrays stay raw, all the numbers are read by Arrow in one pass, and the fastest and slowest time of each
chain come from numpy per record. The CPU count is the runner's `n_cpus` where it stored the per-CPU
times in probes.jsonl, else derived once per distinct pair of CPU lists (they repeat over a case's
repetitions). A probe that does not have the documented shape (an array holding
something other than numbers or null, a probe that is not an object) sends the whole batch to
`probe_columns`, record by record, whose rules are the reference.
"""

from __future__ import annotations

import io
from collections.abc import Hashable
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from msgspec.structs import astuple

from analysis.records.joined_parts import count_per_part
from analysis.records.typed_columns import distinct

# The probe's fixed-work chains (docs/formats.md): two latency chains, an FP-throughput and an
# integer-ALU throughput block, timed per CPU, and the cache-line round trip between the case's first CPU
# and each other one.
LATENCY_CHAINS = ("int_mul", "fp_lat")
TPUT_CHAINS = ("fp_tput",)
ALU_CHAINS = ("int_alu",)
TRANSFER_CHAINS = ("xfer",)
CHAINS = LATENCY_CHAINS + TPUT_CHAINS + ALU_CHAINS + TRANSFER_CHAINS
# Chains a probe with the kernel's own extremes may lack: the transfer (null wherever no pair of workers
# timed one) and the ALU block (kernels before it wrote none). Such a probe is not derived from its arrays.
OPTIONAL_CHAINS = ALU_CHAINS + TRANSFER_CHAINS

NULL = msgspec.Raw(b"null")
NO_PROBE = b"null"


class _Side(msgspec.Struct, gc=False):
    cpus: msgspec.Raw = NULL
    int_mul_s: msgspec.Raw = NULL
    fp_lat_s: msgspec.Raw = NULL
    fp_tput_s: msgspec.Raw = NULL
    int_alu_s: msgspec.Raw = NULL
    xfer_s: msgspec.Raw = NULL


class _Probe(msgspec.Struct, gc=False):
    before: _Side | None = None
    after: _Side | None = None
    runq_wait_s: Any = None


class _Extremes(msgspec.Struct, gc=False):
    int_mul: float | None = None
    fp_lat: float | None = None
    fp_tput: float | None = None
    int_alu: float | None = None
    xfer: float | None = None


class _CpusOnly(msgspec.Struct, gc=False):
    cpus: msgspec.Raw = NULL


class _ProbeWithExtremes(msgspec.Struct, gc=False):
    """A probe as today's kernels write it: each chain's fastest and slowest time beside the arrays,
    which msgspec then skips without building anything."""

    before: _CpusOnly | None = None
    after: _CpusOnly | None = None
    runq_wait_s: Any = None
    min_s: _Extremes | None = None
    max_s: _Extremes | None = None
    n_cpus: Any = None  # the runner's count (it keeps the per-CPU times in probes.jsonl)


_PROBES = msgspec.json.Decoder(_Probe | None)
_PROBES_WITH_EXTREMES = msgspec.json.Decoder(_ProbeWithExtremes | None)
_CSV_READ = pacsv.ReadOptions(column_names=["t"], use_threads=False)  # one parsing process per CPU already
_CSV_CONVERT = pacsv.ConvertOptions(column_types={"t": pa.float64()}, null_values=["null"])
_EMPTY = (b"null", b"[]")
_NO_SIDE = _Side()
_NO_EXTREMES = _Extremes()
_ONE_PER_LINE = bytes.maketrans(b",", b"\n")


class _OddShape(ValueError):
    """A probe array holds something else than numbers and nulls."""


def machine_state_columns(raws: list[bytes]) -> dict[str, list]:
    """The probe columns (probe_columns' keys, in its order) of records whose raw `probe`
    values these are (b"null" where a record has none)."""
    try:
        probes = _PROBES_WITH_EXTREMES.decode_lines(b"\n".join(raws))
        if len(probes) != len(raws):  # a value written over several lines: one by one below
            raise _OddShape("a probe over several lines")
        sides = _sides(probes)
        columns, derive = _own_extremes(probes)
        if derive:  # older kernels (or a chain without a time): from the arrays, as probe_columns does
            arrays = _PROBES.decode_lines(b"\n".join(raws[i] for i in derive))
            columns = _fill_from_arrays(columns, derive, arrays)
    except (msgspec.DecodeError, msgspec.ValidationError, _OddShape):
        rows = [probe_columns(msgspec.json.decode(raw)) for raw in raws]
        return {key: [row[key] for row in rows] for key in probe_columns(None)}
    columns["probe_runq_wait_s"] = [p.runq_wait_s if p is not None else None for p in probes]
    cpus = [map(bytes, map(attrgetter("cpus"), side)) for side in sides.values()]
    pairs = list(zip(*cpus, strict=True))  # as probe_columns: the CPUs of both sides together
    counted = {pair: _cpu_count(pair) for pair in dict.fromkeys(pairs)}
    columns["probe_cpus"] = [
        p.n_cpus if p is not None and type(p.n_cpus) is int and p.n_cpus > 0 else counted[pair]
        for p, pair in zip(probes, pairs, strict=True)
    ]
    return {key: columns[key] for key in probe_columns(None)}


def _sides(probes: list) -> dict[str, list]:
    """Each probe's before and after side (an empty side where a probe or its side is missing)."""
    return {
        "before": [p.before if p is not None and p.before is not None else _NO_SIDE for p in probes],
        "after": [p.after if p is not None and p.after is not None else _NO_SIDE for p in probes],
    }


def _own_extremes(probes: list) -> tuple[dict[str, list], list[int]]:
    """(probe_<chain>_min_s / _max_s as the kernels wrote them, None where a record has none; the rows
    of probes that lack one of them). Field by field in C (astuple, zip), not probe by probe. A
    transfer time is null wherever no pair of workers timed one (one CPU), kernels that wrote no
    extremes timed no transfers and no ALU block: a record without one of OPTIONAL_CHAINS is not sent
    to be derived."""
    n = len(probes)
    lows = [p.min_s if p is not None and p.min_s is not None else _NO_EXTREMES for p in probes]
    highs = [p.max_s if p is not None and p.max_s is not None else _NO_EXTREMES for p in probes]
    low_columns = zip(*map(astuple, lows), strict=True) if n else [()] * len(CHAINS)
    high_columns = zip(*map(astuple, highs), strict=True) if n else [()] * len(CHAINS)
    columns: dict[str, list] = {}
    lacking: set[int] = set()
    for chain, low, high in zip(CHAINS, low_columns, high_columns, strict=True):
        for name, values in (("min", low), ("max", high)):
            columns[f"probe_{chain}_{name}_s"] = list(values)
            if chain not in OPTIONAL_CHAINS and None in values:
                lacking.update(i for i, v in enumerate(values) if v is None)
    no_probe = {i for i, p in enumerate(probes) if p is None}  # nothing to derive from
    return columns, sorted(lacking - no_probe)


def _fill_from_arrays(columns: dict[str, list], rows: list[int], arrays: list[_Probe]) -> dict[str, list]:
    """The columns with the given rows' missing times derived from their probes' arrays."""
    derived = _chain_extremes(_sides(arrays), len(arrays))
    for name, values in columns.items():
        for row, value in zip(rows, derived[name], strict=True):
            if values[row] is None:
                values[row] = value
    return columns


def _cpu_count(cpu_lists: tuple[bytes, ...]) -> int | None:
    """As probe_columns counts them: the distinct entries of the sides' CPU lists, None for none."""
    lists = [msgspec.json.decode(raw) for raw in cpu_lists]
    cpus = {c for cpus in lists if isinstance(cpus, list) for c in cpus if isinstance(c, Hashable)}
    return len(cpus) or None


def _chain_extremes(sides: dict[str, list[_Side]], n: int) -> dict[str, list]:
    """probe_<chain>_min_s / _max_s over both sides of each record: None where a record has no time.

    Every distinct array of every (chain, side) is read in one pass (a repetition's `before` is the
    previous one's `after` within a process: the runner's records repeat a third of their arrays); each
    array's fastest and slowest time come from one numpy reduction; the two sides of a record are then
    combined."""
    arrays: list[bytes] = []
    for chain in CHAINS:
        for side in sides.values():
            arrays += map(bytes, map(attrgetter(f"{chain}_s"), side))
    which, unique = distinct(arrays, bytes)
    counts, values = _read_arrays(unique)
    fastest = np.full(len(unique), np.nan)
    slowest = np.full(len(unique), np.nan)
    filled = np.flatnonzero(counts)
    if len(filled):
        firsts = np.concatenate(([0], np.cumsum(counts[filled])[:-1]))
        fastest[filled] = np.fmin.reduceat(values, firsts)  # fmin/fmax skip NaN: a null time is no
        slowest[filled] = np.fmax.reduceat(values, firsts)  # time, as in probe_columns
    fastest = np.fmin.reduce(fastest[which].reshape(len(CHAINS), len(sides), n), axis=1)
    slowest = np.fmax.reduce(slowest[which].reshape(len(CHAINS), len(sides), n), axis=1)
    out: dict[str, list] = {}
    for c, chain in enumerate(CHAINS):
        for name, table in (("min", fastest[c]), ("max", slowest[c])):
            values_of = table.tolist()
            missing = np.isnan(table)
            if missing.any():
                values_of = [None if m else v for v, m in zip(values_of, missing.tolist(), strict=True)]
            out[f"probe_{chain}_{name}_s"] = values_of
    return out


def _read_arrays(arrays: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(how many entries each raw JSON array holds (null and [] hold none), all their numbers in order
    with null as NaN): the arrays joined once, entries counted by numpy, numbers read by Arrow, one per
    line (brackets dropped, the text of an absent array dropped with them)."""
    if not arrays:
        return np.zeros(0, np.int64), np.zeros(0)
    joined = b",".join(arrays)
    absent = np.fromiter(map(_EMPTY.__contains__, arrays), dtype=bool, count=len(arrays))
    filled = len(arrays) - int(absent.sum())
    if joined.count(b"[") != filled or b'"' in joined:  # nested arrays, text (or objects)
        raise _OddShape("not a flat array of numbers")
    counts = np.where(absent, 0, count_per_part(joined, arrays, b",") + 1)
    if joined.count(b"null") == arrays.count(b"null"):  # nulls only as absent arrays: dropped as text
        values = _csv_numbers(joined.translate(_ONE_PER_LINE, b"[]nul \t\r\n"))
    else:  # a null time inside an array: the filled arrays alone, 'null' read as NaN
        values = _numbers([raw for raw, skip in zip(arrays, absent.tolist(), strict=True) if not skip])
    if len(values) != counts.sum():  # e.g. an empty entry
        raise _OddShape("not a flat array of numbers")
    return counts, values


def _numbers(arrays: list[bytes]) -> np.ndarray:
    """Every number of these JSON arrays of numbers and nulls, in order (null: NaN)."""
    return _csv_numbers(b",".join(arrays).translate(_ONE_PER_LINE, b"[] \t\r\n"))


def _csv_numbers(text: bytes) -> np.ndarray:
    """The numbers of a text holding one per line ('null': NaN; empty lines skipped), read by Arrow."""
    try:
        table = pacsv.read_csv(io.BytesIO(text), read_options=_CSV_READ, convert_options=_CSV_CONVERT)
    except pa.ArrowInvalid as err:
        raise _OddShape(str(err)) from err
    return table.column(0).to_numpy(zero_copy_only=False)


def probe_columns(probe) -> dict:
    """Flat columns of one record's probe: fastest and slowest time of each chain over its CPUs,
    before and after, the run-queue wait and the number of CPUs probed (all None without a probe). The
    fastest and slowest times are the kernel's own (`min_s`, `max_s`) where it wrote a number, the
    number of CPUs the runner's (`n_cpus`: it stores the per-CPU times in probes.jsonl); else both are
    derived from the per-CPU times in the record (records of older kernels and runners)."""
    row = {f"probe_{c}_{m}_s": None for c in CHAINS for m in ("min", "max")}
    row |= {"probe_runq_wait_s": None, "probe_cpus": None}
    if not isinstance(probe, dict):
        return row
    # a side, or a list in it, of another shape than documented counts as not measured
    samples = [side if isinstance(side, dict) else {} for side in (probe.get("before"), probe.get("after"))]
    for chain in CHAINS:
        times = [t for s in samples for t in _listed(s, f"{chain}_s") if isinstance(t, int | float)]
        for name, pick in (("min", min), ("max", max)):
            own = probe.get(f"{name}_s")
            own = own.get(chain) if isinstance(own, dict) else None
            if isinstance(own, int | float) and not isinstance(own, bool):
                row[f"probe_{chain}_{name}_s"] = own
            elif times:
                row[f"probe_{chain}_{name}_s"] = pick(times)
    cpus = {c for s in samples for c in _listed(s, "cpus") if isinstance(c, Hashable)}
    counted = probe.get("n_cpus")
    counted = counted if isinstance(counted, int) and not isinstance(counted, bool) and counted > 0 else None
    row["probe_cpus"] = counted or len(cpus) or None
    row["probe_runq_wait_s"] = probe.get("runq_wait_s")
    return row


def _listed(side: dict, key: str) -> list:
    value = side.get(key)
    return value if isinstance(value, list) else []
