"""What config/nodes.toml and an experiment file may hold, declared once (format: config/README.md).

Each table is a msgspec Struct: its fields are the keys, their types the values allowed (bounds,
patterns, choices) and their `extra` the wording of a problem (jobs/config_decode.py). Rules between
keys, and checks against other files (node types, likwid groups, reference results), are in
jobs/config.py after decoding.
"""

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from jobs.competing_load import NONE as NO_LOAD
from jobs.competing_load import Profiles
from jobs.config_fields import Count, Cpus, Env, NonEmptyStr, Seconds, axis, integer, number
from jobs.families import INTERLEAVE
from jobs.pinning import PIN_TOOLS, STRATEGIES
from jobs.programs.config import Programs, WeakScaling
from jobs.site_options import SiteTable

MAX_REPS = 1_000_000  # the kernel harness's limit of --reps and --warmup (kernels/common/sb_options.c)
NO_COUNTERS = "none"
ALL_CPUS = "all"
REFERENCE = r"\A([a-z0-9][a-z0-9-]*):([a-z0-9][a-z0-9-]*)\Z"
FINITE = 2**62  # a bound that only rules out infinity
SEED_CASE = 'must be "<seed>:<case>", e.g. "seed-000:tc05"'

Reps = integer(1, MAX_REPS)
ParamValue = (
    Annotated[str, Meta(pattern=r"\A[^\x00]*\Z", extra={"pattern": "contains a NUL character"})] | int | float
)
ParamValue = Annotated[ParamValue, Meta(extra={"type": "option values must be strings or numbers"})]
ExcludeValue = Annotated[
    str | int | float | bool, Meta(extra={"type": "must be a string, number or boolean"})
]
PinStrategy = Annotated[
    Literal[STRATEGIES], Meta(extra={"enum": f"unknown pin strategy (known: {', '.join(STRATEGIES)})"})
]
PinTool = Annotated[
    Literal[PIN_TOOLS], Meta(extra={"enum": f"unknown pin tool (known: {', '.join(PIN_TOOLS)})"})
]
TableOfAxes = Annotated[
    dict[str, axis(ExcludeValue)],
    Meta(min_length=1, extra={"type": "must be a non-empty table of axis = value(s)",
                              "length": "must be a non-empty table of axis = value(s)"}),
]  # fmt: skip


class RunSettings(msgspec.Struct, forbid_unknown_fields=True):
    """How each case is run: at the top of an experiment, and per sweep (None: inherited)."""

    repetitions: Reps | None = None
    warmup: integer(0, MAX_REPS) | None = None
    timeout_s: Seconds | None = None
    dump_image: bool | None = None
    reps_per_process: Reps | None = None
    target_ci: (
        number({"problem": "must be a relative half-width in [0, 1), e.g. 0.02 (0 = off)"}, ge=0, lt=1) | None
    ) = None
    min_reps: Reps | None = None
    max_reps: Reps | None = None
    budget_s: Seconds | None = None
    pin_tool: PinTool | None = None


class SweepTable(RunSettings, forbid_unknown_fields=True):
    """One [[sweep]] block: its axes (every list is one) and its run settings."""

    binary: axis(NonEmptyStr) | None = None
    program: str | None = None  # a user's program, [programs.<name>], instead of binaries
    threads: axis(Count) = msgspec.field(default_factory=lambda: [1])
    ranks: axis(Count) = msgspec.field(default_factory=lambda: [1])
    pin: axis(PinStrategy) = msgspec.field(default_factory=lambda: ["none"])
    counter_group: axis(NonEmptyStr) = msgspec.field(default_factory=lambda: [NO_COUNTERS])
    load: axis(NonEmptyStr) = msgspec.field(default_factory=lambda: [NO_LOAD])  # competing load profiles
    cpus: axis(Cpus) = msgspec.field(default_factory=lambda: [ALL_CPUS])  # CPUs the case may use
    params: Annotated[
        dict[str, axis(ParamValue)], Meta(extra={"type": "must be a table of option = [values]"})
    ] = {}
    env: Env = {}
    weak_scaling: WeakScaling = []  # params multiplied by the worker count


class ExperimentFile(RunSettings, forbid_unknown_fields=True, kw_only=True):
    """config/experiments/<name>.toml."""

    description: Annotated[NonEmptyStr, Meta(extra={"missing": "say what the experiment measures"})]
    sweep: Annotated[
        list[SweepTable],
        Meta(min_length=1, extra={"missing": "give at least one [[sweep]] block",
                                  "length": "give at least one [[sweep]] block"}),
    ]  # fmt: skip
    node_types: axis(NonEmptyStr) = msgspec.field(default_factory=lambda: ["workstation"])
    seed: integer(0) | None = None
    env: Env = {}
    exclude: Annotated[
        list[TableOfAxes], Meta(extra={"type": "must be an array of tables ([[exclude]])"})
    ] = []
    load: Profiles = {}
    programs: Programs = {}
    reference: Annotated[str, Meta(pattern=REFERENCE, extra={"problem": SEED_CASE})] | None = None
    interleave: Literal[INTERLEAVE] = INTERLEAVE[0]
    comparison_target_ci: (
        number({"problem": "must be a relative half-width in (0, 1), e.g. 0.02"}, gt=0, lt=1) | None
    ) = None
    comparison_budget_s: Seconds | None = None
    comparison_wait_s: (
        number({"problem": "must be a finite number of seconds >= 0 (0: never wait)"}, ge=0, le=FINITE) | None
    ) = None
    baseline_every: integer(0) | None = None
    duet: bool = False
    conduct: bool = False  # a member on more than one CPU runs with its baseline on each (jobs/conduct.py)
    run_budget_s: Seconds | None = None  # the local runner's measuring phase, whole (jobs/run_deadline.py)


class NodeTable(SiteTable, forbid_unknown_fields=True, kw_only=True):
    """One [node_types.<name>] table of config/nodes.toml (with the site keys of jobs/site_options.py)."""

    description: Annotated[NonEmptyStr, Meta(extra={"missing": "say what this node type is"})]
    counters: Annotated[bool, Meta(extra={"missing": "true or false: are hardware counters expected"})]
    detect: bool = False
    partition: NonEmptyStr | None = None
    constraint: NonEmptyStr | None = None
    sockets: integer(1) | None = None
    cores_per_socket: integer(1) | None = None
    threads_per_core: integer(1) | None = None
    arch: NonEmptyStr | None = None  # likwid's architecture name: counter groups are checked against it


class NodesFile(msgspec.Struct, forbid_unknown_fields=True):
    """config/nodes.toml."""

    node_types: Annotated[
        dict[str, NodeTable],
        Meta(min_length=1, extra={"problem": "give at least one [node_types.<name>] table",
                                  "missing": "give at least one [node_types.<name>] table"}),
    ]  # fmt: skip
