"""A user program as a case: the resolved form that `plan` writes into a case (its `program` field) and
that the program runner (kernels/programs/run_program.py) executes, and the rules both sides read:
placeholders, the figure of merit and the result value (docs/own-programs.md).

The program is always an argument vector, never a shell string. A placeholder `{name}` in an argument
is replaced by a swept value (`threads`, `ranks`, `workers`, any key of the sweep's params); `{{` and
`}}` stand for literal braces. The figure of merit is the process's wall time, or a number found in its
output by a regular expression or a JSON path; the result value, when declared, must be the same in
every variant of a case (it becomes the record's checksum, as a kernel's checksum does).
"""

from __future__ import annotations

import json
import math
import re
import string

from sbcore.text_checksum import text_checksum

# Where the worker count goes, how the threads are placed, which runtime the program uses.
RUNTIMES = {"openmp": "omp", "threads": "threads", "mpi": "mpi", "serial": "serial"}  # -> record model
PLACES = ("openmp", "mask", "launcher")
DEFAULT_PLACE = {"openmp": "openmp", "threads": "mask", "mpi": "launcher", "serial": "mask"}
POP_METHODS = ("task-cpu", "ompt", "libomp", "none")
STREAMS = ("stdout", "stderr", "both")
BETTER = ("lower", "higher")
# Units of time: the figure is converted to seconds. Any other unit is kept as given.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0}
# Shell syntax beside a placeholder: such an argument was written for a shell, which scalebench never
# uses (a pipe, a redirection, a command list, a substitution).
SHELL_SYNTAX = re.compile(r"\||[<>;`]|&&|\$\(|\$\{")
PLACEHOLDER_NAMES = ("threads", "ranks", "workers")
MAX_OUTPUT_CHARS = 1 << 20  # the output the figure and result are searched in: its last MiB


def binary_name(case: dict) -> str:
    """The name a case's binary goes by in tables and reports: a kernel binary's own name; a user's
    program (run by build/bin/program-run) as <program>-program-<model>, named like a kernel binary."""
    if case.get("program") or not case.get("binary"):
        return f"{case['kernel']}-{case['lang']}-{case['model']}"
    return case["binary"]


class SpecError(ValueError):
    """A program setting that cannot work: the message names the value and why."""


def placeholders(arg: str) -> list[str]:
    """The placeholder names in one argument (SpecError for a malformed one, e.g. '{threads')."""
    try:
        fields = [name for _, name, spec, conv in string.Formatter().parse(arg) if name is not None]
    except ValueError as err:
        raise SpecError(f"{arg!r}: {err} (write {{{{ and }}}} for literal braces)") from None
    for name in fields:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise SpecError(f"{arg!r}: placeholder {{{name}}} is not a name (write {{{{ for a literal brace)")
    return fields


def check_argument(arg: str) -> list[str]:
    """An argument of the command: its placeholders; SpecError when it needs a shell."""
    names = placeholders(arg)
    shell = SHELL_SYNTAX.search(arg) if names else None
    if shell:
        raise SpecError(
            f"{arg!r}: a placeholder beside shell syntax ({shell.group(0)!r}); the command is run without "
            "a shell: put pipes and redirections into a script and name the script"
        )
    return names


def substitute(arg: str, values: dict) -> str:
    """The argument with its placeholders replaced (values are strings or numbers)."""
    names = placeholders(arg)
    missing = [n for n in names if n not in values]
    if missing:
        raise SpecError(f"{arg!r}: no value for {{{missing[0]}}} (known: {', '.join(sorted(values))})")
    return arg.format_map({k: _text(v) for k, v in values.items()})


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---- figure of merit and result value ---------------------------------------------------------------


def check_extractor(table: dict, what: str) -> None:
    """A figure or result source: {"regex": pattern with one group} or {"json": dotted path}."""
    if ("regex" in table) == ("json" in table):
        raise SpecError(f"{what}: give exactly one of regex or json")
    if "regex" in table:
        try:
            compiled = re.compile(table["regex"])
        except re.error as err:
            raise SpecError(f"{what}.regex {table['regex']!r}: does not compile: {err}") from None
        if compiled.groups != 1 and "value" not in compiled.groupindex:
            raise SpecError(
                f"{what}.regex {table['regex']!r}: needs one capturing group (or a group named value), "
                f"has {compiled.groups}"
            )
    else:
        json_path(table["json"])


