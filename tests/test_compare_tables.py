"""perf/compare_tables.py: two analyses' tables, identical or not, each file named with its verdict."""

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "perf"))

import compare_tables  # noqa: E402


@pytest.fixture
def analysis(tmp_path) -> Path:
    """An analysis directory with a table of each kind, a records table and a cache to be left alone."""
    out = tmp_path / "a" / "analysis"
    out.mkdir(parents=True)
    frame = pd.DataFrame({"case_id": ["x", "y"], "wall_s": [0.5, 0.25], "n": [3, 4]})
    frame.to_csv(out / "summary.csv", index=False)
    frame.to_parquet(out / "summary.parquet", index=False)
    records = frame.assign(file=["raw/x/records.jsonl", "raw/y/records.jsonl"], record_line=[1, 1])
    records.to_csv(out / "records.csv", index=False)
    records.to_parquet(out / "records.parquet", index=False)
    (out / "summary.json").write_text(json.dumps({"cases": 2, "best": {"case_id": "x", "speedup": 1.5}}))
    (out / ".cache").mkdir()
    (out / ".cache" / "keys.json").write_text("{}")
    return out


def _compare(a: Path, b: Path, ignore=compare_tables.DEFAULT_IGNORE) -> tuple[bool, dict[str, str]]:
    out = io.StringIO()
    same = compare_tables.compare(a, b, list(ignore), out)
    lines = out.getvalue().splitlines()
    return same, dict(line.split(": ", 1) for line in lines[:-1])


def test_identical_analyses_are_identical_file_by_file(analysis, tmp_path):
    copy = tmp_path / "b"
    shutil.copytree(analysis, copy)
    (copy / ".cache" / "keys.json").write_text('{"other": 1}')  # not a table
    same, verdicts = _compare(analysis, copy)
    assert same
    assert verdicts == dict.fromkeys(
        ["records.csv", "records.parquet", "summary.csv", "summary.json", "summary.parquet"], "identical"
    )


def test_a_changed_cell_is_found_in_every_kind_of_table(analysis, tmp_path):
    copy = tmp_path / "b"
    shutil.copytree(analysis, copy)
    frame = pd.read_csv(copy / "summary.csv")
    frame.loc[1, "wall_s"] = 0.26
    frame.to_csv(copy / "summary.csv", index=False)
    frame.to_parquet(copy / "summary.parquet", index=False)
    (copy / "summary.json").write_text(json.dumps({"cases": 2, "best": {"case_id": "x", "speedup": 1.6}}))
    same, verdicts = _compare(analysis, copy)
    assert not same
    assert verdicts["summary.csv"].startswith("differs: row 2 column 'wall_s': A '0.25', B '0.26'")
    assert verdicts["summary.parquet"].startswith("differs: row 2 column 'wall_s': A 0.25, B 0.26")
    assert verdicts["summary.json"] == "differs: .best.speedup: A 1.5, B 1.6"
    assert verdicts["records.csv"] == "identical"


def test_the_stored_files_name_and_line_are_ignored_and_nothing_else(analysis, tmp_path):
    copy = tmp_path / "b"
    shutil.copytree(analysis, copy)
    records = pd.read_csv(copy / "records.csv")
    records["file"] = ["raw/x/reps.csv", "raw/y/reps.csv"]
    records["record_line"] = [2, 2]
    records.to_csv(copy / "records.csv", index=False)
    records.to_parquet(copy / "records.parquet", index=False)
    same, verdicts = _compare(analysis, copy)
    assert same and verdicts["records.csv"].startswith("identical but for file, record_line")
    assert verdicts["records.parquet"].startswith("identical but for file, record_line")
    same, verdicts = _compare(analysis, copy, ignore=())
    assert not same and verdicts["records.csv"].startswith("differs: row 1 column 'file'")
    records.loc[0, "n"] = 30  # a column not ignored
    records.to_parquet(copy / "records.parquet", index=False)
    same, verdicts = _compare(analysis, copy)
    assert not same and verdicts["records.parquet"].startswith("differs: row 1 column 'n': A 3, B 30")


def test_a_table_on_one_side_only_and_the_exit_status(analysis, tmp_path):
    copy = tmp_path / "b"
    shutil.copytree(analysis, copy)
    script = [sys.executable, str(ROOT / "perf" / "compare_tables.py")]
    (analysis.parent / "cases.jsonl").write_text("{}\n")  # a campaign directory: its analysis/ compared
    same = subprocess.run([*script, analysis.parent, copy], capture_output=True, text=True, check=False)
    assert same.returncode == 0 and "5 table files: all identical" in same.stdout
    (copy / "summary.parquet").unlink()
    done = subprocess.run([*script, analysis, copy], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "summary.parquet: only in A" in done.stdout
    bad = subprocess.run(
        [*script, analysis, copy, "--ignore", "file"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "TABLE:COLUMN" in bad.stderr
