"""Site options of a node type: account, qos, time limit, memory, reservation and extra sbatch options.

They come from a node type's table in config/nodes.toml (validated with the rest of it, jobs/config.py)
and from the command line (which wins), each problem one error line naming file (or option), key and
value. Data only: the Slurm adapter turns them into #SBATCH lines (jobs/slurm/site.py).
"""

import re
from dataclasses import dataclass, field, fields, replace

from sbcore.names import has_control

SITE_KEYS = {"account", "qos", "time_limit", "mem", "reservation", "sbatch_options"}
NAME = re.compile(r"[A-Za-z0-9_.+-]+")
# Slurm's --time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or a word for no limit.
TIME = re.compile(r"(?:\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|INFINITE|UNLIMITED)")
MEM = re.compile(r"\d+[KMGT]?")
OPTION = re.compile(r"--[a-z][a-z0-9-]*(=.+)?")
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


def check_site(check, table: dict, where: str) -> SiteOptions:
    """The site options in one node type's table (check: a config.Checker naming the file)."""
    values = {}
    for key, pattern, expected in (
        ("account", NAME, "a Slurm account name (letters, digits, _ . + -)"),
        ("qos", NAME, "a QOS name (letters, digits, _ . + -)"),
        ("reservation", NAME, "a reservation name (letters, digits, _ . + -)"),
        ("time_limit", TIME, "a Slurm time: MINUTES, H:MM:SS or D-HH:MM:SS"),
        ("mem", MEM, "memory per node as Slurm reads it: 0 (all), 4000 (MB), 64G"),
    ):
        if key in table:
            value = table[key]
            if not isinstance(value, str) or not pattern.fullmatch(value):
                check.fail(f"{where}.{key}", value, f"must be {expected}")
            values[key] = value
    if "sbatch_options" in table:
        options = table["sbatch_options"]
        if not isinstance(options, list):
            check.fail(f"{where}.sbatch_options", options, 'must be a list such as ["--gres=gpu:1"]')
        for i, option in enumerate(options):
            problem = option_problem(option)
            if problem:
                check.fail(f"{where}.sbatch_options[{i}]", option, problem)
        values["sbatch_options"] = tuple(options)
    return SiteOptions(**values)


def option_problem(option) -> str | None:
    """Why an extra sbatch option cannot be used, or None."""
    if not isinstance(option, str) or not OPTION.fullmatch(option) or has_control(option):
        return "must be one long sbatch option: --name or --name=value (no spaces around =)"
    name = option[2:].split("=", 1)[0]
    if name in RESERVED:
        return f"--{name} is set by scalebench or by its own key (account, qos, time_limit, mem, reservation)"
    return None
