"""The record's fields as the analysis declares them agree with what the kernels declare
(kernels/record.schema.json) and with each other: the schema the analysis checks (records/fields.py),
the struct msgspec decodes into (records/decode.py), the raw columns (records/flatten.py) and the
compiled reader's slots (analysis/native/record_cells.h, mirrored by records/native_reader.py). A
field a kernel adds fails here until the analysis reads it (or says why not)."""

import json
import re
from pathlib import Path

import msgspec

from analysis.records.decode import Record
from analysis.records.fields import RAW_NUMERIC, RAW_TEXT, RECORD_SCHEMA
from analysis.records.native_reader import SLOTS

ROOT = Path(__file__).resolve().parent.parent.parent
KERNEL_SCHEMA = json.loads((ROOT / "kernels" / "record.schema.json").read_text())
# Kernel fields the records table does not hold, and where they are read instead.
NOT_IN_THE_TABLE: dict[str, str] = {}  # (none today)
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


def test_the_compiled_reader_has_the_slots_python_expects():
    header = (ROOT / "analysis" / "native" / "record_cells.h").read_text()
    enum = re.sub(r"//[^\n]*", "", re.search(r"enum Slot : int \{(.*?)\};", header, re.S).group(1))
    names = [n.strip() for n in enum.split(",") if n.strip().startswith("S_")]
    assert names == [f"S_{slot.upper()}" for slot in SLOTS]
