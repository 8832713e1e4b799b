"""The files a run stores records in (scalebench.run/2: sbcore/record_store.py's store) are untrusted input
like every campaign file (docs/trust.md): a link planted in place of one is not followed by run-case
(storing), status, resume or analyze, a FIFO hangs none of them, and a cut, short or mistyped row is named
by file and line and not counted. The file names are those a real run stores, found in its case directory,
so that the tests cover every file the store writes."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sbcore import layout, record_store, stored_records
from tests.jobs.conftest import run_cli
from tests.jobs.test_campaign_trust import EXPERIMENT
from tests.records import case_records

TIMEOUT_S = 60  # a command waiting on a FIFO would wait for ever: the test fails instead
COMMANDS = {
    "status": ["status", "c"],
    "run --resume": ["run", "--resume", "c", "--no-progress"],
    "run-case": ["run-case", "c", "0"],
    "resume": ["resume", "c", "--dry-run"],
    "analyze": ["analyze", "c"],
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> tuple[Path, dict]:
    """(results directory, environment) of a campaign `c` whose one case ran both its repetitions."""
    root = tmp_path_factory.mktemp("stored")
    env = {"SCALEBENCH_MEASURE_LOCK": str(root / "measure.lock"), "SCALEBENCH_TRUST_GROUP": ""}
    exp = root / "trust.toml"
    exp.write_text(EXPERIMENT)
    results = root / "results"
    assert run_cli("--results-dir", results, "plan", exp, "--write", "--name", "c", env=env).returncode == 0
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress", env=env)
    assert done.returncode == 0, done.stderr
    return results, env


def stored_names(results: Path) -> list[str]:
    """Every file the store wrote records into (not the per-CPU probe times beside them), and reps-1.csv,
    the name the reader lists next (a reps.csv with another header was written by another version)."""
    (case_dir,) = (results / "c" / layout.RAW_DIR).iterdir()
    names = sorted(p.name for p in case_dir.iterdir() if p.name != record_store.PROBES_FILE)
    assert stored_records.FACTS_FILE in names and stored_records.REPS_FILE in names, names
    return [*names, "reps-1.csv"]


def copy_of(ran, tmp_path) -> tuple[Path, Path, dict]:
    """(results directory, case directory, environment) of a fresh copy of the campaign that ran."""
    results, env = ran
    copy = tmp_path / "results"
    shutil.copytree(results, copy, symlinks=True)
    (case_dir,) = (copy / "c" / layout.RAW_DIR).iterdir()
    return copy, case_dir, env


def run(results: Path, env: dict, command: str) -> subprocess.CompletedProcess:
    return run_cli("--results-dir", results, *COMMANDS[command], env=env, timeout=TIMEOUT_S)


def snapshot(directory: Path) -> dict[str, tuple]:
    """Every entry under `directory`: its bytes (files) and mtime."""
    found = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(root, name)
            found[str(path)] = (path.read_bytes() if path.is_file() else None, path.lstat().st_mtime_ns)
    return found


def lines_naming(done: subprocess.CompletedProcess, text: str) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if text in line]


def test_a_link_in_place_of_a_stored_file_is_not_followed(ran, tmp_path):
    for name in stored_names(ran[0]):
        results, case_dir, env = copy_of(ran, tmp_path / name)
        outside = tmp_path / name / "outside"
        outside.mkdir()
        stored = case_dir / name
        # the link points at what the file held (or a copy of reps.csv): following it would count rows
        shutil.copyfile(stored if stored.exists() else case_dir / stored_records.REPS_FILE, outside / name)
        stored.unlink(missing_ok=True)
        stored.symlink_to(outside / name)
        before = snapshot(outside)
        where = f"{stored}: not read"
        for command in COMMANDS:
            done = run(results, env, command)
            assert "Traceback" not in done.stderr, (name, command, done.stderr)
            if command == "resume":  # the case states are status's; the local node type is not Slurm's
                assert done.returncode in (0, 2), (name, done.stderr)
                continue
            assert len(lines_naming(done, where)) == 1, (name, command, done.stdout, done.stderr)
            if done.returncode == 3:  # storing refused: the last line names the file
                assert str(stored) in done.stderr.splitlines()[-1] and "refused" in done.stderr, (
                    name,
                    command,
                )
            else:
                assert done.returncode in (0, 1), (name, command, done.stderr)
        assert snapshot(outside) == before, name  # nothing outside read into the campaign or written
        read, problems = layout.case_lines(results / "c", case_dir.name)
        assert f"{layout.RAW_DIR}/{case_dir.name}/{name}: not read" in "\n".join(problems), name
        assert stored.is_symlink(), name
        assert not read or stored_records.REPS_FILE != name != stored_records.FACTS_FILE, name


def test_a_fifo_in_place_of_a_stored_file_hangs_nothing(ran, tmp_path):
    for name in stored_names(ran[0]):
        results, case_dir, env = copy_of(ran, tmp_path / name)
        stored = case_dir / name
        stored.unlink(missing_ok=True)
        os.mkfifo(stored)
        for command in COMMANDS:
            done = run(results, env, command)  # raises subprocess.TimeoutExpired on a hang
            assert "Traceback" not in done.stderr, (name, command, done.stderr)
            if command != "resume":
                named = lines_naming(done, f"{stored}: not read: not a regular file")
                assert len(named) == 1, (name, command, done.stdout, done.stderr)
        assert stat_is_fifo(stored), name


def stat_is_fifo(path: Path) -> bool:
    import stat

    return stat.S_ISFIFO(path.lstat().st_mode)


def _last_row(reps: Path) -> tuple[bytes, bytes]:
    """(the file up to its last row, the last row with its newline)."""
    data = reps.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    return data[:start], data[start:]


def _text_in_wall_s(row: bytes, wall: float) -> bytes:
    cell = f",{wall!r},".encode()
    assert row.count(cell) == 1, row
    return row.replace(cell, b',"fast",')


BAD_ROWS = {
    "truncated": (lambda row, wall: row[: len(row) // 2], "truncated"),
    "a cell more": (lambda row, wall: row[:-1] + b",1\n", "not a row"),
    "text in wall_s": (lambda row, wall: _text_in_wall_s(row, wall), "wall_s"),
}


@pytest.mark.parametrize("bad", BAD_ROWS)
def test_a_bad_last_row_is_named_by_file_and_line_and_measured_again(ran, tmp_path, bad):
    results, case_dir, env = copy_of(ran, tmp_path)
    campaign = results / "c"
    reps = case_dir / stored_records.REPS_FILE
    head, row = _last_row(reps)
    last = case_records(campaign, case_dir.name)[-1]
    spoil, why = BAD_ROWS[bad]
    reps.write_bytes(head + spoil(row, last["wall_s"]))
    line = head.count(b"\n") + 1
    where = f"{reps}:{line}: "
    read, problems = layout.case_lines(campaign, case_dir.name)
    assert last["rep"] not in read and len(read) == 1
    assert [p for p in problems if p.startswith(f"{layout.RAW_DIR}/{case_dir.name}/reps.csv:{line}: ")]
    status = run(results, env, "status")
    assert status.returncode == 1 and "1/2" in status.stdout
    (named,) = lines_naming(status, where)
    assert why in named
    analyzed = run(results, env, "analyze")
    assert analyzed.returncode == 0, analyzed.stderr
    (named,) = lines_naming(analyzed, where)
    assert named.startswith("skipped: ") and why in named
    done = run(results, env, "run --resume")  # the repetition not counted is measured again
    assert done.returncode == 0, done.stderr
    read, problems = layout.case_lines(campaign, case_dir.name)
    assert sorted(read) == [0, 1] and read[last["rep"]]["wall_s"] != "fast"
    assert [p for p in problems if p.startswith(f"{layout.RAW_DIR}/{case_dir.name}/reps.csv:{line}: ")]
    assert reps.read_bytes().startswith(head + spoil(row, last["wall_s"]))  # never rewritten
