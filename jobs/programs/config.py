"""The [programs.<name>] tables of an experiment: a user's own program, validated before anything runs
(docs/own-programs.md). Every problem is one UsageError line naming the file, the key and the value.

    [programs.zstd]
    command = ["zstd", "-T{threads}", "-q", "-f", "-o", "/dev/null", "{input}"]
    runtime = "threads"               # openmp | threads | mpi | serial
    figure = "wall"                   # or { regex = 'Time: ([0-9.]+)', unit = "s", better = "lower" }

A sweep names it with `program = "zstd"` instead of `binary`.
"""

from __future__ import annotations

from sbcore import program_spec
from sbcore.names import name_problem

PROGRAM_KEYS = {
    "command",
    "runtime",
    "workers_env",
    "place",
    "cwd",
    "env",
    "build",
    "figure",
    "result",
    "pop",
}
EXTRACTOR_KEYS = {"regex", "json", "stream"}
FIGURE_KEYS = EXTRACTOR_KEYS | {"unit", "better"}


def check_programs(check, raw) -> dict[str, dict]:
    """name -> the program's validated settings (defaults filled in)."""
    if not isinstance(raw, dict):
        check.fail("programs", raw, "must be a table of [programs.<name>] tables")
    programs = {}
    for name, table in raw.items():
        where = f"programs.{name}"
        if name_problem(name) or "-" in name:
            check.fail("programs", name, "a program's name: letters, digits, _ . + (no '-'), as a kernel's")
        if not isinstance(table, dict):
            check.fail(where, table, "must be a table")
        check.keys(table, PROGRAM_KEYS, where)
        programs[name] = _program(check, table, where)
    return programs


def _program(check, table: dict, where: str) -> dict:
    command = table.get("command")
    if command is None:
        check.missing(
            f"{where}.command", 'the program as a list of arguments, e.g. ["./solver", "-n", "{n}"]'
        )
    if isinstance(command, str):
        check.fail(
            f"{where}.command",
            command,
            "a list of arguments, not a shell string: scalebench never runs a shell "
            '(write ["prog", "arg", ...]; put pipes and redirections into a script)',
        )
    if not isinstance(command, list) or not command:
        check.fail(f"{where}.command", command, "must be a non-empty list of strings")
    for i, arg in enumerate(command):
        if not isinstance(arg, str) or not arg or "\0" in arg:
            check.fail(f"{where}.command[{i}]", arg, "must be a non-empty string without NUL")
        try:
            program_spec.check_argument(arg)
        except program_spec.SpecError as err:
            check.fail(f"{where}.command[{i}]", arg, str(err))
    first = command[0]
    if program_spec.placeholders(first):
        check.fail(f"{where}.command[0]", first, "the program itself cannot be a placeholder")
    if "/" in first and not first.startswith("/"):
        check.fail(
            f"{where}.command[0]",
            first,
            "a name found on PATH or an absolute path (a relative path would depend on the directory "
            "the campaign runs in)",
        )
    runtime = table.get("runtime")
    if runtime not in program_spec.RUNTIMES:
        check.fail(f"{where}.runtime", runtime, f"must be one of {', '.join(program_spec.RUNTIMES)}")
    workers_env = table.get("workers_env", "OMP_NUM_THREADS" if runtime in ("openmp", "mpi") else "")
    if not isinstance(workers_env, str):
        check.fail(f"{where}.workers_env", workers_env, 'the variable that takes the worker count, or ""')
    if workers_env:
        check.env({workers_env: "1"}, f"{where}.workers_env")
    place = table.get("place", program_spec.DEFAULT_PLACE[runtime])
    if place not in program_spec.PLACES:
        check.fail(f"{where}.place", place, f"must be one of {', '.join(program_spec.PLACES)}")
    if runtime == "mpi" and place != "launcher":
        check.fail(f"{where}.place", place, 'MPI programs are placed by mpirun/srun: place = "launcher"')
    cwd = table.get("cwd")
    if cwd is not None:
        check.str_(cwd, f"{where}.cwd")
        if not cwd.startswith("/") or "\0" in cwd:
            check.fail(f"{where}.cwd", cwd, "an absolute directory (the program's working directory)")
    env = check.env(table.get("env", {}), f"{where}.env")
    for key, value in env.items():
        try:
            program_spec.check_argument(value)
        except program_spec.SpecError as err:
            check.fail(f"{where}.env.{key}", value, str(err))
    build = table.get("build")
    if build is not None:
        if isinstance(build, str) or not isinstance(build, list) or not build:
            check.fail(f"{where}.build", build, 'a list of arguments, e.g. ["make", "-C", "/home/me/solver"]')
        for i, arg in enumerate(build):
            if not isinstance(arg, str) or not arg or "\0" in arg:
                check.fail(f"{where}.build[{i}]", arg, "must be a non-empty string without NUL")
    pop = table.get("pop", "task-cpu")
    if pop not in program_spec.POP_METHODS:
        check.fail(f"{where}.pop", pop, f"must be one of {', '.join(program_spec.POP_METHODS)}")
    if pop in ("ompt", "libomp") and runtime != "openmp":
        check.fail(f"{where}.pop", pop, 'the OMPT methods need runtime = "openmp"')
    return {
        "command": list(command),
        "runtime": runtime,
        "workers_env": workers_env,
        "place": place,
        "cwd": cwd,
        "env": env,
        "build": list(build) if build else None,
        "figure": _figure(check, table.get("figure", "wall"), f"{where}.figure"),
        "result": _extractor(check, table["result"], f"{where}.result", EXTRACTOR_KEYS)
        if "result" in table
        else None,
        "pop": pop,
    }


