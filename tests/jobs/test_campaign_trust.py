"""A campaign directory is a trust boundary (docs/trust.md): edited campaign files run nothing, links
are never followed, directories other users can write are refused, kernel outputs stay in their case,
nothing hangs on a FIFO, and records that do not belong are left out and named."""

import csv
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sbcore.layout import STORED_FILES
from tests.jobs.conftest import ROOT, run_cli
from tests.records import case_records, plant

NOBODY = 65534
EXPERIMENT = """\
description = "trust: one tiny case"
repetitions = 2
warmup = 0
timeout_s = 30
seed = 5

[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [2000], seed = [7] }
"""


@pytest.fixture
def lock(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEBENCH_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    monkeypatch.delenv("SCALEBENCH_TRUST_GROUP", raising=False)


@pytest.fixture
def planned(tmp_path, lock) -> tuple[Path, Path]:
    """(results directory, campaign directory) of a planned, not yet run campaign."""
    exp = tmp_path / "trust.toml"
    exp.write_text(EXPERIMENT)
    results = tmp_path / "results"
    done = run_cli("--results-dir", results, "plan", exp, "--write", "--name", "c")
    assert done.returncode == 0, done.stderr
    return results, results / "c"


def one_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("campaign:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def records_of(campaign: Path) -> list[Path]:
    """The case directories holding stored records."""
    return sorted(p.parent for p in campaign.glob("raw/*/reps.csv"))


def tree(path: Path) -> dict[str, tuple]:
    """Every entry under `path` with its size and mtime (what a test compares before and after)."""
    found = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = Path(root, name)
            st = full.lstat()
            found[str(full)] = (st.st_size, st.st_mtime_ns)
    return found


# ---- 1. campaign files are data: a resume runs only what plan would write -----------------------------


def _edit_first_case(campaign: Path, edit) -> None:
    lines = (campaign / "cases.jsonl").read_text().splitlines()
    case = json.loads(lines[0])
    edit(case)
    lines[0] = json.dumps(case)
    (campaign / "cases.jsonl").write_text("\n".join(lines) + "\n")


EDITS = {
    "binary path": lambda c: c.update(binary="../../../../usr/bin/id"),
    "LD_PRELOAD": lambda c: c["env"].update(LD_PRELOAD="/tmp/evil.so"),
    "case id escaping": lambda c: c.update(case_id="../../../../escape"),
    "negative reps": lambda c: c.update(reps=-5),
    "missing reps": lambda c: c.pop("reps"),
    "timeout text": lambda c: c.update(timeout_s="abc"),
    "huge timeout": lambda c: c.update(timeout_s=1e300),
    "argv": lambda c: c.update(argv=[*c["argv"], "--dump", "/tmp/x.pgm"]),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
@pytest.mark.parametrize("command", ["run --resume", "run-case"])
def test_an_edited_cases_file_runs_nothing(planned, edit, command):
    results, campaign = planned
    _edit_first_case(campaign, EDITS[edit])
    argv = ["run", "--resume", "c", "--no-progress"] if command == "run --resume" else ["run-case", "c", "0"]
    done = run_cli("--results-dir", results, *argv)
    assert done.returncode == 2, done.stderr
    line = one_line(done)
    assert "cases.jsonl:1" in line
    assert records_of(campaign) == [] and not (campaign.parent.parent / "escape").exists()


def test_a_case_more_or_less_runs_nothing(planned):
    results, campaign = planned
    text = (campaign / "cases.jsonl").read_text()
    (campaign / "cases.jsonl").write_text(text + text.replace('"index": 0', '"index": 1'))
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 2 and "plans 1" in one_line(done)
    assert records_of(campaign) == []


def test_a_campaign_without_its_experiment_snapshot_is_refused(planned):
    results, campaign = planned
    (campaign / "experiment.toml").unlink()
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 2 and "experiment.toml: missing" in one_line(done)


def test_an_unedited_campaign_resumes(planned):
    results, campaign = planned
    done = run_cli("--results-dir", results, "run", "--resume", "latest", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert len(records_of(campaign)) == 1


def test_loader_variables_come_from_the_experiment_and_the_manifest_names_them(tmp_path, lock):
    exp = tmp_path / "loader.toml"
    exp.write_text(EXPERIMENT.replace("[[sweep]]", '[env]\nLD_LIBRARY_PATH = "/nonexistent"\n\n[[sweep]]'))
    results = tmp_path / "results"
    assert run_cli("--results-dir", results, "plan", exp, "--write", "--name", "l").returncode == 0
    manifest_path = results / "l" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["loader_env"] == ["LD_LIBRARY_PATH"]
    manifest["loader_env"] = []
    manifest_path.write_text(json.dumps(manifest))
    done = run_cli("--results-dir", results, "run-case", "l", "0")
    assert done.returncode == 2 and "LD_LIBRARY_PATH" in one_line(done)
    assert records_of(results / "l") == []


# ---- 2. ownership and links --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["run", "--resume", "c", "--no-progress"], ["run-case", "c", "0"], ["analyze", "c"]]
)
def test_a_results_directory_others_can_write_is_refused(planned, command):
    results, campaign = planned
    results.chmod(0o777)
    done = run_cli("--results-dir", results, *command)
    assert done.returncode == 3 and "writable by every user" in one_line(done)
    assert records_of(campaign) == [] and not (campaign / "analysis").exists()


def test_a_campaign_of_another_user_is_refused(planned):
    results, campaign = planned
    os.chown(campaign, NOBODY, -1)
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3 and f"owned by uid {NOBODY}" in one_line(done)
    assert f"uid {os.geteuid()}" in done.stderr


def test_a_group_writable_team_directory_needs_the_group_trusted(planned):
    """A team directory on a shared file system: group-writable (setgid), a member's campaign."""
    results, campaign = planned
    for path in (results, campaign):
        os.chown(path, NOBODY, os.getegid())  # another member made them; the group is ours
        path.chmod(0o2775)
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3 and "--trust-group" in one_line(done)
    done = run_cli("--trust-group", "--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 0, done.stderr
    done = run_cli("--results-dir", results, "status", "c", env={"SCALEBENCH_TRUST_GROUP": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    results.chmod(0o777)  # writable by everyone: refused even with the group trusted
    done = run_cli("--trust-group", "--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3


def test_a_records_link_out_of_the_campaign_is_not_followed(planned, tmp_path):
    results, campaign = planned
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    case_id = json.loads((campaign / "cases.jsonl").read_text())["case_id"]
    (campaign / "raw" / case_id).mkdir(parents=True)
    (campaign / "raw" / case_id / "records.jsonl").symlink_to(victim)
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3 and "records.jsonl" in done.stderr.splitlines()[-1]
    assert victim.read_text() == "precious\n"
    status = run_cli("--results-dir", results, "status", "c")
    assert "records.jsonl: not read" in status.stdout


def test_an_analysis_link_out_of_the_campaign_is_refused(planned, tmp_path):
    results, campaign = planned
    assert run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (campaign / "analysis").symlink_to(elsewhere)
    done = run_cli("--results-dir", results, "analyze", "c")
    assert done.returncode == 3 and "analysis" in one_line(done)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("target", ["../other", "/tmp", "link-to-c"])
def test_latest_must_name_a_campaign_directory_beside_it(planned, target):
    results, campaign = planned
    (results / "link-to-c").symlink_to(campaign)
    (results / "latest").unlink()
    (results / "latest").symlink_to(target)
    done = run_cli("--results-dir", results, "run", "--resume", "latest", "--no-progress")
    assert done.returncode == 2 and "latest" in one_line(done)


# ---- 3. kernel outputs stay in their case -------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["cases.jsonl", "records.jsonl", "../x.pgm", "/tmp/x.pgm", "rep-0.json", ".hidden"]
)
def test_a_kernel_output_takes_a_name_not_a_path(tmp_path, lock, value):
    exp = tmp_path / "dump.toml"
    exp.write_text(
        'description = "d"\n[[sweep]]\nbinary = ["mandelbrot-c-serial"]\n'
        f"params = {{ width = [32], height = [32], dump = [{json.dumps(value)}] }}\n"
    )
    done = run_cli("plan", exp)
    assert done.returncode == 2 and "params.dump" in one_line(done)


def test_a_kernel_output_lands_in_its_case_directory(tmp_path, lock):
    exp = tmp_path / "dump.toml"
    exp.write_text(
        'description = "d"\nrepetitions = 1\nwarmup = 0\n[[sweep]]\nbinary = ["mandelbrot-c-serial"]\n'
        'params = { width = [32], height = [32], max_iter = [20], dump = ["image.pgm"] }\n'
    )
    results = tmp_path / "results"
    done = run_cli("--results-dir", results, "run", exp, "--name", "d", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert [p.relative_to(results / "d").parts[0] for p in results.rglob("image.pgm")] == ["raw"]


# ---- 4. no hangs --------------------------------------------------------------------------------------


def test_a_fifo_for_records_hangs_nothing(planned):
    results, campaign = planned
    case_id = json.loads((campaign / "cases.jsonl").read_text())["case_id"]
    (campaign / "raw" / case_id).mkdir(parents=True)
    os.mkfifo(campaign / "raw" / case_id / "records.jsonl")
    status = run_cli("--results-dir", results, "status", "c", timeout=30)
    assert status.returncode == 1 and "not a regular file" in status.stdout
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress", timeout=30)
    assert done.returncode == 3 and "not a regular file" in done.stderr.splitlines()[-1]


def test_a_fifo_for_the_measurement_lock_hangs_nothing(planned, tmp_path):
    results, _ = planned
    fifo = tmp_path / "lock.fifo"
    os.mkfifo(fifo)
    done = run_cli(
        "--results-dir",
        results,
        "run-case",
        "c",
        "0",
        "--no-wait",
        env={"SCALEBENCH_MEASURE_LOCK": str(fifo)},
        timeout=30,
    )
    assert done.returncode == 3 and "not a regular file" in one_line(done)


def test_a_million_cases_are_refused_at_once(tmp_path):
    axis = "[" + ", ".join(str(i) for i in range(10)) + "]"
    exp = tmp_path / "huge.toml"
    params = ", ".join(f"p{i} = {axis}" for i in range(6))
    exp.write_text(f'description = "h"\n[[sweep]]\nbinary = ["mcpi-c-serial"]\nparams = {{ {params} }}\n')
    started = time.monotonic()
    done = run_cli("plan", exp)
    assert time.monotonic() - started < 20
    assert done.returncode == 2 and "1000000 cases" in one_line(done) and "100000" in one_line(done)


# ---- 5. one line, not a traceback --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("timeout_s = 1e10", "timeout_s"),
        ("timeout_s = 1e300", "timeout_s"),
        ('[env]\nX = "a\\u0000b"', "env.X"),
    ],
)
def test_bad_values_are_one_line_at_plan(tmp_path, setting, key):
    exp = tmp_path / "bad.toml"
    exp.write_text(f'description = "b"\n{setting}\n\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n')
    done = run_cli("plan", exp)
    assert done.returncode == 2 and key in one_line(done)


def test_a_records_path_that_is_a_directory(planned):
    results, campaign = planned
    case_id = json.loads((campaign / "cases.jsonl").read_text())["case_id"]
    (campaign / "raw" / case_id / "records.jsonl").mkdir(parents=True)
    status = run_cli("--results-dir", results, "status", "c")
    assert status.returncode == 1 and "Traceback" not in status.stderr
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3 and "Traceback" not in done.stderr


@pytest.mark.parametrize("code", ["EROFS", "ENOSPC"])
def test_a_failing_file_system_is_one_line(planned, monkeypatch, capsys, code):
    """A read-only or full disk under analyze: one line naming the file, exit 3, no table half-written."""
    import errno

    from jobs.entry import main

    results, campaign = planned
    assert run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress").returncode == 0

    def failing(table, sink, *args, **kwargs):
        sink.write(b"partial")
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    # the writers table holds the function itself (imported before this test in a whole-suite run)
    from analysis.outputs.tables import WRITERS

    monkeypatch.setitem(WRITERS, ".csv", failing)
    # main() exports --results-dir to the environment for what it starts: undone after this test
    monkeypatch.setenv("SCALEBENCH_RESULTS_DIR", str(results))
    status = main(["--results-dir", str(results), "analyze", "c", "--format", "csv"])
    err = capsys.readouterr().err
    assert status == 3, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("scalebench analyze: error: ")
    assert not [
        p for p in (campaign / "analysis").rglob("*") if p.name.endswith(".tmp") or p.suffix == ".csv"
    ]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_early_signal_is_one_line(tmp_path, signum):
    exp = ROOT / "config" / "experiments" / "smoke.toml"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scalebench"), "--results-dir", str(tmp_path / "r"), "plan", str(exp)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.4)  # past the interpreter's start, inside the command
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the plan finished before the signal")
    assert proc.returncode == 130 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err


def test_staging_left_by_a_killed_plan_is_removed(planned, tmp_path):
    results, _ = planned
    stale = results / ".c2.staging-999999999"
    stale.mkdir()
    exp = tmp_path / "trust.toml"
    assert run_cli("--results-dir", results, "plan", exp, "--write", "--name", "c2").returncode == 0
    assert not stale.exists()


# ---- 6. nothing counted silently ----------------------------------------------------------------------


def test_records_that_do_not_belong_are_left_out_everywhere(planned):
    results, campaign = planned
    assert run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress").returncode == 0
    (path,) = records_of(campaign)
    first = case_records(campaign, path.name)[0]
    strays = [first | {"rep": 99}, first | {"rep": 1, "wall_s": 1e308}, first | {"campaign": "other"}]
    plant(path, strays)
    status = run_cli("--results-dir", results, "status", "c")
    assert status.returncode == 0, status.stdout
    for line, why in ((4, "outside the case's plan"), (5, "twice"), (6, "twice")):
        assert f"reps.csv:{line}: " in status.stdout and why in status.stdout
    done = run_cli("--results-dir", results, "analyze", "c", "--format", "csv")
    assert done.returncode == 0, done.stderr
    with (campaign / "analysis" / "summary.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["n"] == "2"
    unreadable = (campaign / "analysis" / "unreadable.csv").read_text()
    assert "reps.csv:4" in unreadable and "outside the case's plan" in unreadable


def test_an_implausible_time_and_another_campaign_are_named(planned):
    """The plan's repetitions hold the strays here (the first record of a repetition wins otherwise)."""
    results, campaign = planned
    lines = (campaign / "cases.jsonl").read_text()
    case = json.loads(lines)
    directory = campaign / "raw" / case["case_id"]
    directory.mkdir(parents=True)
    assert run_cli("--results-dir", results, "run-case", "c", "0", "--rep", "0").returncode == 0
    (first,) = case_records(campaign, case["case_id"])
    plant(directory, [first | {"rep": 1, "wall_s": 1e308}])
    status = run_cli("--results-dir", results, "status", "c")
    assert "reps.csv:3: wall_s 1e+308 is implausible" in status.stdout
    for name in STORED_FILES:  # the records of the first run gone, the long tables with them
        (directory / name).unlink(missing_ok=True)
    plant(directory, [first | {"campaign": "another"}])
    status = run_cli("--results-dir", results, "status", "c")
    assert "reps.csv:2: a record of campaign 'another'" in status.stdout


# ---- the small ones -----------------------------------------------------------------------------------


def test_printed_hints_are_shell_quoted(tmp_path, lock):
    exp = tmp_path / "trust.toml"
    exp.write_text(EXPERIMENT)
    results = tmp_path / "it's $(touch pwned) here"
    done = run_cli("--results-dir", results, "run", exp, "--name", "q", "--no-progress")
    assert done.returncode == 0, done.stderr
    hint = next(line for line in done.stdout.splitlines() if line.startswith("analyse it with:"))
    command = hint.removeprefix("analyse it with: ")
    import shlex

    assert shlex.split(command)[-1] == str(results / "q")


def test_usage_errors_are_one_line():
    done = run_cli("plan", "--no-such-option", "x.toml")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_a_results_directory_with_a_newline_leaves_nothing(tmp_path):
    results = tmp_path / "a\nb"
    done = run_cli("--results-dir", results, "run", ROOT / "config" / "experiments" / "smoke.toml")
    assert done.returncode == 2 and "control character" in one_line(done)
    assert list(tmp_path.iterdir()) == []


def test_excludes_that_drop_every_case(tmp_path):
    exp = tmp_path / "none.toml"
    exp.write_text(EXPERIMENT + '\n[[exclude]]\nbinary = ["mcpi-c-serial"]\n')
    done = run_cli("plan", exp)
    assert done.returncode == 2 and "[[exclude]]" in one_line(done)


def test_a_byte_order_mark_is_accepted(tmp_path):
    exp = tmp_path / "bom.toml"
    exp.write_bytes(b"\xef\xbb\xbf" + EXPERIMENT.encode())
    done = run_cli("plan", exp)
    assert done.returncode == 0, done.stderr


def test_a_campaign_file_owned_by_another_user_is_refused(planned):
    results, campaign = planned
    os.chown(campaign / "cases.jsonl", NOBODY, -1)
    (campaign / "cases.jsonl").chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    done = run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    assert done.returncode == 3 and "cases.jsonl" in one_line(done)


def test_nothing_outside_is_touched_by_a_refused_resume(planned, tmp_path):
    results, campaign = planned
    before = {k: v for k, v in tree(tmp_path).items() if not k.startswith(str(campaign))}
    _edit_first_case(campaign, EDITS["binary path"])
    run_cli("--results-dir", results, "run", "--resume", "c", "--no-progress")
    after = {k: v for k, v in tree(tmp_path).items() if not k.startswith(str(campaign))}
    assert after == before
    shutil.rmtree(campaign)


@pytest.fixture
def small_fs(tmp_path):
    """A 3 MiB tmpfs (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    mount = tmp_path / "small-fs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_read_only_results_directory_is_one_line(small_fs, tmp_path, lock):
    exp = tmp_path / "trust.toml"
    exp.write_text(EXPERIMENT)
    results = small_fs / "r"
    assert run_cli("--results-dir", results, "run", exp, "--name", "c", "--no-progress").returncode == 0
    (results / "c" / "raw").rename(results / "c" / "raw-measured")  # so that a resume has work to do
    (results / "c" / "raw").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    for argv in (
        ["plan", exp, "--write", "--name", "d"],
        ["run", exp, "--name", "e", "--no-progress"],
        ["run", "--resume", "c", "--no-progress"],
        ["analyze", "c"],
    ):
        done = run_cli("--results-dir", results, *argv)
        assert done.returncode == 3, (argv, done.stderr)
        line = one_line(done) if argv[0] != "run" or "--resume" not in argv else done.stderr.splitlines()[-1]
        assert "Read-only file system" in line and str(results) in line and "Traceback" not in done.stderr


def test_a_full_disk_under_analyze_is_one_line_and_leaves_no_table(small_fs, tmp_path, lock):
    exp = tmp_path / "trust.toml"
    exp.write_text(EXPERIMENT)
    results = small_fs / "r"
    assert run_cli("--results-dir", results, "run", exp, "--name", "c", "--no-progress").returncode == 0
    subprocess.run(["dd", "if=/dev/zero", f"of={small_fs / 'filler'}", "bs=64k"], capture_output=True)
    done = run_cli("--results-dir", results, "analyze", "c")
    assert done.returncode == 3 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]  # the cache's note
    assert len(errors) == 1 and "No space left on device" in errors[0] and str(results / "c") in errors[0]
    # The same analysis on a disk with room: which of its tables are empty files by nature.
    reference = tmp_path / "reference"
    shutil.copytree(results / "c", reference / "c", ignore=shutil.ignore_patterns("analysis"))
    assert run_cli("--results-dir", reference, "analyze", "c").returncode == 0
    empty = {p.name for p in (reference / "c" / "analysis").iterdir() if p.is_file() and not p.stat().st_size}
    files = [p for p in (results / "c" / "analysis").rglob("*") if p.is_file()]
    assert [p for p in files if p.name.endswith(".tmp")] == []
    assert [p for p in files if not p.stat().st_size and p.name not in empty] == []
