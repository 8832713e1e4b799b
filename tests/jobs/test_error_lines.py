"""Bad input and a failing environment: one line on stderr naming the file, key or value, and the exit
status of docs/exit-codes.md (2 bad input, 3 environment); nothing measured is lost."""

import errno
import os
import subprocess
import sys

import pytest

from jobs import campaign as campaign_module
from jobs.campaign import create_campaign
from sbcore.errors import UsageError
from tests.records import campaign_records

from .conftest import ROOT, run_cli

SMALL = 'description = "small"\nrepetitions = 2\nwarmup = 0\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n'
SMALL += "params = { samples = [10000] }\n"


def _one_line(proc, code: int, *fragments) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_non_utf8_experiment_is_one_line(tmp_path, bin_dir):
    experiment = tmp_path / "latin1.toml"
    experiment.write_bytes(b'description = "caf\xe9"\n')
    _one_line(run_cli("plan", experiment), 2, str(experiment), "not UTF-8 text (byte 18: 0xe9)")


@pytest.mark.parametrize("name", ["a/b", "..", "x\ny", ""])
def test_bad_name_is_one_line(tmp_path, bin_dir, name):
    experiment = tmp_path / "small.toml"
    experiment.write_text(SMALL)
    proc = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "r", "--name", name)
    _one_line(proc, 2, "--name", "not a valid name")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_concurrent_name_is_one_line(tmp_path, bin_dir, monkeypatch):
    """Another command creates the same --name between our check and our rename."""
    experiment = tmp_path / "small.toml"
    experiment.write_text(SMALL)
    real_rename = os.rename

    def racing_rename(src, dst):
        os.makedirs(os.path.join(dst, "raw"))  # the other command's campaign, already populated
        return real_rename(src, dst)

    monkeypatch.setattr(campaign_module.os, "rename", racing_rename)
    with pytest.raises(UsageError, match="was created by another command meanwhile") as err:
        create_campaign(experiment, name="x", results_dir=tmp_path / "r")
    assert "\n" not in str(err.value)
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["x"]  # our staging directory is gone
    assert err.value.exit_code == 2 and errno.ENOTEMPTY


def test_broken_pipe_is_one_line_and_exit_3(tmp_path, bin_dir):
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scalebench"), "plan", str(ROOT / "config/experiments/workstation.toml")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # like `| head -0`: the reader is gone before the first line
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 3, err
    assert err.strip().splitlines() == ["scalebench plan: error: output closed by its reader (broken pipe)"]


@pytest.fixture
def full_disk(tmp_path):
    """A 2 MiB tmpfs (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    mount = tmp_path / "small-fs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_full_disk_is_one_line_naming_the_file_and_keeps_the_records(
    tmp_path, bin_dir, full_disk, monkeypatch
):
    # a lock of its own: another measurer on this host would add a line saying run-case waits for it
    monkeypatch.setenv("SCALEBENCH_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    experiment = tmp_path / "small.toml"
    experiment.write_text(SMALL.replace("samples = [10000]", "samples = [10000, 20000]"))
    campaign = full_disk / "r" / "d"
    plan = run_cli("plan", experiment, "--write", "--results-dir", full_disk / "r", "--name", "d")
    assert plan.returncode == 0, plan.stderr
    first = run_cli("run-case", campaign, 0, "--rep", 0)
    assert first.returncode == 0, first.stderr
    before = campaign_records(campaign)
    filler = full_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # until full
    # Case 1 has no record file yet: its first page cannot be allocated (tmpfs fills by pages).
    line = _one_line(run_cli("run-case", campaign, 1), 3, "No space left on device")
    assert str(campaign / "raw") in line  # names the file it could not write
    assert campaign_records(campaign) == before  # nothing measured before is lost
    filler.unlink()
    status = run_cli("status", campaign)
    assert status.returncode == 1 and "1/4" in status.stdout, status.stdout


def test_analyze_of_a_campaign_that_never_ran_writes_a_report_saying_so(tmp_path, bin_dir):
    experiment = tmp_path / "small.toml"
    experiment.write_text(SMALL)
    assert (
        run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "r", "--name", "e").returncode == 0
    )
    proc = run_cli("analyze", tmp_path / "r" / "e")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    report = (tmp_path / "r" / "e" / "analysis" / "report.md").read_text()
    assert "Nothing was measured" in report and "1 case(s) never ran" in report


def test_analyze_of_an_all_failed_campaign_says_why(tmp_path, injection_bin_dir):
    experiment = tmp_path / "fail.toml"
    experiment.write_text(
        'description = "f"\nrepetitions = 1\nwarmup = 0\n[[sweep]]\nbinary = ["failinject-sh-exit3"]\n'
    )
    env = {"SCALEBENCH_BIN_DIR": str(injection_bin_dir)}
    run = run_cli("run", experiment, "--results-dir", tmp_path / "r", "--name", "f", "--no-progress", env=env)
    assert run.returncode == 1
    proc = run_cli("analyze", tmp_path / "r" / "f", env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    report = (tmp_path / "r" / "f" / "analysis" / "report.md").read_text()
    assert "Nothing was measured" in report and "exit status 3: bad things happened (case(s) 0)" in report


@pytest.mark.parametrize(("content", "where"), [(None, "cannot read"), (b'{"index": 0}\n', ":1: not a case")])
def test_analyze_and_status_without_a_usable_cases_file(tmp_path, bin_dir, content, where):
    cases = _ran_and_spoilt(tmp_path, "cases.jsonl", content)
    for command in ("analyze", "status"):
        _one_line(run_cli(command, cases.parent), 2, str(cases), where)


@pytest.mark.parametrize(
    ("content", "why"), [(None, "cannot read"), (b"{cut", "not valid JSON"), (b"[]", "not a JSON")]
)
def test_analyze_without_a_usable_manifest(tmp_path, bin_dir, content, why):
    manifest = _ran_and_spoilt(tmp_path, "manifest.json", content)
    _one_line(run_cli("analyze", manifest.parent), 2, str(manifest), why)


def _ran_and_spoilt(tmp_path, name: str, content: bytes | None):
    """A small campaign, run completely, whose file `name` is then deleted (None) or overwritten."""
    experiment = tmp_path / "small.toml"
    experiment.write_text(SMALL)
    run = run_cli("run", experiment, "--results-dir", tmp_path / "r", "--name", "s", "--no-progress")
    assert run.returncode == 0, run.stderr
    path = tmp_path / "r" / "s" / name
    path.unlink() if content is None else path.write_bytes(content)
    return path
