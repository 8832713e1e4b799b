"""Loading and validating config/nodes.toml and config/experiments/*.toml (format: config/README.md).

Every problem is a UsageError naming the file, the key path and the offending value; nothing is planned
or run from a file that does not validate.
"""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from jobs import competing_load as load_config
from jobs.families import DEFAULT_BASELINE_EVERY, DEFAULT_COMPARISON_WAIT_S, INTERLEAVE
from jobs.pinning import PIN_TOOLS, STRATEGIES
from jobs.programs.config import check_program_sweep, check_programs
from jobs.site_options import SITE_KEYS, SiteOptions, check_site
from sbcore import layout
from sbcore.errors import UsageError
from sbcore.install import source_root
from sbcore.names import NAME_RULE, has_control, name_problem

ROOT = source_root()  # the clone, or the one a pip install was made from
NODES_TOML = ROOT / "config" / "nodes.toml"

NODE_KEYS = {
    "description",
    "partition",
    "constraint",
    "detect",
    "sockets",
    "cores_per_socket",
    "threads_per_core",
    "counters",
    "arch",
} | SITE_KEYS
RUN_KEYS = {"repetitions", "warmup", "timeout_s", "dump_image"} | {
    "reps_per_process",
    "target_ci",
    "min_reps",
    "max_reps",
    "budget_s",
    "pin_tool",
}
EXPERIMENT_KEYS = {
    "description",
    "node_types",
    "seed",
    "env",
    "sweep",
    "exclude",
    "load",
    "reference",
    "interleave",
    "comparison_target_ci",
    "comparison_budget_s",
    "comparison_wait_s",
    "baseline_every",
    "duet",
    "programs",
} | RUN_KEYS
AXES = ("binary", "threads", "ranks", "pin", "counter_group")
SCENARIO_AXES = ("load", "cpus")  # competing load profile; CPUs the pin strategy may use
SWEEP_KEYS = set(AXES) | set(SCENARIO_AXES) | {"params", "env", "program", "weak_scaling"} | RUN_KEYS
PROGRAM_BINARY = "program-run"  # the kernel-protocol runner of a user's program (kernels/programs.mk)
ALL_CPUS = "all"
REFERENCE = re.compile(r"^([a-z0-9][a-z0-9-]*):([a-z0-9][a-z0-9-]*)$")
REFERENCE_DIR = ROOT / "config" / "reference"
DEFAULTS = {
    "repetitions": 3,
    "warmup": 1,
    "timeout_s": 300,
    "dump_image": False,
    "reps_per_process": 1,
    "target_ci": 0,  # 0 = no precision target: exactly `repetitions`
    "min_reps": 6,  # the fewest for which a 95 % CI of the median exists
    "max_reps": 30,  # budget_s (no default): runner seconds per case under a target
    "pin_tool": "harness",
}
NO_COUNTERS = "none"
MAX_REPS = 1_000_000  # the kernel harness's limit of --reps and --warmup (kernels/common/sb_options.c)
MAX_TIMEOUT_S = 7 * 24 * 3600  # a week: more than any Slurm time limit; a bound for every seconds setting
# Variables that change what the dynamic loader (or a shell) runs before the kernel's own code: only from
# the experiment, and then named in the manifest (docs/trust.md).
LOADER_ENV = re.compile(r"^(LD_\w*|GCONV_PATH|BASH_ENV|ENV|HOSTALIASES|MALLOC_\w*)$")
MAX_ENV_VALUE = 4096
OUTPUT_PARAMS = ("dump",)  # kernel options that write a file: a name, written in the case's directory
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
THREAD_EXPR = re.compile(r"^\s*(?:(\d+)\s*\*\s*)?(cores|hwthreads|sockets)\s*(?:([+-])\s*(\d+))?\s*$")


@dataclass(frozen=True)
class NodeType:
    name: str
    description: str
    counters: bool
    partition: str | None = None
    constraint: str | None = None
    detect: bool = False
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int | None = None
    arch: str | None = None  # likwid's architecture name (perfgroups directory): counter groups are checked
    site: SiteOptions = SiteOptions()  # Slurm account, qos, time limit, ... (jobs/site_options.py)


