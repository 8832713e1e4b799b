"""The README's commands: the first experiment runs exactly as written (its TOML and its commands), and
every other command in the README names the test that exercises it here (a command added to the README
without one fails this test)."""

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
# Where the tests live
USER = "tests/install/test_cluster_user.py"
USER_HELPERS = "tests/install/cluster_user.py"
RESULTS = "tests/test_results_dir.py"
COMPILERS = "tests/kernels/test_site_compilers.py"
SLURM_SITE = "tests/slurm/test_site_and_limits.py"
SLURM_USER = "tests/slurm/test_cluster_user_submit.py"
SETUP = "tests/test_setup_script.py"
UNAVAILABLE = "tests/jobs/test_unavailable_kernels.py"
THIS = "tests/test_readme.py"
SELF = (THIS, "test_first_experiment_runs_as_written")
# Command as written in the README (comment stripped, `a && b` split) -> (file, test) exercising it.
GATE = "tests/test_performance_gate.py"
EXERCISED_BY = {
    "./scalebench check accepted --write-references config/performance-references/mycluster.toml": (
        GATE,
        "gate",
    ),
    "./scalebench check latest --references config/performance-references/mycluster.toml --junit check.xml": (
        GATE,
        "test_fifteen_percent_slower_is_a_regression_named_in_junit",
    ),
    "./scalebench check latest --against accepted --json": (
        GATE,
        "test_against_the_previous_campaign_gives_the_same_verdicts",
    ),
    "./scalebench history --binary mcpi-c-omp --threads 2": (
        "tests/analysis/test_history.py",
        "test_history_orders_by_date_and_marks_the_regression",
    ),
    "make bench": (USER, "test_a_fresh_clone_runs_and_analyses_a_small_campaign"),
    "make test": (SETUP, "test_test_target_requires_the_test_only_tools"),
    "make setup": (USER, "test_setup_names_the_missing_optional_tools_and_goes_on"),
    "make kernels": (UNAVAILABLE, "test_make_kernels_builds_the_rest_and_says_why_in_one_line_per_tool"),
    "./scalebench run first.toml": SELF,
    "./scalebench run mine.toml --analyze": (THIS, "test_own_program_runs_as_written"),
    "./scalebench analyze latest": SELF,
    "module load gcc openmpi python/3.11": (COMPILERS, "test_compiler_variables_are_honoured"),
    "git clone https://example.org/scalebench.git": (USER_HELPERS, "fresh_clone"),
    "cd scalebench": (USER_HELPERS, "fresh_clone"),
    "export SCALEBENCH_RESULTS_DIR=$HOME/scalebench-results": (
        RESULTS,
        "test_environment_variable_and_a_relative_option",
    ),
    "./scalebench nodes --from-slurm": (SLURM_SITE, "test_live_limits_and_nodes_from_the_test_cluster"),
    "./scalebench submit first.toml --node-types skylake --throttle 4": (
        SLURM_USER,
        "test_records_come_back_owned_by_the_submitting_user",
    ),
    "./scalebench status latest": (RESULTS, "test_default_is_results_of_the_current_directory"),
    "pip install ./scalebench": (USER, "test_pip_install_into_a_fresh_venv_runs_from_another_directory"),
    "scalebench build": (USER, "test_pip_install_into_a_fresh_venv_runs_from_another_directory"),
    "scalebench --results-dir /project/me/results run first.toml": (
        RESULTS,
        "test_global_option_before_or_after_every_command",
    ),
    "scalebench --version": (RESULTS, "test_version_names_the_commit"),
}


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def readme_commands() -> list[str]:
    commands = []
    for block in blocks("sh"):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            commands += [part.strip() for part in line.split("&&") if part.strip()]
    return commands


def test_every_readme_command_names_an_existing_test():
    commands = readme_commands()
    assert len(commands) >= 10, commands
    missing = [c for c in commands if c not in EXERCISED_BY]
    assert not missing, f"README commands without a test in EXERCISED_BY: {missing}"
    for command, (path, name) in EXERCISED_BY.items():
        assert command in commands, f"{command!r} is no longer in the README: drop it from EXERCISED_BY"
        assert re.search(rf"^def {name}\(", (ROOT / path).read_text(), flags=re.M), (path, name)


@pytest.mark.slow
def test_first_experiment_runs_as_written(tmp_path, bin_dir):
    toml = blocks("toml")[0]
    (tmp_path / "first.toml").write_text(toml)
    first = [c for c in readme_commands() if EXERCISED_BY.get(c) == SELF]
    assert first == ["./scalebench run first.toml", "./scalebench analyze latest"]
    for command in first:
        argv = command.split()[1:]
        proc = subprocess.run(
            [sys.executable, str(ROOT / "scalebench"), *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, (command, proc.stderr[-2000:])
    analysis = tmp_path / "results" / "latest" / "analysis"
    for name in ("report.html", "summary.csv", "speedup.csv"):
        assert (analysis / name).is_file(), (name, proc.stdout[-1500:], proc.stderr[-1500:])
    assert "best mcpi" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_own_program_runs_as_written(tmp_path, bin_dir):
    """The README's own-program example, with its file path pointed at a file of the test's."""
    toml = blocks("toml")[1]
    assert "/path/to/a/big/file" in toml
    data = tmp_path / "big.txt"
    data.write_bytes(b"".join(b"%09d scalebench own program example\n" % i for i in range(300_000)))
    (tmp_path / "mine.toml").write_text(toml.replace("/path/to/a/big/file", str(data)))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scalebench"), "run", "mine.toml", "--analyze"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "best zstd" in proc.stdout and "zstd-program-threads" in proc.stdout, proc.stdout[-2000:]
    assert (tmp_path / "results" / "latest" / "analysis" / "report.html").is_file()
