"""The record's fields as the analysis declares them agree with what the kernels declare
(kernels/record.schema.json) and with each other: the schema the analysis checks (records/fields.py),
the struct msgspec decodes into (records/decode.py), the raw columns (records/flatten.py) and the
compiled reader's slots (analysis/native/record_cells.h, mirrored by records/native_reader.py). A
field a kernel adds fails here until the analysis reads it (or says why not)."""

import ctypes
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

from analysis.records import native_fields
from analysis.records.decode import Record
from analysis.records.fields import RAW_NUMERIC, RAW_TEXT, RECORD_SCHEMA
from analysis.records.native_fields import PLAIN_FIELDS, slot_name
from analysis.records.native_reader import SLOTS

ROOT = Path(__file__).resolve().parent.parent.parent
KERNEL_SCHEMA = json.loads((ROOT / "kernels" / "record.schema.json").read_text())
# Kernel fields the records table does not hold, and where they are read instead.
NOT_IN_THE_TABLE: dict[str, str] = {
    "placement_seen": "jobs/runcase.py checks a program's threads against the plan with it; "
    "the table keeps placement",
}
NATIVE_SOURCES = ("records_reader.cpp", "record_cells.cpp", "json_text.cpp", "case_listing.cpp")
JSON_TYPES = {"integer": {"integer"}, "number": {"number", "integer"}, "string": {"string"}}


def struct_fields() -> dict[str, msgspec.inspect.Field]:
    return {f.name: f for f in msgspec.inspect.type_info(Record).fields}


def test_every_kernel_field_is_read_or_said_not_to_be():
    kernel = set(KERNEL_SCHEMA["properties"])
    assert kernel - set(struct_fields()) == set(NOT_IN_THE_TABLE)
    for name in NOT_IN_THE_TABLE:
        assert (ROOT / NOT_IN_THE_TABLE[name].split()[0]).is_file()


def test_the_analysis_schema_asks_what_the_kernel_schema_promises():
    kernel = KERNEL_SCHEMA["properties"]
    for name, spec in RECORD_SCHEMA["properties"].items():
        if name not in kernel:  # added by the runner (case_id, status): docs/formats.md
            assert f"`{name}`" in (ROOT / "docs" / "formats.md").read_text(), name
            continue
        if name in RECORD_SCHEMA["required"]:
            assert name in KERNEL_SCHEMA["required"], name
        promised = kernel[name].get("type")
        if "type" in spec and promised is not None:
            promised = {promised} if isinstance(promised, str) else set(promised)
            assert promised <= JSON_TYPES.get(spec["type"], {spec["type"]}), name


def test_the_struct_decodes_exactly_the_analysis_schema():
    fields = struct_fields()
    for name, spec in RECORD_SCHEMA["properties"].items():
        field = fields[name]
        assert field.required == (name in RECORD_SCHEMA["required"]), name
        bound = {k: spec[k] for k in ("minimum", "exclusiveMinimum") if k in spec}
        constraint = field.type
        if bound:
            assert {
                "minimum": getattr(constraint, "ge", None),
                "exclusiveMinimum": getattr(constraint, "gt", None),
            } == {
                "minimum": bound.get("minimum"),
                "exclusiveMinimum": bound.get("exclusiveMinimum"),
            }, name
    optional = [name for name, f in fields.items() if not f.required]
    assert all(name not in RECORD_SCHEMA["required"] for name in optional)


def test_the_raw_columns_are_fields_of_the_record():
    fields = struct_fields()
    assert set(RAW_NUMERIC) | set(RAW_TEXT) <= set(fields)
    assert not set(RAW_NUMERIC) & set(RAW_TEXT)


def slot_enum(header: str, plain_fields: tuple[str, ...]) -> list[str]:
    """The Slot enum's names in order, the generated plain-field list expanded where it is included."""
    body = re.search(r"enum Slot : int \{(.*?)\};", header, re.S).group(1)
    body = body.replace('#include "record_plain_fields.h"', "".join(slot_name(f) + "," for f in plain_fields))
    body = re.sub(r"//[^\n]*|#[^\n]*", "", body)
    return [n.strip() for n in body.split(",") if n.strip().startswith("S_")]


def test_the_compiled_reader_has_the_slots_python_expects():
    header = (ROOT / "analysis" / "native" / "record_cells.h").read_text()
    assert slot_enum(header, PLAIN_FIELDS) == [f"S_{slot.upper()}" for slot in SLOTS]


def test_the_build_uses_the_plain_fields_as_declared():
    generated = ROOT / "build" / "gen" / "record_plain_fields.h"
    if not generated.is_file():
        pytest.skip("the compiled reader is not built here (make native)")
    assert generated.read_text() == native_fields.header()


@pytest.mark.slow
def test_a_plain_field_declared_once_gets_a_slot_in_the_compiled_reader(tmp_path, monkeypatch):
    """A new plain field is one name in fields.py: the compiled reader, built from that declaration,
    has one more slot (no hand-written C++)."""
    cxx = shutil.which(os.environ.get("CXX") or "g++")
    if not cxx or not Path("/usr/include/simdjson.h").exists():
        pytest.skip("no C++ compiler or simdjson headers: the compiled reader cannot be built here")
    monkeypatch.setattr(native_fields, "PLAIN_FIELDS", (*PLAIN_FIELDS, "new_field_s"))
    (tmp_path / "record_plain_fields.h").write_text(native_fields.header())
    sources = [str(ROOT / "analysis" / "native" / f) for f in NATIVE_SOURCES]
    lib = tmp_path / "libsb_native.so"
    subprocess.run(
        [
            cxx,
            "-std=c++20",
            "-O0",
            "-fPIC",
            f"-I{tmp_path}",
            "-shared",
            "-o",
            str(lib),
            *sources,
            "-lsimdjson",
        ],
        check=True,
    )
    handle = ctypes.CDLL(str(lib))
    assert handle.sbr_slots() == len(SLOTS) + 1