@dataclass
class Sweep:
    axes: dict  # axis name -> list of values (threads may hold expressions)
    params: dict  # kernel option -> list of values
    env: dict
    run: dict  # repetitions, warmup, timeout_s
    program: str | None = None  # a user's program ([programs.<name>], jobs/programs/config.py)
    weak_scaling: list = field(default_factory=list)  # params multiplied by the worker count


@dataclass
class Experiment:
    path: Path
    name: str
    description: str
    node_types: list[str]
    seed: int | None
    env: dict
    run: dict
    sweeps: list[Sweep] = field(default_factory=list)
    excludes: list[dict] = field(default_factory=list)
    loads: dict = field(
        default_factory=dict
    )  # load profile name -> resolved profile (jobs/competing_load.py)
    reference: str | None = None  # "<seed>:<case>" in config/reference/<seed>.toml
    interleave: str = INTERLEAVE[0]  # "family": cases measured in trials of their family (jobs/families.py)
    # {"target_ci", "budget_s"}: more trials for the families whose paired speedups are not that precise
    # (jobs/comparison_sampling.py); None without comparison_target_ci
    comparison: dict | None = None
    # with interleave = "family": a baseline run before a trial's members and after every this many
    # (jobs/families.py); 0: once per trial
    baseline_every: int = DEFAULT_BASELINE_EVERY
    duet: bool = False  # single-worker alternatives measured two at once, one per CPU (jobs/duets.py)
    programs: dict = field(default_factory=dict)  # name -> a user's program (jobs/programs/config.py)


class Checker:
    """Type and value checks that raise one error line: '<file>: <key> = <value>: <problem>'."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, value, problem: str):
        raise UsageError(f"{self.path}: {key} = {_show(value)}: {problem}")

    def missing(self, key: str, problem: str):
        raise UsageError(f"{self.path}: {key}: missing: {problem}")

    def keys(self, table: dict, allowed: set, where: str):
        for key in table:
            if key not in allowed:
                name = f"{where}.{key}" if where else key
                self.fail(name, table[key], f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def int_(self, value, key: str, minimum: int, maximum: int | None = None):
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(key, value, "must be an integer")
        if value < minimum:
            self.fail(key, value, f"must be >= {minimum}")
        if maximum is not None and value > maximum:
            self.fail(key, value, f"must be <= {maximum}")
        return value

    def str_(self, value, key: str):
        if not isinstance(value, str) or not value.strip():
            self.fail(key, value, "must be a non-empty string")
        return value

    def number(self, value, key: str, maximum: float = MAX_TIMEOUT_S):
        if not isinstance(value, int | float) or isinstance(value, bool):
            self.fail(key, value, "must be a number")
        if not value > 0 or value == float("inf"):
            self.fail(key, value, "must be a finite number > 0")
        if value > maximum:
            self.fail(key, value, f"must be <= {maximum:g}")
        return value

    def axis(self, value, key: str) -> list:
        values = value if isinstance(value, list) else [value]
        if not values:
            self.fail(key, value, "empty axis: give at least one value")
        return values

    def env(self, value, key: str) -> dict:
        if not isinstance(value, dict):
            self.fail(key, value, 'must be a table of NAME = "value"')
        for name, val in value.items():
            if not ENV_NAME.fullmatch(name):
                self.fail(f"{key}.{name}", val, "not a valid environment variable name")
            if not isinstance(val, str):
                self.fail(f"{key}.{name}", val, "environment values must be strings")
            if "\0" in val:
                self.fail(f"{key}.{name}", val, "contains a NUL character (not possible in an environment)")
            if len(val) > MAX_ENV_VALUE:
                self.fail(f"{key}.{name}", val, f"longer than {MAX_ENV_VALUE} characters")
        return dict(value)


def _show(value) -> str:
    """A value as it would look in TOML, shortened; tables are not spelled out."""
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = "[" + ", ".join(_show(v) for v in value) + "]" if isinstance(value, list) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_toml(path: Path, data: bytes | None = None) -> dict:
    """A TOML file (or its bytes, when already read) as a dict; a UTF-8 byte order mark is accepted."""
    path = Path(path)
    try:
        if data is None:
            data = _read_regular(path)
        return tomllib.loads(data.removeprefix(b"\xef\xbb\xbf").decode())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{path}: not valid TOML: {err}") from None
    except UnicodeDecodeError as err:
        raise UsageError(f"{path}: not UTF-8 text (byte {err.start}: {err.object[err.start]:#04x})") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror}") from None


def _read_regular(path: Path) -> bytes:
    """A configuration file's bytes; a FIFO or device is refused before anything waits on it."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"{path}: not a regular file (a FIFO, device or directory)")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


