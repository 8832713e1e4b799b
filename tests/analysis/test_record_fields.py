"""The record's fields are declared once (sbcore/record_fields.py) and everything else agrees with that
declaration: the kernels' schema (kernels/record.schema.json), the counting rule (sbcore/record_lines.py),
the facts the columnar reader decodes (records/arrow_reader.py) and the copied columns
(records/derive.py). A field a kernel adds fails here until it is declared, and a list of record fields
written a second time in the code that reads records fails too."""

import ast
import json
import re
from pathlib import Path

import msgspec

from analysis.records import arrow_reader, derive
from sbcore import record_fields, record_lines
from sbcore.record_fields import BY_NAME, FIELDS, KERNEL, REQUIRED, RUNNER, UNREAD

ROOT = Path(__file__).resolve().parent.parent.parent
KERNEL_SCHEMA = json.loads((ROOT / "kernels" / "record.schema.json").read_text())
V1_CAMPAIGN = ROOT / "tests" / "fixtures" / "campaign-v1"  # written by the runner, records format v1
JSON_TYPES = {"integer": {"integer"}, "number": {"number", "integer"}, "string": {"string"}}
# Where the record is read, checked or counted: no list of its fields but the declaration's.
READERS = (
    *sorted(ROOT.glob("sbcore/record_*.py")),
    *sorted(ROOT.glob("analysis/records/*.py")),
    ROOT / "jobs" / "status.py",
    ROOT / "jobs" / "transfer_state.py",
)
# Lists of field names allowed there, and why.
ALLOWED_LISTS: dict[str, str] = {}


def kernel_types(spec: dict) -> set[str]:
    """The JSON types a kernel-schema property allows, null aside."""
    if "type" in spec:
        types = {spec["type"]} if isinstance(spec["type"], str) else set(spec["type"])
    else:
        values = spec["enum"] if "enum" in spec else [spec["const"]]
        names = {str: "string", int: "integer", float: "number", bool: "boolean"}
        types = {names[type(v)] for v in values if v is not None}
    return types - {"null"}


def test_the_kernel_schema_has_exactly_the_kernel_fields_declared():
    kernel = KERNEL_SCHEMA["properties"]
    declared = {f.name for f in FIELDS if f.by == KERNEL}
    assert set(kernel) == declared
    for name in declared:
        assert kernel_types(kernel[name]) == {BY_NAME[name].type}, name


def test_the_kernel_schema_requires_what_the_rule_requires():
    for spec in REQUIRED:
        if spec.by == KERNEL:
            assert spec.name in KERNEL_SCHEMA["required"], spec.name
            if spec.const is not None:
                assert KERNEL_SCHEMA["properties"][spec.name] == {"const": spec.const}


def test_every_runner_field_is_documented():
    formats = (ROOT / "docs" / "formats.md").read_text()
    for spec in FIELDS:
        if spec.by == RUNNER:
            assert f"`{spec.name}`" in formats or f'"{spec.name}":' in formats, spec.name


def test_every_unread_field_says_where_it_is_used():
    for spec in FIELDS:
        assert bool(spec.why) == (spec.read == UNREAD), spec.name
        named = re.findall(r"[a-z_/]+\.py", spec.why)
        assert all((ROOT / path).is_file() for path in named), spec.why


def test_a_run_writes_only_declared_fields():
    records = [
        json.loads(line)
        for path in sorted((V1_CAMPAIGN / "raw").glob("*/records.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert records
    for record in records:
        assert set(record) <= set(BY_NAME), sorted(set(record) - set(BY_NAME))
        assert record_lines.field_problem(record) is None


def test_the_rule_is_the_declarations_required_fields():
    names = [f.name for f in REQUIRED]
    assert list(record_lines.RECORD_FIELDS) == names
    assert BY_NAME["schema"].const == record_fields.SCHEMA


def test_the_facts_struct_decodes_the_read_process_fields():
    fields = {f.name for f in msgspec.inspect.type_info(arrow_reader.Facts).fields}
    read = {f.name for f in FIELDS if f.level == record_fields.PROCESS and f.read != UNREAD}
    assert fields == read | {"process", "flat"}


def test_the_copied_columns_are_the_fields_declared_as_columns():
    columns = [f.name for f in FIELDS if f.read == record_fields.COLUMN]
    assert sorted(derive.COPIED) == sorted(columns) and len(derive.COPIED) == len(columns)


def field_lists(path: Path) -> list[tuple[int, list[str]]]:
    """(line, names) of every literal tuple, list, set or dict in the file naming four or more
    declared fields."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None]
        else:
            continue
        names = sorted({i.value for i in items if isinstance(i, ast.Constant) and i.value in BY_NAME})
        if len(names) >= 4:
            found.append((node.lineno, names))
    return found


def test_no_list_of_record_fields_outside_the_declaration():
    for path in READERS:
        relpath = str(path.relative_to(ROOT))
        if relpath == "sbcore/record_fields.py" or relpath in ALLOWED_LISTS:
            continue
        assert field_lists(path) == [], f"{relpath}: fields listed again; derive them from the declaration"


def test_the_check_finds_a_second_list(tmp_path):
    copy = tmp_path / "second.py"
    copy.write_text('REQUIRED = ("schema", "kernel", "wall_s", "rep")\n')
    assert field_lists(copy) == [(1, ["kernel", "rep", "schema", "wall_s"])]


def test_the_storage_level_of_every_field_is_described():
    """docs/formats.md lists the PROCESS fields of a facts line and the columns of reps.csv as the
    declaration gives them (sbcore/record_fields.py, sbcore/record_rows.py)."""
    from sbcore import record_fields, record_rows

    formats = (ROOT / "docs" / "formats.md").read_text()
    facts = re.search(r"The PROCESS fields: ((?:`\w+`\s*)+)", formats)
    assert facts and re.findall(r"`(\w+)`", facts.group(1)) == [f.name for f in record_fields.PROCESS_FIELDS]
    assert f"`{','.join(record_rows.COLUMNS)}`" in formats


def test_the_long_tables_are_described():
    from sbcore import record_rows

    formats = (ROOT / "docs" / "formats.md").read_text()
    for table, columns in record_rows.TABLES.items():
        assert f"`reps.{table}.csv`: `{','.join(columns)}`" in formats
    for table, columns in record_rows.FACTS_TABLES.items():
        assert f"`{record_rows.facts_table_file(table)}`: `{','.join(columns)}`" in formats


def _schema_keys(node: dict) -> set[str]:
    node = KERNEL_SCHEMA["$defs"][node["$ref"].split("/")[-1]] if "$ref" in node else node
    return set(node.get("properties", {}))


def test_the_flat_shape_of_a_kernel_object_declares_every_key_the_kernel_writes():
    """What a kernel writes in a fixed-key object is stored in typed columns, not in extra_json: the
    declared parts hold every key of the kernel schema and no other, but for the probe as the runner
    stores it (jobs/probe_detail.py: its per-CPU samples `before`/`after` go to probes.jsonl, `n_cpus`
    counts their CPUs)."""
    from jobs import probe_detail

    for field in FIELDS:
        if field.by != KERNEL or field.flat is None or field.type != record_fields.OBJECT or field.flat.table:
            continue
        schema = KERNEL_SCHEMA["properties"][field.name]
        parts = {p.name: p for p in field.flat.parts}
        stored = {"n_cpus"} if field.name == "probe" else set()
        assert _schema_keys(schema) - set(probe_detail.SIDES) | stored == set(parts), field.name
        for name, part in parts.items():
            if part.type == record_fields.OBJECT:
                assert _schema_keys(schema["properties"][name]) == {p.name for p in part.parts}, name