def json_path(path: str) -> list[str | int]:
    """'a.b[2].c' -> ['a', 'b', 2, 'c']."""
    if not isinstance(path, str) or not path:
        raise SpecError(f"json {path!r}: a dotted path such as 'results.time_s' or 'runs[0].time'")
    steps: list[str | int] = []
    for part in path.split("."):
        match = re.fullmatch(r"([^\[\]]+)((?:\[\d+\])*)", part)
        if not match:
            raise SpecError(f"json {path!r}: {part!r} is not a key or key[index]")
        steps.append(match.group(1))
        steps += [int(i) for i in re.findall(r"\[(\d+)\]", match.group(2))]
    return steps


def _stream_text(stdout: str, stderr: str, stream: str) -> str:
    text = {"stdout": stdout, "stderr": stderr, "both": stdout + "\n" + stderr}[stream]
    return text[-MAX_OUTPUT_CHARS:]


def _json_documents(text: str):
    """JSON objects in the output: the whole text, else each line that is one, last first."""
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                yield json.loads(line)
            except ValueError:
                continue


def extract(table: dict, stdout: str, stderr: str) -> str:
    """The text of the value a figure or result names in the program's output (the last match of a
    regex; the first JSON document, last first, that holds the path); SpecError when there is none."""
    text = _stream_text(stdout, stderr, table.get("stream", "both"))
    if "regex" in table:
        matches = list(re.finditer(table["regex"], text))
        if not matches:
            raise SpecError(
                f"regex {table['regex']!r} matches nothing in the program's {table.get('stream', 'both')}"
            )
        last = matches[-1]
        return last.group("value") if "value" in last.re.groupindex else last.group(1)
    steps = json_path(table["json"])
    for document in _json_documents(text):
        node = document
        for step in steps:
            if (
                isinstance(step, int)
                and isinstance(node, list)
                and step < len(node)
                or isinstance(step, str)
                and isinstance(node, dict)
                and step in node
            ):
                node = node[step]
            else:
                break
        else:
            return json.dumps(node) if isinstance(node, dict | list) else str(node)
    raise SpecError(f"json {table['json']!r}: no JSON document in the program's output holds it")


def figure_value(figure: dict, stdout: str, stderr: str, process_wall_s: float) -> dict:
    """The figure of merit of one run: {"value", "unit", "better", "source", "seconds"} where seconds is
    the time the analysis uses (docs/own-programs.md): the value itself for a time (in s), its inverse
    for a higher-is-better figure, the value for any other lower-is-better figure."""
    if figure.get("source", "wall") == "wall":
        return {
            "value": process_wall_s,
            "unit": "s",
            "better": "lower",
            "source": "wall",
            "seconds": process_wall_s,
        }
    text = extract(figure, stdout, stderr)
    try:
        value = float(text.replace(",", "") if re.fullmatch(r"[0-9,]+(\.[0-9]*)?", text) else text)
    except ValueError:
        raise SpecError(
            f"{figure.get('regex', figure.get('json'))!r} found {text[:60]!r}, not a number"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise SpecError(
            f"{figure.get('regex', figure.get('json'))!r} found {value}, not a positive finite number"
        )
    unit, better = figure["unit"], figure["better"]
    if unit in TIME_UNITS and better == "lower":
        seconds = value * TIME_UNITS[unit]
    elif better == "higher":
        seconds = 1.0 / value
    else:
        seconds = value
    return {"value": value, "unit": unit, "better": better, "source": figure["source"], "seconds": seconds}


def result_checksum(result: dict | None, stdout: str, stderr: str) -> tuple[str | None, str]:
    """(the result's text, the record's checksum over it); without a declared result the checksum is
    that of "no result", the same in every run."""
    text = extract(result, stdout, stderr) if result else None
    return text, text_checksum("result:" + (text if text is not None else "<none>"))