def load_node_types(path: Path = NODES_TOML) -> dict[str, NodeType]:
    path = Path(path)
    data = read_toml(path)
    check = Checker(path)
    check.keys(data, {"node_types"}, "")
    tables = data.get("node_types")
    if tables is None:
        check.missing("node_types", "give at least one [node_types.<name>] table")
    if not isinstance(tables, dict) or not tables:
        check.fail("node_types", tables, "give at least one [node_types.<name>] table")
    nodes = {}
    for name, table in tables.items():
        where = f"node_types.{name}"
        if name_problem(name):
            check.fail("node_types", name, f"node type name: {name_problem(name)}")
        if not isinstance(table, dict):
            check.fail(where, table, "must be a table")
        check.keys(table, NODE_KEYS, where)
        if "description" not in table:
            check.missing(f"{where}.description", "say what this node type is")
        check.str_(table["description"], f"{where}.description")
        if not isinstance(table.get("counters"), bool):
            check.fail(f"{where}.counters", table.get("counters"), "must be true or false")
        detect = table.get("detect", False)
        if not isinstance(detect, bool):
            check.fail(f"{where}.detect", detect, "must be true or false")
        for key in ("partition", "constraint"):
            if key in table and has_control(check.str_(table[key], f"{where}.{key}")):
                check.fail(f"{where}.{key}", table[key], "contains a control character (newline, tab, ...)")
        shape = {}
        for key in ("sockets", "cores_per_socket", "threads_per_core"):
            if key in table:
                shape[key] = check.int_(table[key], f"{where}.{key}", 1)
            elif not detect:
                check.missing(f"{where}.{key}", "required unless detect = true")
        if "arch" in table:
            _check_arch(check, table["arch"], f"{where}.arch")
        if not detect and "partition" not in table and "constraint" not in table:
            check.fail(where, table, "a Slurm node type needs a partition and/or constraint")
        nodes[name] = NodeType(
            name=name,
            description=table["description"],
            counters=table["counters"],
            partition=table.get("partition"),
            constraint=table.get("constraint"),
            detect=detect,
            arch=table.get("arch"),
            site=check_site(check, table, where),
            **shape,
        )
    return nodes


