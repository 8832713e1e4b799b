"""Field types the configuration tables share (jobs/config_types.py and the tables it holds): each a
type with its bounds or pattern and its own wording of a problem (jobs/config_decode.py)."""

from typing import Annotated

from msgspec import Meta

ENV_NAME = r"\A[A-Za-z_][A-Za-z0-9_]*\Z"
MAX_ENV_VALUE = 4096
MAX_TIMEOUT_S = 7 * 24 * 3600  # a week: more than any Slurm time limit; a bound for every seconds setting
THREAD_EXPR = r"^\s*(?:(\d+)\s*\*\s*)?(cores|hwthreads|sockets)\s*(?:([+-])\s*(\d+))?\s*$"
COUNT_WORDS = "not a count or expression like 'cores', '2*cores', 'hwthreads+1'"
NO_NUL = r"\A[^\x00]*\Z"
EMPTY_AXIS = "empty axis: give at least one value"

NonEmptyStr = Annotated[str, Meta(pattern=r"\S", extra={"pattern": "must be a non-empty string"})]


def number(extra: dict | None = None, **bounds):
    """An integer or a float (kept as written) within `bounds` (gt, ge, lt, le)."""
    either = Annotated[int, Meta(**bounds)] | Annotated[float, Meta(**bounds)]
    extra = extra or {}
    return Annotated[
        either, Meta(extra=extra if "problem" in extra else {"type": "must be a number"} | extra)
    ]


Seconds = number({"min": "must be a finite number > 0"}, gt=0, le=MAX_TIMEOUT_S)


def integer(minimum: int, maximum: int | None = None, words: str | None = None):
    extra = {"problem": words} if words else {}
    return Annotated[int, Meta(ge=minimum, le=maximum, extra=extra)]


# A thread, rank or CPU count: an integer >= 1 or an expression over the node's topology
Count = (
    Annotated[int, Meta(ge=1, extra={"type": "must be an integer"})]
    | Annotated[str, Meta(pattern=THREAD_EXPR, extra={"pattern": COUNT_WORDS})]
)
# CPUs a case may use: a count, or "all"
Cpus = (
    Annotated[int, Meta(ge=1, extra={"type": "must be an integer"})]
    | Annotated[str, Meta(pattern=rf"\Aall\Z|{THREAD_EXPR}", extra={"pattern": COUNT_WORDS})]
)


def axis(item):
    """A list of values; a plain value is an axis of one (jobs/config_decode.py makes it a list before
    decoding: msgspec 0.22 crashes on a union of a list and a string with a long pattern); an empty
    list is refused."""
    return Annotated[list[item], Meta(min_length=1, extra={"axis": True, "length": EMPTY_AXIS})]


EnvName = Annotated[str, Meta(pattern=ENV_NAME, extra={"pattern": "not a valid environment variable name"})]
EnvValue = Annotated[
    str,
    Meta(
        pattern=NO_NUL,
        max_length=MAX_ENV_VALUE,
        extra={
            "type": "environment values must be strings",
            "pattern": "contains a NUL character (not possible in an environment)",
            "length": f"longer than {MAX_ENV_VALUE} characters",
        },
    ),
]
Env = Annotated[dict[EnvName, EnvValue], Meta(extra={"type": 'must be a table of NAME = "value"'})]
