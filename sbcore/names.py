"""The one rule for names a user chooses and the one quoting of values that enter a generated script.

A name (campaign, experiment file stem, node type, binary) becomes a directory or file name and appears
in sbatch scripts and job names, so it must be safe in all of them: NAME_RULE (docs/formats.md, "Names").
A value that enters a script (paths, Slurm options) goes through script_value: control characters
(a newline would end a `#SBATCH` line and start a shell command) are refused, everything else is
shell-quoted.
"""

import re
import shlex

from sbcore.errors import UsageError

NAME_RULE = "1-100 characters from A-Z a-z 0-9 _ . + -, starting with a letter or digit, without '..'"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def name_problem(value) -> str | None:
    """Why `value` cannot be a name, or None when it can."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        return f"not a valid name ({NAME_RULE})"
    return None


def check_name(what: str, value) -> str:
    """`value` if it is a valid name; else a UsageError '<what> <value>: not a valid name (...)'."""
    problem = name_problem(value)
    if problem:
        raise UsageError(f"{what} {shown(value)}: {problem}")
    return value


def script_value(value, what: str = "value") -> str:
    """`value` (str or path) shell-quoted for a generated script; control characters are refused."""
    text = str(value)
    if _CONTROL.search(text):
        raise UsageError(f"{what} {shown(text)}: contains a control character (newline, tab, NUL, ...)")
    return shlex.quote(text)


def has_control(text: str) -> bool:
    return bool(_CONTROL.search(text))


def shown(value) -> str:
    """A value as an error line shows it: repr (so newlines stay visible), shortened."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