def load_experiment(
    path: Path, node_types: dict[str, NodeType], name: str | None = None, text: bytes | None = None
) -> Experiment:
    """Structure, types and values that need no binary; binaries and options are checked by the planner.
    `name` and `text`: the experiment's name and bytes when they are not the file's (a campaign's
    snapshot of its experiment, jobs/campaign.py)."""
    path = Path(path)
    exp_name = path.stem if name is None else name
    if name_problem(exp_name):
        problem = name_problem(exp_name)
        raise UsageError(f"{_show(str(path))}: experiment file name (before .toml): {problem}")
    data = read_toml(path, text)
    check = Checker(path)
    check.keys(data, EXPERIMENT_KEYS, "")
    if "description" not in data:
        check.missing("description", "say what the experiment measures")
    check.str_(data["description"], "description")
    run = _run_settings(check, data, "", dict(DEFAULTS))
    nodes = check.axis(data.get("node_types", ["workstation"]), "node_types")
    for i, name in enumerate(nodes):
        if name not in node_types:
            check.fail(f"node_types[{i}]", name, f"unknown node type (known: {', '.join(node_types)})")
    seed = data.get("seed")
    if seed is not None:
        check.int_(seed, "seed", 0)
    env = check.env(data.get("env", {}), "env")
    sweeps_raw = data.get("sweep")
    if sweeps_raw is None:
        check.missing("sweep", "give at least one [[sweep]] block")
    if not isinstance(sweeps_raw, list) or not sweeps_raw:
        check.fail("sweep", sweeps_raw, "give at least one [[sweep]] block")
    loads = load_config.check_profiles(check, data.get("load", {}))
    programs = check_programs(check, data.get("programs", {}))
    sweeps = [
        _sweep(check, raw, f"sweep[{i}]", run, env, loads, programs) for i, raw in enumerate(sweeps_raw)
    ]
    excludes = _excludes(check, data.get("exclude", []), sweeps)
    reference = _reference(check, data["reference"]) if "reference" in data else None
    interleave = data.get("interleave", INTERLEAVE[0])
    if interleave not in INTERLEAVE:
        check.fail("interleave", interleave, f"must be one of {', '.join(INTERLEAVE)}")
    comparison = _comparison(check, data, interleave)
    baseline_every = data.get("baseline_every", DEFAULT_BASELINE_EVERY)
    check.int_(baseline_every, "baseline_every", 0)
    if "baseline_every" in data and interleave != "family":
        check.fail("baseline_every", baseline_every, 'needs interleave = "family" (a baseline within trials)')
    duet = data.get("duet", False)
    if not isinstance(duet, bool):
        check.fail("duet", duet, "must be true or false")
    if duet and interleave != "none":
        check.fail("duet", duet, f"not with interleave = {interleave!r}: a duet pairs two cases by itself")
    return Experiment(
        path,
        exp_name,
        data["description"],
        nodes,
        seed,
        env,
        run,
        sweeps,
        excludes,
        loads,
        reference,
        interleave,
        comparison,
        baseline_every,
        duet,
        programs,
    )


def _comparison(check: Checker, data: dict, interleave: str) -> dict | None:
    """comparison_target_ci (a relative half-width in (0, 1)) with comparison_budget_s (runner seconds
    for the extra trials, required) and comparison_wait_s (seconds the runner may wait for a slow
    cache-line transfer to pass, jobs/transfer_state.py), only with interleave = "family"."""
    if "comparison_target_ci" not in data:
        for key in ("comparison_budget_s", "comparison_wait_s"):
            if key in data:
                check.fail(key, data[key], "needs comparison_target_ci")
        return None
    target = data["comparison_target_ci"]
    if not isinstance(target, int | float) or isinstance(target, bool) or not 0 < target < 1:
        check.fail("comparison_target_ci", target, "must be a relative half-width in (0, 1), e.g. 0.02")
    if interleave != "family":
        check.fail(
            "comparison_target_ci", target, 'needs interleave = "family" (comparisons are paired in trials)'
        )
    if "comparison_budget_s" not in data:
        check.missing(
            "comparison_budget_s", "comparison_target_ci needs a budget: runner seconds for extra trials"
        )
    wait = data.get("comparison_wait_s", DEFAULT_COMPARISON_WAIT_S)
    if not isinstance(wait, int | float) or isinstance(wait, bool) or not 0 <= wait < float("inf"):
        check.fail("comparison_wait_s", wait, "must be a finite number of seconds >= 0 (0: never wait)")
    return {
        "target_ci": target,
        "budget_s": check.number(data["comparison_budget_s"], "comparison_budget_s"),
        "wait_s": wait,
    }


def _reference(check: Checker, value) -> str:
    """A published result to compare with: "<seed>:<case>", [cases.<case>] of config/reference/<seed>.toml."""
    match = REFERENCE.fullmatch(value) if isinstance(value, str) else None
    if not match:
        check.fail("reference", value, 'must be "<seed>:<case>", e.g. "seed-000:tc05"')
    seed, case = match.groups()
    ref_path = REFERENCE_DIR / f"{seed}.toml"
    if not ref_path.is_file():
        check.fail("reference", value, f"no reference file {ref_path}")
    cases = read_toml(ref_path).get("cases", {})
    if case not in cases:
        check.fail("reference", value, f"{ref_path} has no [cases.{case}] (has: {', '.join(cases)})")
    return value


