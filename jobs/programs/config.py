"""The [programs.<name>] tables of an experiment: a user's own program, validated before anything runs
(docs/own-programs.md). Every problem is one UsageError line naming the file, the key and the value.

    [programs.zstd]
    command = ["zstd", "-T{threads}", "-q", "-f", "-o", "/dev/null", "{input}"]
    runtime = "threads"               # openmp | threads | mpi | serial
    figure = "wall"                   # or { regex = 'Time: ([0-9.]+)', unit = "s", better = "lower" }

A sweep names it with `program = "zstd"` instead of `binary`.
"""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from jobs.config_fields import NO_NUL, Env
from sbcore import program_spec
from sbcore.names import name_problem

ARG_WORDS = "must be a non-empty string without NUL"
Arg = Annotated[str, Meta(min_length=1, pattern=NO_NUL, extra={"problem": ARG_WORDS})]
COMMAND_WORDS = (
    "must be a list of arguments, not a shell string: scalebench never runs a shell "
    '(write ["prog", "arg", ...]; put pipes and redirections into a script)'
)
BUILD_WORDS = 'a list of arguments, e.g. ["make", "-C", "/home/me/solver"]'
FIGURE_WORDS = '"wall" or a table { regex = \'...\', unit = "s", better = "lower" }'
UNIT_WORDS = 'the figure\'s unit, e.g. "s", "ms", "MB/s", "GFLOP/s"'


class Extractor(msgspec.Struct, forbid_unknown_fields=True):
    """Where a value is found in the program's output: { regex = '...' } or { json = 'path.to.value' }."""

    regex: str | None = None
    json: str | None = None
    stream: Literal[program_spec.STREAMS] = "both"


class Figure(Extractor, forbid_unknown_fields=True, kw_only=True):
    """The figure of merit, when not the wall time."""

    unit: Annotated[
        str, Meta(pattern=r"\S", max_length=32, extra={"problem": UNIT_WORDS, "missing": UNIT_WORDS})
    ]
    better: (
        Annotated[
            Literal[program_spec.BETTER], Meta(extra={"enum": 'say whether "lower" or "higher" is better'})
        ]
        | None
    ) = None


class Program(msgspec.Struct, forbid_unknown_fields=True):
    """One [programs.<name>] table (docs/own-programs.md)."""

    command: Annotated[
        list[Arg],
        Meta(
            min_length=1,
            extra={
                "type": COMMAND_WORDS,
                "length": "must be a non-empty list of strings",
                "missing": 'the program as a list of arguments, e.g. ["./solver", "-n", "{n}"]',
            },
        ),
    ]
    runtime: Annotated[
        Literal[tuple(program_spec.RUNTIMES)],
        Meta(extra={"missing": f"one of {', '.join(program_spec.RUNTIMES)}"}),
    ]
    workers_env: Annotated[
        str,
        Meta(
            pattern=r"\A(?:[A-Za-z_][A-Za-z0-9_]*)?\Z",
            extra={"type": 'the variable that takes the worker count, or ""',
                   "pattern": "not a valid environment variable name"},
        ),
    ] | None = None  # fmt: skip
    place: Literal[program_spec.PLACES] | None = None
    cwd: (
        Annotated[
            str,
            Meta(
                pattern=r"\A/[^\x00]*\Z",
                extra={"problem": "an absolute directory (the program's working directory)"},
            ),
        ]
        | None
    ) = None
    env: Env = {}
    build: (
        Annotated[list[Arg], Meta(min_length=1, extra={"type": BUILD_WORDS, "length": BUILD_WORDS})] | None
    ) = None
    figure: Annotated[Literal["wall"] | Figure, Meta(extra={"type": FIGURE_WORDS, "enum": FIGURE_WORDS})] = (
        "wall"
    )
    result: Extractor | None = None
    pop: Literal[program_spec.POP_METHODS] = "task-cpu"


Programs = Annotated[dict[str, Program], Meta(extra={"type": "must be a table of [programs.<name>] tables"})]


def check_programs(check, raw) -> dict[str, dict]:
    """name -> the program's validated settings (defaults filled in)."""
    return programs(check, check.decode(raw, Programs, "programs"))


