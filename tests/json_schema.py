"""The --json documents' schema (docs/output.schema.json), for the tests that validate output."""

import json
from pathlib import Path

import jsonschema

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "output.schema.json").read_text())


def validate(doc: dict) -> dict:
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    return doc
