"""Plan knows what the kernel accepts (its --check-args): every value a kernel would refuse is refused at
plan time with file, key and the kernel's own reason; a repetition that fails at run time is reported by
run and status with the kernel's one-line reason."""

import subprocess

import pytest

from .conftest import run_cli

BAD = [
    ("threads = [4097]", "sweep[0].threads = 4097", "--threads: '4097' is out of range"),
    ('params = { schedule = ["bogus,3"] }', "sweep[0].params.schedule = 'bogus,3'", "is not supported"),
    ("params = { width = [-5] }", "sweep[0].params.width = -5", "--width: '-5' is out of range"),
    ("params = { max_iter = [nan] }", "sweep[0].params.max_iter = nan", "is not an integer"),
    ("params = { nice = [40] }", "sweep[0].params.nice = 40", "is not a nice value"),
    ("params = { width = [1048576], height = [1048576] }", "sweep[0].params.width", "exceeds the limit"),
]


@pytest.mark.parametrize(("sweep", "key", "reason"), BAD)
def test_plan_refuses_what_the_kernel_refuses(tmp_path, bin_dir, sweep, key, reason):
    experiment = tmp_path / "bad.toml"
    experiment.write_text(f'description = "bad"\n[[sweep]]\nbinary = ["mandelbrot-c-omp"]\n{sweep}\n')
    proc = run_cli("plan", experiment, "--write", "--results-dir", tmp_path / "r")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert (
        str(experiment) in line and key in line and "mandelbrot-c-omp refuses it" in line and reason in line
    )
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_repetitions_beyond_the_kernel_limit_are_refused(tmp_path, bin_dir):
    experiment = tmp_path / "many.toml"
    experiment.write_text(
        'description = "many"\nrepetitions = 99999999999999999999\n[[sweep]]\nbinary = ["mcpi-c-serial"]\n'
    )
    proc = run_cli("plan", experiment)
    assert proc.returncode == 2 and "repetitions = 99999999999999999999: must be <= 1000000" in proc.stderr


def test_check_args_prints_nothing_and_runs_nothing(kernel):

    good = subprocess.run(
        [kernel("mcpi-c-omp"), "--samples", "4000000000000", "--check-args"], capture_output=True
    )
    assert good.returncode == 0 and good.stdout == b"" and good.stderr == b""
    bad = subprocess.run(
        [kernel("mcpi-c-omp"), "--samples", "0", "--check-args"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "mcpi-c-omp: --samples: '0' is out of range (1..4611686018427387904)"
    ]


RUNTIME = """
description = "failures with reasons"
repetitions = 1
warmup = 0
timeout_s = 2
[[sweep]]
binary = ["failinject-sh-exit2", "failinject-sh-holdout"]
"""


def test_run_and_status_print_the_kernels_reason(tmp_path, injection_bin_dir):
    experiment = tmp_path / "reasons.toml"
    experiment.write_text(RUNTIME)
    env = {"SCALEBENCH_BIN_DIR": str(injection_bin_dir)}
    run = run_cli("run", experiment, "--results-dir", tmp_path / "r", "--name", "f", "--no-progress", env=env)
    assert run.returncode == 1, run.stderr
    kernel_line = "exit status 2: failinject-sh-exit2: --width: '5' is out of range (8..64)"
    holdout = "exit status 0, but left a process holding its output open (killed after 2 s)"
    assert kernel_line in run.stderr and holdout in run.stderr, run.stderr
    status = run_cli("status", tmp_path / "r" / "f", env=env)
    assert status.returncode == 1
    assert kernel_line in status.stdout and holdout in status.stdout, status.stdout
    assert "timeout" not in status.stdout


def test_plan_asks_the_standard_tool_wrappers_too(tmp_path, bin_dir):
    experiment = tmp_path / "tool.toml"
    experiment.write_text(
        'description = "t"\n[[sweep]]\nbinary = ["perfbench-tool-pipe"]\nparams = { loops = [0] }\n'
    )
    proc = run_cli("plan", experiment)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "sweep[0].params.loops = 0: perfbench-tool-pipe refuses it: perfbench-tool-pipe: --loops:" in line
