"""The records of a chunk of files: decoded a file at a time (a file with a problem line by line, to name
it), then checked for which count: each repetition of a case once, in its case's directory, with params
that are an object. A records.jsonl whose records are all in place is accepted whole, with one check per
file; the others are looked at record by record, and every record left out is reported with its file
and line."""

from __future__ import annotations

from operator import attrgetter

import msgspec

from analysis.records.decode import DECODE_ERRORS, decode_batch, decode_lines, decode_one
from analysis.records.flatten import NotAnObject, params_columns
from sbcore import layout, record_store
from sbcore.record_lines import placement_problem


class DecodedFiles:
    """Records decoded from a chunk's files, a batch per file (or per set of older rep files), with where
    each came from."""

    def __init__(self) -> None:
        # (records, their places or None for lines 1..n of one records.jsonl, that file, its case dir);
        # a place is (file, case dir, rep by name, line)
        self.batches: list[tuple[list, list[tuple] | None, str, str]] = []
        self.problems: list[tuple[str, str]] = []

    def add_blobs(self, blobs: list[bytes], places: list[tuple]) -> None:
        decoded = decode_batch(blobs)
        if decoded is None:  # at least one bad file: decode one by one to name them
            decoded = []
            for text, place in zip(blobs, places, strict=True):
                record, reason = decode_one(text)
                decoded.append(record)
                if reason:
                    self.problems.append((where(place), reason))
        kept = [(record, place) for record, place in zip(decoded, places, strict=True) if record is not None]
        if kept:
            self.batches.append(([r for r, _ in kept], [p for _, p in kept], "", ""))

    def add_lines(self, data: bytes, relpath: str, case_dir: str) -> None:
        """The complete lines of a records.jsonl; a last line without its newline is reported."""
        tail = record_store.incomplete_tail(data)
        if tail.strip():
            line = data.count(b"\n") + 1
            self.problems.append(
                (f"{relpath}:{line}", "truncated last line (a write in progress, or cut short by a crash)")
            )
        body = data[: len(data) - len(tail)]
        try:
            decoded = decode_lines(body)
        except DECODE_ERRORS:
            decoded = None
        if decoded is not None and body.count(b"\n") == len(decoded):  # no blank lines: line i is record i
            if decoded:
                self.batches.append((decoded, None, relpath, case_dir))
            return
        lines = list(record_store.complete_lines(body))
        self.add_blobs([line for _, line in lines], [(relpath, case_dir, None, n) for n, _ in lines])


class CountedRecords:
    """The records of a chunk that count, each once, with the line it is on (0: a rep-<k>.json file)."""

    def __init__(self) -> None:
        self.records: list = []
        self.lines: list[int] = []
        self.files: list[str] = []  # the file each record is in
        self.problems: list[tuple[str, str]] = []
        self._reps: dict[str, set[int]] = {}  # case dir -> repetitions counted
        self._params_ok: dict[bytes, bool] = {}  # a case's repetitions repeat one params object

    def add(self, records: list, places: list[tuple] | None, relpath: str, case_dir: str) -> None:
        if places is None and self._clean(records, case_dir):  # the usual file: accepted whole
            self.records.extend(records)
            self.lines.extend(range(1, len(records) + 1))
            self.files.extend([relpath] * len(records))
            return
        places = places or [(relpath, case_dir, None, i) for i in range(1, len(records) + 1)]
        for record, place in zip(records, places, strict=True):
            self._add_one(record, place)

    def _clean(self, records: list, case_dir: str) -> bool:
        """Whether every record of one file is in its case's directory, holds a repetition not counted
        yet (each once) and has params that are an object: then none needs a look of its own."""
        reps = list(map(attrgetter("rep"), records))
        counted = self._reps.setdefault(case_dir, set())
        if list(map(attrgetter("case_id"), records)).count(case_dir) != len(records):
            return False
        if len(set(reps)) != len(reps) or not counted.isdisjoint(reps):
            return False
        if not all(
            map(self._params_are_object, dict.fromkeys(map(bytes, map(attrgetter("params"), records))))
        ):
            return False
        counted.update(reps)
        return True

    def _add_one(self, record, place: tuple) -> None:
        """One record line by the rule status, resume and run-case apply (sbcore/record_lines.py:
        another case's line, or a repetition already counted, does not count); then what only this
        path can see: an old rep-<k>.json file's name, params that are not an object. Every record of
        the analysis passes here or through _clean (its fast path for a file of ordinary lines)."""
        _, case_dir, rep_by_name, line = place
        rep = record.rep
        counted = self._reps.setdefault(case_dir, set())
        why = placement_problem({"case_id": record.case_id, "rep": rep}, case_dir, counted)
        if why is None and rep_by_name is not None and rep != rep_by_name:
            why = f"rep {rep} does not match the file name"
        if why is None and not self._params_are_object(bytes(record.params)):
            why = "schema: params: not an object"
        if why is None:
            counted.add(rep)
            self.records.append(record)
            self.lines.append(line)
            self.files.append(place[0])
            return
        self.problems.append((where(place), why))

    def _params_are_object(self, params: bytes) -> bool:
        ok = self._params_ok.get(params)
        if ok is None:
            try:
                params_columns(params)
                ok = True
            except (NotAnObject, msgspec.DecodeError):
                ok = False
            self._params_ok[params] = ok
        return ok


def record_where(record, line: int) -> str:
    """Where a parsed record is stored."""
    name = layout.RECORDS_FILE if line else layout.rep_name(record.rep)
    return f"{layout.RAW_DIR}/{record.case_id}/{name}" + (f":{line}" if line else "")


def where(place: tuple) -> str:
    """A problem's location: the file, and the line for a records.jsonl."""
    relpath, _, _, line = place
    return f"{relpath}:{line}" if line else relpath
