"""The `scalebench` entry point: every command is reachable and owned by the module the map names."""

import argparse
import importlib.machinery
import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def load_entry_point():
    loader = importlib.machinery.SourceFileLoader("scalebench_entry", str(ROOT / "scalebench"))
    spec = importlib.util.spec_from_loader("scalebench_entry", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def registered_commands(module_name: str) -> list[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module_name).register(sub)
    return list(sub.choices)


def test_command_map_matches_what_each_module_registers():
    entry = load_entry_point()
    for module_name, commands in entry.COMMAND_MODULES.items():
        assert registered_commands(module_name) == commands, module_name


@pytest.mark.parametrize(
    "argv, owner",
    [
        (["run-case", "latest", "0"], "jobs.cli"),
        (["submit", "x.toml"], "jobs.slurm.cli"),
        (["analyze", "latest"], "analysis.cli"),
        (["--results-dir", "/r", "run-case", "latest", "0"], "jobs.cli"),
        (["--results-dir=/r", "--trust-group", "status", "c"], "jobs.cli"),
        (["--trust-group", "--results-dir", "analyze", "analyze", "c"], "analysis.cli"),
    ],
)
def test_only_the_owner_of_a_command_is_imported(argv, owner):
    assert load_entry_point().modules_for(argv) == [owner]


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, str(ROOT / "scalebench"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for commands in load_entry_point().COMMAND_MODULES.values():
        for command in commands:
            assert f"    {command} " in out.stdout


def test_unknown_command_is_a_usage_error():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), "frobnicate"], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "frobnicate" in out.stderr


def test_help_before_setup_says_to_run_make_setup(tmp_path):
    # A fresh clone: no .venv, started by a python that lacks the project's packages (pandas, tqdm).
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "scalebench").write_text((ROOT / "scalebench").read_text())
    for name in ("jobs", "analysis", "sbcore"):
        (clone / name).symlink_to(ROOT / name)
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    for package in ("pandas", "tqdm"):
        (blocker / f"{package}.py").write_text(
            f"raise ModuleNotFoundError('no {package}', name='{package}')\n"
        )
    out = subprocess.run(
        [sys.executable, str(clone / "scalebench"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(blocker), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 3 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "make setup" in out.stderr