def _extractor(check, table, where: str, keys: set) -> dict:
    if not isinstance(table, dict):
        check.fail(where, table, "a table: { regex = '...' } or { json = 'path.to.value' }")
    check.keys(table, keys, where)
    try:
        program_spec.check_extractor(table, where)
    except program_spec.SpecError as err:
        check.fail(where, table.get("regex", table.get("json")), str(err))
    stream = table.get("stream", "both")
    if stream not in program_spec.STREAMS:
        check.fail(f"{where}.stream", stream, f"must be one of {', '.join(program_spec.STREAMS)}")
    found = {k: table[k] for k in ("regex", "json") if k in table}
    return found | {"stream": stream}


def _figure(check, value, where: str) -> dict:
    if value == "wall":
        return {"source": "wall"}
    if not isinstance(value, dict):
        check.fail(where, value, '"wall" or a table { regex = \'...\', unit = "s", better = "lower" }')
    table = _extractor(check, value, where, FIGURE_KEYS)
    unit = value.get("unit")
    if not isinstance(unit, str) or not unit.strip() or len(unit) > 32:
        check.fail(f"{where}.unit", unit, 'the figure\'s unit, e.g. "s", "ms", "MB/s", "GFLOP/s"')
    better = value.get("better", "lower" if unit in program_spec.TIME_UNITS else None)
    if better not in program_spec.BETTER:
        check.fail(f"{where}.better", better, 'say whether "lower" or "higher" is better')
    return table | {"source": "regex" if "regex" in table else "json", "unit": unit, "better": better}


def check_program_sweep(
    check, raw: dict, where: str, programs: dict[str, dict]
) -> tuple[str | None, list[str]]:
    """(the program a sweep names, the params that grow with the workers: weak scaling)."""
    name = raw.get("program")
    weak = raw.get("weak_scaling", [])
    if name is None:
        if weak:
            check.fail(f"{where}.weak_scaling", weak, "only in a sweep of a program")
        return None, []
    if "binary" in raw:
        check.fail(f"{where}.program", name, "a sweep names a program or binaries, not both")
    if name not in programs:
        check.fail(f"{where}.program", name, f"no [programs.{name}] (have: {', '.join(programs) or 'none'})")
    params = raw.get("params", {})
    if not isinstance(weak, list) or not all(isinstance(p, str) for p in weak):
        check.fail(f"{where}.weak_scaling", weak, "a list of params that grow with the worker count")
    for p in weak:
        values = params.get(p) if isinstance(params, dict) else None
        values = values if isinstance(values, list) else [values]
        if values == [None] or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values
        ):
            check.fail(
                f"{where}.weak_scaling",
                p,
                "must name a param of this sweep whose values are integers >= 1 (per worker)",
            )
    return name, list(weak)


def resolve(program: dict, name: str, values: dict, weak: list[str], ranks: int, timeout_s=None) -> dict:
    """The case's program spec (what build/bin/program-run runs): placeholders replaced by `values`
    (threads, ranks, workers and the case's params; weak-scaling params already multiplied)."""
    return {
        "name": name,
        "runtime": program["runtime"],
        "argv": [program_spec.substitute(a, values) for a in program["command"]],
        "env": {k: program_spec.substitute(v, values) for k, v in program["env"].items()},
        "cwd": program["cwd"],
        "workers_env": program["workers_env"],
        "place": program["place"],
        "pop": program["pop"],
        "figure": program["figure"],
        "result": program["result"],
        "ranks": ranks,
        "scaling": "weak" if weak else "strong",
        "weak": list(weak),
        "timeout_s": timeout_s,  # the case's, for the whole invocation: the runner stops the program first
    }


def used_names(program: dict) -> set[str]:
    """Every placeholder name the command and the environment use."""
    names = set()
    for arg in [*program["command"], *program["env"].values()]:
        names |= set(program_spec.placeholders(arg))
    return names


def build_commands(programs: dict[str, dict]) -> list[tuple[str, list[str], str | None]]:
    """(program, build argv, working directory) of every program that has a build command."""
    return [(name, p["build"], p["cwd"]) for name, p in programs.items() if p["build"]]


def check_workers_reach(check, program: dict, where: str) -> None:
    """A threaded program must learn its worker count: from its variable or a placeholder."""
    if program["runtime"] == "serial":
        return
    if program["workers_env"] or used_names(program) & {"threads", "workers"}:
        return
    check.fail(
        where,
        program["command"],
        "the worker count does not reach the program: set workers_env or put {threads} into the command",
    )