def _run_settings(check: Checker, table: dict, where: str, inherited: dict) -> dict:
    run = dict(inherited)
    prefix = f"{where}." if where else ""
    if "repetitions" in table:
        run["repetitions"] = check.int_(table["repetitions"], f"{prefix}repetitions", 1, MAX_REPS)
    if "warmup" in table:
        run["warmup"] = check.int_(table["warmup"], f"{prefix}warmup", 0, MAX_REPS)
    if "timeout_s" in table:
        run["timeout_s"] = check.number(table["timeout_s"], f"{prefix}timeout_s")
    if "dump_image" in table:
        if not isinstance(table["dump_image"], bool):
            check.fail(f"{prefix}dump_image", table["dump_image"], "must be true or false")
        run["dump_image"] = table["dump_image"]
    for key in ("reps_per_process", "min_reps", "max_reps"):
        if key in table:
            run[key] = check.int_(table[key], prefix + key, 1, MAX_REPS)
    if "target_ci" in table:
        value = table["target_ci"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            check.fail(
                f"{prefix}target_ci", value, "must be a relative half-width in [0, 1), e.g. 0.02 (0 = off)"
            )
        run["target_ci"] = value
    if "budget_s" in table:
        run["budget_s"] = check.number(table["budget_s"], f"{prefix}budget_s")
    if "pin_tool" in table and table["pin_tool"] not in PIN_TOOLS:
        check.fail(
            f"{prefix}pin_tool", table["pin_tool"], f"unknown pin tool (known: {', '.join(PIN_TOOLS)})"
        )
    run["pin_tool"] = table.get("pin_tool", run["pin_tool"])
    if run["target_ci"] and run["min_reps"] > run["max_reps"]:
        check.fail(f"{prefix}min_reps", run["min_reps"], f"must be <= max_reps ({run['max_reps']})")
    return run


def _sweep(check: Checker, raw, where: str, run: dict, env: dict, loads: dict, programs: dict) -> Sweep:
    if not isinstance(raw, dict):
        check.fail(where, raw, "must be a table")
    check.keys(raw, SWEEP_KEYS, where)
    program, weak = check_program_sweep(check, raw, where, programs)
    if "binary" not in raw and program is None:
        check.missing(f"{where}.binary", "name the kernel binaries (build/bin/...) or a program")
    axes = {
        "binary": [PROGRAM_BINARY] if program else check.axis(raw["binary"], f"{where}.binary"),
        "threads": check.axis(raw.get("threads", [1]), f"{where}.threads"),
        "ranks": check.axis(raw.get("ranks", [1]), f"{where}.ranks"),
        "pin": check.axis(raw.get("pin", ["none"]), f"{where}.pin"),
        "counter_group": check.axis(raw.get("counter_group", [NO_COUNTERS]), f"{where}.counter_group"),
    }
    axes["load"] = check.axis(raw.get("load", [load_config.NONE]), f"{where}.load")
    load_config.check_axis(check, axes["load"], f"{where}.load", loads)
    axes["cpus"] = check.axis(raw.get("cpus", [ALL_CPUS]), f"{where}.cpus")
    for i, value in enumerate(axes["cpus"]):
        if value != ALL_CPUS:
            _thread_value(check, value, f"{where}.cpus[{i}]")
    for i, value in enumerate(axes["binary"]):
        check.str_(value, f"{where}.binary[{i}]")
    for i, value in enumerate(axes["threads"]):
        _thread_value(check, value, f"{where}.threads[{i}]")
    for i, value in enumerate(axes["ranks"]):
        _thread_value(check, value, f"{where}.ranks[{i}]")
    for i, value in enumerate(axes["pin"]):
        if value not in STRATEGIES:
            check.fail(f"{where}.pin[{i}]", value, f"unknown pin strategy (known: {', '.join(STRATEGIES)})")
    groups = available_counter_groups()
    for i, value in enumerate(axes["counter_group"]):
        check.str_(value, f"{where}.counter_group[{i}]")
        if value != NO_COUNTERS and value not in groups:
            check.fail(
                f"{where}.counter_group[{i}]",
                value,
                "unknown likwid performance group (see /usr/share/likwid/perfgroups/*/)",
            )
    params_raw = raw.get("params", {})
    if not isinstance(params_raw, dict):
        check.fail(f"{where}.params", params_raw, "must be a table of option = [values]")
    params = {}
    for name, values in params_raw.items():
        key = f"{where}.params.{name}"
        if name in ("threads", "reps", "warmup"):
            check.fail(key, values, "set by the harness: use the sweep's threads / repetitions / warmup")
        values = check.axis(values, key)
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                check.fail(f"{key}[{i}]", value, "option values must be strings or numbers")
            if isinstance(value, str) and "\0" in value:
                check.fail(f"{key}[{i}]", value, "contains a NUL character")
            if name in OUTPUT_PARAMS:
                _output_name(check, value, f"{key}[{i}]")
        params[name] = values
    merged_env = {**env, **check.env(raw.get("env", {}), f"{where}.env")}
    return Sweep(axes, params, merged_env, _run_settings(check, raw, where, run), program, weak)


def _output_name(check: Checker, value, key: str) -> None:
    """A kernel option that writes a file takes a file name, not a path: the file lands in the case's
    own directory (the kernel's working directory), beside files scalebench keeps there."""
    if not isinstance(value, str) or name_problem(value):
        check.fail(
            key, value, f"a file name, not a path ({NAME_RULE}); it is written in the case's directory"
        )
    if layout.is_reserved_name(value):
        check.fail(key, value, "a name scalebench uses in the case's directory (records, probes, images)")


def _thread_value(check: Checker, value, key: str) -> None:
    """A thread or rank count: an integer >= 1 or an expression over the node's topology."""
    if isinstance(value, str):
        if not THREAD_EXPR.match(value):
            check.fail(key, value, "not a count or expression like 'cores', '2*cores', 'hwthreads+1'")
    else:
        check.int_(value, key, 1)


def _excludes(check: Checker, raw, sweeps: list[Sweep]) -> list[dict]:
    if not isinstance(raw, list):
        check.fail("exclude", raw, "must be an array of tables ([[exclude]])")
    known = set(AXES) | set(SCENARIO_AXES) | {"node_type"} | {p for s in sweeps for p in s.params}
    rules = []
    for i, rule in enumerate(raw):
        where = f"exclude[{i}]"
        if not isinstance(rule, dict) or not rule:
            check.fail(where, rule, "must be a non-empty table of axis = value(s)")
        check.keys(rule, known, where)
        rule = {k: check.axis(v, f"{where}.{k}") for k, v in rule.items()}
        for axis in ("threads", "ranks", "cpus"):
            for j, value in enumerate(rule.get(axis, [])):
                _thread_value(check, value, f"{where}.{axis}[{j}]")
        rules.append(rule)
    return rules


def resolve_threads(value, cores: int, hwthreads: int, sockets: int) -> int:
    """A thread count: an integer, or an expression over the node's cores/hwthreads/sockets."""
    if isinstance(value, int):
        return value
    match = THREAD_EXPR.match(value)
    factor, name, sign, offset = match.groups()
    base = {"cores": cores, "hwthreads": hwthreads, "sockets": sockets}[name]
    result = int(factor or 1) * base
    if sign:
        result = result + int(offset) if sign == "+" else result - int(offset)
    return result


def _check_arch(check: Checker, arch, where: str) -> None:
    from jobs.counter_groups import PERFGROUPS, architectures

    check.str_(arch, where)
    known = architectures()
    if not known:
        check.fail(where, arch, f"no likwid group files in {PERFGROUPS} to check it against (install likwid)")
    if arch not in known:
        check.fail(where, arch, f"unknown likwid architecture (known: {', '.join(known)})")


def available_counter_groups(root: Path = Path("/usr/share/likwid/perfgroups")) -> set[str]:
    """Group names of every architecture likwid ships (the node that runs the case has one of them)."""
    return {p.stem for p in root.glob("*/*.txt")}