def programs(check, tables: dict[str, Program]) -> dict[str, dict]:
    """Decoded [programs.<name>] tables as the settings a case's program spec is made of."""
    found = {}
    for name, table in tables.items():
        if name_problem(name) or "-" in name:
            check.fail("programs", name, "a program's name: letters, digits, _ . + (no '-'), as a kernel's")
        found[name] = _program(check, table, f"programs.{name}")
    return found


def _program(check, table: Program, where: str) -> dict:
    """The rules between a program's settings (its types are declared in Program)."""
    for i, arg in enumerate(table.command):
        try:
            program_spec.check_argument(arg)
        except program_spec.SpecError as err:
            check.fail(f"{where}.command[{i}]", arg, str(err))
    first = table.command[0]
    if program_spec.placeholders(first):
        check.fail(f"{where}.command[0]", first, "the program itself cannot be a placeholder")
    if "/" in first and not first.startswith("/"):
        check.fail(
            f"{where}.command[0]",
            first,
            "a name found on PATH or an absolute path (a relative path would depend on the directory "
            "the campaign runs in)",
        )
    runtime = table.runtime
    workers_env = table.workers_env
    if workers_env is None:
        workers_env = "OMP_NUM_THREADS" if runtime in ("openmp", "mpi") else ""
    place = table.place or program_spec.DEFAULT_PLACE[runtime]
    if runtime == "mpi" and place != "launcher":
        check.fail(f"{where}.place", place, 'MPI programs are placed by mpirun/srun: place = "launcher"')
    for key, value in table.env.items():
        try:
            program_spec.check_argument(value)
        except program_spec.SpecError as err:
            check.fail(f"{where}.env.{key}", value, str(err))
    if table.pop in ("ompt", "libomp") and runtime != "openmp":
        check.fail(f"{where}.pop", table.pop, 'the OMPT methods need runtime = "openmp"')
    return {
        "command": list(table.command),
        "runtime": runtime,
        "workers_env": workers_env,
        "place": place,
        "cwd": table.cwd,
        "env": dict(table.env),
        "build": list(table.build) if table.build else None,
        "figure": _figure(check, table.figure, f"{where}.figure"),
        "result": _extractor(check, table.result, f"{where}.result") if table.result else None,
        "pop": table.pop,
    }


def _extractor(check, table: Extractor, where: str) -> dict:
    found = {k: getattr(table, k) for k in ("regex", "json") if getattr(table, k) is not None}
    try:
        program_spec.check_extractor(found, where)
    except program_spec.SpecError as err:
        check.fail(where, found.get("regex", found.get("json")), str(err))
    return found | {"stream": table.stream}


def _figure(check, value: Figure | str, where: str) -> dict:
    if value == "wall":
        return {"source": "wall"}
    table = _extractor(check, value, where)
    better = value.better or ("lower" if value.unit in program_spec.TIME_UNITS else None)
    if better is None:
        check.fail(f"{where}.better", better, 'say whether "lower" or "higher" is better')
    source = "regex" if "regex" in table else "json"
    return table | {"source": source, "unit": value.unit, "better": better}


WeakScaling = Annotated[list[str], Meta(extra={"type": "a list of params that grow with the worker count"})]


def check_program_sweep(check, sweep, where: str, programs: dict[str, dict]) -> None:
    """A sweep's program (one the experiment declares, instead of binaries) and its weak_scaling params
    (integers >= 1 per worker; sweep: a decoded config_types.Sweep)."""
    if sweep.program is None:
        if sweep.weak_scaling:
            check.fail(f"{where}.weak_scaling", sweep.weak_scaling, "only in a sweep of a program")
        return
    if sweep.binary is not None:
        check.fail(f"{where}.program", sweep.program, "a sweep names a program or binaries, not both")
    if sweep.program not in programs:
        have = ", ".join(programs) or "none"
        check.fail(f"{where}.program", sweep.program, f"no [programs.{sweep.program}] (have: {have})")
    for p in sweep.weak_scaling:
        values = sweep.params.get(p, [None])
        if not all(isinstance(v, int) and v >= 1 for v in values):
            check.fail(
                f"{where}.weak_scaling",
                p,
                "must name a param of this sweep whose values are integers >= 1 (per worker)",
            )


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
