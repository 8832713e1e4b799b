"""A user's program in an experiment file: what `plan` writes into its cases, and every setting it
refuses before anything runs, each with one line naming the file, the key and the value (exit 2)."""

import json

import pytest

from tests.jobs.conftest import run_cli
from tests.programs.conftest import write_experiment

GOOD = """
description = "a program"
node_types = ["workstation"]
repetitions = 2
warmup = 0

[programs.solver]
command = ["{prog}", "-n", "{{n}}", "--threads={{threads}}"]
runtime = "openmp"
figure = {{ regex = 'elapsed: ([0-9.]+) s', unit = "s" }}
result = {{ json = "argv[0]" }}

[[sweep]]
program = "solver"
threads = [1, 2]
pin = ["cores"]
params = {{ n = [100] }}
"""


def plan(tmp_path, text: str, *extra):
    path = write_experiment(tmp_path / "exp.toml", text)
    return run_cli("plan", path, "--write", "--name", "c", "--results-dir", tmp_path / "results", *extra)


def planned(tmp_path) -> list[dict]:
    text = (tmp_path / "results" / "c" / "cases.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_program_sweep_plans_one_case_per_point_with_its_resolved_command(tmp_path, argv_dumper):
    done = plan(tmp_path, GOOD.format(prog=argv_dumper))
    assert done.returncode == 0, done.stderr
    cases = planned(tmp_path)
    assert [(c["kernel"], c["lang"], c["model"], c["threads"]) for c in cases] == [
        ("solver", "program", "omp", 1),
        ("solver", "program", "omp", 2),
    ]
    spec = json.loads(cases[1]["argv"][cases[1]["argv"].index("--spec") + 1])
    assert spec["argv"] == [str(argv_dumper), "-n", "100", "--threads=2"]
    assert spec["workers_env"] == "OMP_NUM_THREADS" and spec["place"] == "openmp"
    assert cases[0]["params"] == {"n": 100} and cases[0]["program"] == "solver"
    assert len({c["case_id"] for c in cases}) == 2


def test_weak_scaling_multiplies_the_param_by_the_workers_and_keeps_the_per_worker_value(
    tmp_path, argv_dumper
):
    text = GOOD.format(prog=argv_dumper).replace(
        "params = { n = [100] }", 'params = { n = [100] }\nweak_scaling = ["n"]'
    )
    assert plan(tmp_path, text).returncode == 0
    cases = planned(tmp_path)
    specs = [json.loads(c["argv"][c["argv"].index("--spec") + 1]) for c in cases]
    assert [s["argv"][2] for s in specs] == ["100", "200"]
    assert all(c["params"] == {"n": 100} and c["weak_scaling"] == ["n"] for c in cases)
    assert {s["scaling"] for s in specs} == {"weak"}


BAD = [
    # (what to replace in GOOD, by what, the key and the words the one line must name)
    (
        'command = ["{prog}", "-n", "{{n}}", "--threads={{threads}}"]',
        'command = "{prog} -n 4"',
        "programs.solver.command",
        "not a shell string",
    ),
    (
        'command = ["{prog}",',
        'command = ["/nonexistent/solver",',
        "sweep[0].binary",
        "not an executable file",
    ),
    (
        '"--threads={{threads}}"]',
        '"--threads={{threads}}", "{{n}} > out.txt"]',
        "programs.solver.command[4]",
        "shell syntax",
    ),
    (
        'unit = "s" }}',
        "unit = \"s\", json = 'a.b' }}",
        "programs.solver.figure",
        "exactly one of regex or json",
    ),
    (
        "regex = 'elapsed: ([0-9.]+) s'",
        "regex = 'elapsed: ([0-9.]+'",
        "programs.solver.figure",
        "does not compile",
    ),
    (
        "regex = 'elapsed: ([0-9.]+) s'",
        "regex = 'elapsed: [0-9.]+ s'",
        "programs.solver.figure",
        "one capturing group",
    ),
    ('"-n", "{{n}}"', '"-n", "{{size}}"', "programs.solver.command", "no value for this placeholder"),
    (
        "params = {{ n = [100] }}",
        "params = {{ n = [100], m = [3] }}",
        "sweep[0].params.m",
        "uses no placeholder",
    ),
    ('runtime = "openmp"', 'runtime = "cuda"', "programs.solver.runtime", "must be one of"),
    (
        '"--threads={{threads}}"]\nruntime = "openmp"',
        '"--threads=2"]\nruntime = "threads"',
        "programs.solver.command",
        "does not reach the program",
    ),
    ('program = "solver"', 'program = "solvr"', "sweep[0].program", "no [programs.solvr]"),
    ('unit = "s" }}', 'unit = "MB/s" }}', "programs.solver.figure.better", "lower"),
    (
        'runtime = "openmp"',
        'runtime = "openmp"\npop = "libomp"\ncwd = "relative/dir"',
        "programs.solver.cwd",
        "absolute",
    ),
]


@pytest.mark.parametrize(("old", "new", "key", "words"), BAD, ids=[b[2] + ":" + b[3] for b in BAD])
def test_bad_program_settings_fail_the_plan_with_one_line(tmp_path, argv_dumper, old, new, key, words):
    text = GOOD.replace(old, new)
    assert text != GOOD, old
    done = plan(tmp_path, text.format(prog=argv_dumper))
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert key in lines[0] and words in lines[0] and "exp.toml" in lines[0], lines[0]
    assert not (tmp_path / "results" / "c").exists()


def test_a_program_that_is_not_executable_is_named(tmp_path, argv_dumper):
    plain = tmp_path / "solver"
    plain.write_text(argv_dumper.read_text())
    plain.chmod(0o644)
    done = plan(tmp_path, GOOD.format(prog=plain))
    assert done.returncode == 2 and str(plain) in done.stderr and "not an executable file" in done.stderr


def test_a_program_missing_from_path_is_named(tmp_path, argv_dumper):
    done = plan(tmp_path, GOOD.format(prog="no-such-solver-here"))
    assert done.returncode == 2 and "'no-such-solver-here': not found on PATH" in done.stderr


def test_the_build_command_runs_before_the_program_is_checked(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("elapsed: 0.5 s");return 0;}\n')
    text = f"""
description = "a program built by the plan"
node_types = ["workstation"]

[programs.hello]
command = ["{source}/hello"]
runtime = "serial"
cwd = "{source}"
build = ["gcc", "-O2", "hello.c", "-o", "hello"]

[[sweep]]
program = "hello"
"""
    done = plan(tmp_path, text)
    assert done.returncode == 0, done.stderr
    assert (source / "hello").is_file() and "building program hello: gcc -O2 hello.c -o hello" in done.stderr
    (source / "hello.c").write_text("int main(void){ return syntax error; }\n")
    (source / "hello").unlink()
    again = tmp_path / "again"
    again.mkdir()
    failed = plan(again, text)
    assert failed.returncode == 3, failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert "programs.hello.build = gcc -O2 hello.c -o hello: exit status 1" in last, last
    assert "error" in failed.stderr  # the compiler's own words, before the one line
