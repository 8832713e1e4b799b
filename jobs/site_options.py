"""Site options of a node type: account, qos, time limit, memory, reservation and extra sbatch options.

They come from a node type's table in config/nodes.toml (validated with the rest of it, jobs/config.py)
and from the command line (which wins), each problem one error line naming file (or option), key and
value. Data only: the Slurm adapter turns them into #SBATCH lines (jobs/slurm/site.py).
"""

import re
from dataclasses import dataclass, field, fields, replace
from typing import Annotated

import msgspec
from msgspec import Meta

from sbcore.names import has_control

# Slurm's --time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or a word for no limit.
NAME = re.compile(r"[A-Za-z0-9_.+-]+")
TIME = re.compile(r"(?:\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|INFINITE|UNLIMITED)")
MEM = re.compile(r"\d+[KMGT]?")
OPTION = re.compile(r"--[a-z][a-z0-9-]*(=.+)?")
OPTION_PROBLEM = "must be one long sbatch option: --name or --name=value (no spaces around =)"
# Options scalebench itself sets (or that the keys above cover): an extra option must not fight them.
RESERVED = {
    "array", "job-name", "output", "error", "dependency", "parsable", "nodes", "ntasks", "exclusive",
    "partition", "constraint", "account", "qos", "time", "mem", "reservation", "test-only", "wrap",
}  # fmt: skip


@dataclass(frozen=True)
class SiteOptions:
    account: str | None = None
    qos: str | None = None
    time_limit: str | None = None
    mem: str | None = None
    reservation: str | None = None
    sbatch_options: tuple[str, ...] = field(default_factory=tuple)

    def merged(self, override: "SiteOptions") -> "SiteOptions":
        """These options with every value the override sets; extra sbatch options add up."""
        values = {f.name: getattr(override, f.name) for f in fields(self) if getattr(override, f.name)}
        values["sbatch_options"] = self.sbatch_options + override.sbatch_options
        return replace(self, **values)


def _pattern(pattern: re.Pattern, expected: str):
    """A string matching `pattern` whole (no trailing newline either), described as `expected`."""
    whole = rf"\A(?:{pattern.pattern})\Z"
    return Annotated[str, Meta(pattern=whole, extra={"problem": f"must be {expected}"})]


class SiteTable(msgspec.Struct, forbid_unknown_fields=True):
    """The site keys of a node type's table in config/nodes.toml."""

    account: _pattern(NAME, "a Slurm account name (letters, digits, _ . + -)") | None = None
    qos: _pattern(NAME, "a QOS name (letters, digits, _ . + -)") | None = None
    reservation: _pattern(NAME, "a reservation name (letters, digits, _ . + -)") | None = None
    time_limit: _pattern(TIME, "a Slurm time: MINUTES, H:MM:SS or D-HH:MM:SS") | None = None
    mem: _pattern(MEM, "memory per node as Slurm reads it: 0 (all), 4000 (MB), 64G") | None = None
    sbatch_options: Annotated[
        list[Annotated[str, Meta(extra={"type": OPTION_PROBLEM})]],
        Meta(extra={"type": 'must be a list such as ["--gres=gpu:1"]'}),
    ] = []


SITE_KEYS = set(SiteTable.__struct_fields__)


def check_site(check, table: dict, where: str) -> SiteOptions:
    """The site options in one node type's table (check: a config_decode.Checker naming the file)."""
    return site_options(
        check, check.decode({k: table[k] for k in SITE_KEYS & set(table)}, SiteTable, where), where
    )


def site_options(check, table: SiteTable, where: str) -> SiteOptions:
    """A decoded table's site options; every extra sbatch option one that scalebench does not set."""
    for i, option in enumerate(table.sbatch_options):
        problem = option_problem(option)
        if problem:
            check.fail(f"{where}.sbatch_options[{i}]", option, problem)
    values = {key: getattr(table, key) for key in SITE_KEYS if getattr(table, key)}
    return SiteOptions(**values | {"sbatch_options": tuple(table.sbatch_options)})


def option_problem(option) -> str | None:
    """Why an extra sbatch option cannot be used, or None."""
    if not isinstance(option, str) or not OPTION.fullmatch(option) or has_control(option):
        return OPTION_PROBLEM
    name = option[2:].split("=", 1)[0]
    if name in RESERVED:
        return f"--{name} is set by scalebench or by its own key (account, qos, time_limit, mem, reservation)"
    return None
