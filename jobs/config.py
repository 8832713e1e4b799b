"""Loading config/nodes.toml and config/experiments/*.toml (format: config/README.md) into the node
types and experiments the planner reads.

What each file may hold is declared in jobs/config_types.py and decoded there (jobs/config_decode.py);
here are the rules between keys and against other files. Every problem is a UsageError naming the file,
the key path and the offending value; nothing is planned or run from a file that does not validate.
"""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from jobs import competing_load as load_config
from jobs.config_decode import Checker, show
from jobs.config_fields import THREAD_EXPR, Count, Cpus
from jobs.config_types import NO_COUNTERS, ExperimentFile, NodesFile, RunSettings, SweepTable
from jobs.families import DEFAULT_BASELINE_EVERY, DEFAULT_COMPARISON_WAIT_S, INTERLEAVE
from jobs.programs import config as program_config
from jobs.site_options import SiteOptions, site_options
from sbcore import layout
from sbcore.errors import UsageError
from sbcore.install import source_root
from sbcore.names import NAME_RULE, has_control, name_problem

ROOT = source_root()  # the clone, or the one a pip install was made from
NODES_TOML = ROOT / "config" / "nodes.toml"
AXES = ("binary", "threads", "ranks", "pin", "counter_group")
SCENARIO_AXES = ("load", "cpus")  # competing load profile; CPUs the pin strategy may use
PROGRAM_BINARY = "program-run"  # the kernel-protocol runner of a user's program (kernels/programs.mk)
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
# Variables that change what the dynamic loader (or a shell) runs before the kernel's own code: only from
# the experiment, and then named in the manifest (docs/trust.md).
LOADER_ENV = re.compile(r"^(LD_\w*|GCONV_PATH|BASH_ENV|ENV|HOSTALIASES|MALLOC_\w*)$")
OUTPUT_PARAMS = ("dump",)  # kernel options that write a file: a name, written in the case's directory
HARNESS_OPTIONS = ("threads", "reps", "warmup")  # set from the sweep, never as params
SHAPE = ("sockets", "cores_per_socket", "threads_per_core")
COUNT = re.compile(THREAD_EXPR)


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
    # seconds the local runner's measuring phase may take in all (jobs/run_deadline.py); None: no bound
    run_budget_s: float | None = None
    # a family member on more than one CPU runs with its serial baseline on each of them (jobs/conduct.py)
    conduct: bool = False


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
    check = Checker(path)
    tables = check.decode(read_toml(path), NodesFile).node_types
    nodes = {}
    for name, table in tables.items():
        where = f"node_types.{name}"
        if name_problem(name):
            check.fail("node_types", name, f"node type name: {name_problem(name)}")
        for key in ("partition", "constraint"):
            if has_control(getattr(table, key) or ""):
                check.fail(
                    f"{where}.{key}", getattr(table, key), "contains a control character (newline, tab, ...)"
                )
        for key in SHAPE:
            if getattr(table, key) is None and not table.detect:
                check.missing(f"{where}.{key}", "required unless detect = true")
        if table.arch is not None:
            _check_arch(check, table.arch, f"{where}.arch")
        if not table.detect and table.partition is None and table.constraint is None:
            check.fail(where, table, "a Slurm node type needs a partition and/or constraint")
        nodes[name] = NodeType(
            name=name,
            description=table.description,
            counters=table.counters,
            partition=table.partition,
            constraint=table.constraint,
            detect=table.detect,
            arch=table.arch,
            site=site_options(check, table, where),
            **{key: getattr(table, key) for key in SHAPE if getattr(table, key) is not None},
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
        raise UsageError(f"{show(str(path))}: experiment file name (before .toml): {problem}")
    check = Checker(path)
    data = read_toml(path, text)
    exp = check.decode(data, ExperimentFile)
    run = _run_settings(check, exp, "", dict(DEFAULTS))
    for i, node in enumerate(exp.node_types):
        if node not in node_types:
            check.fail(f"node_types[{i}]", node, f"unknown node type (known: {', '.join(node_types)})")
    loads = load_config.profiles(check, exp.load)
    programs = program_config.programs(check, exp.programs)
    env = dict(exp.env)
    sweeps = [_sweep(check, raw, f"sweep[{i}]", run, env, loads, programs) for i, raw in enumerate(exp.sweep)]
    if exp.baseline_every is not None and exp.interleave != "family":
        check.fail(
            "baseline_every", exp.baseline_every, 'needs interleave = "family" (a baseline within trials)'
        )
    if exp.conduct and exp.interleave != "family":
        check.fail(
            "conduct", exp.conduct, 'needs interleave = "family" (a member conducted with its baseline)'
        )
    if exp.duet and exp.interleave != "none":
        check.fail(
            "duet", exp.duet, f"not with interleave = {exp.interleave!r}: a duet pairs two cases by itself"
        )
    return Experiment(
        path,
        exp_name,
        exp.description,
        list(exp.node_types),
        exp.seed,
        env,
        run,
        sweeps,
        _excludes(check, exp.exclude, data.get("exclude", []), sweeps),
        loads,
        _reference(check, exp.reference) if exp.reference is not None else None,
        exp.interleave,
        _comparison(check, exp),
        DEFAULT_BASELINE_EVERY if exp.baseline_every is None else exp.baseline_every,
        exp.duet,
        programs,
        exp.run_budget_s,
        exp.conduct,
    )


def _comparison(check: Checker, exp: ExperimentFile) -> dict | None:
    """comparison_target_ci (a relative half-width in (0, 1)) with comparison_budget_s (runner seconds
    for the extra trials, required) and comparison_wait_s (seconds the runner may wait for a slow
    cache-line transfer to pass, jobs/trial_pacer.py), only with interleave = "family"."""
    target = exp.comparison_target_ci
    if target is None:
        for key in ("comparison_budget_s", "comparison_wait_s"):
            if getattr(exp, key) is not None:
                check.fail(key, getattr(exp, key), "needs comparison_target_ci")
        return None
    if exp.interleave != "family":
        check.fail(
            "comparison_target_ci", target, 'needs interleave = "family" (comparisons are paired in trials)'
        )
    if exp.comparison_budget_s is None:
        check.missing(
            "comparison_budget_s", "comparison_target_ci needs a budget: runner seconds for extra trials"
        )
    wait = DEFAULT_COMPARISON_WAIT_S if exp.comparison_wait_s is None else exp.comparison_wait_s
    return {"target_ci": target, "budget_s": exp.comparison_budget_s, "wait_s": wait}


def _reference(check: Checker, value: str) -> str:
    """A published result to compare with: "<seed>:<case>", [cases.<case>] of config/reference/<seed>.toml."""
    seed, _, case = value.partition(":")
    ref_path = REFERENCE_DIR / f"{seed}.toml"
    if not ref_path.is_file():
        check.fail("reference", value, f"no reference file {ref_path}")
    cases = read_toml(ref_path).get("cases", {})
    if case not in cases:
        check.fail("reference", value, f"{ref_path} has no [cases.{case}] (has: {', '.join(cases)})")
    return value


def _run_settings(check: Checker, table: RunSettings, where: str, inherited: dict) -> dict:
    """The run settings a table sets over the ones it inherits."""
    run = dict(inherited)
    for key in RunSettings.__struct_fields__:
        if getattr(table, key) is not None:
            run[key] = getattr(table, key)
    if run["target_ci"] and run["min_reps"] > run["max_reps"]:
        prefix = f"{where}." if where else ""
        check.fail(f"{prefix}min_reps", run["min_reps"], f"must be <= max_reps ({run['max_reps']})")
    return run


def _sweep(
    check: Checker, raw: SweepTable, where: str, run: dict, env: dict, loads: dict, programs: dict
) -> Sweep:
    program_config.check_program_sweep(check, raw, where, programs)
    if raw.binary is None and raw.program is None:
        check.missing(f"{where}.binary", "name the kernel binaries (build/bin/...) or a program")
    axes = {
        "binary": [PROGRAM_BINARY] if raw.program else list(raw.binary),
        "threads": raw.threads,
        "ranks": raw.ranks,
        "pin": raw.pin,
        "counter_group": raw.counter_group,
        "load": raw.load,
        "cpus": raw.cpus,
    }
    load_config.check_axis(check, raw.load, f"{where}.load", loads)
    groups = available_counter_groups()
    for i, value in enumerate(raw.counter_group):
        if value != NO_COUNTERS and value not in groups:
            check.fail(
                f"{where}.counter_group[{i}]",
                value,
                "unknown likwid performance group (see /usr/share/likwid/perfgroups/*/)",
            )
    for name, values in raw.params.items():
        key = f"{where}.params.{name}"
        if name in HARNESS_OPTIONS:
            check.fail(key, values, "set by the harness: use the sweep's threads / repetitions / warmup")
        for i, value in enumerate(values if name in OUTPUT_PARAMS else []):
            _output_name(check, value, f"{key}[{i}]")
    merged_env = {**env, **raw.env}
    return Sweep(
        axes,
        dict(raw.params),
        merged_env,
        _run_settings(check, raw, where, run),
        raw.program,
        list(raw.weak_scaling),
    )


def _output_name(check: Checker, value, key: str) -> None:
    """A kernel option that writes a file takes a file name, not a path: the file lands in the case's
    own directory (the kernel's working directory), beside files scalebench keeps there."""
    if not isinstance(value, str) or name_problem(value):
        check.fail(
            key, value, f"a file name, not a path ({NAME_RULE}); it is written in the case's directory"
        )
    if layout.is_reserved_name(value):
        check.fail(key, value, "a name scalebench uses in the case's directory (records, probes, images)")


def _excludes(check: Checker, rules: list[dict], written: list[dict], sweeps: list[Sweep]) -> list[dict]:
    """[[exclude]] rules: each key an axis or a param of a sweep (named as `written`, before plain
    values became lists); thread and CPU counts as in sweeps."""
    known = set(AXES) | set(SCENARIO_AXES) | {"node_type"} | {p for s in sweeps for p in s.params}
    for i, rule in enumerate(rules):
        check.keys(written[i], known, f"exclude[{i}]")
        for axis, kind in (("threads", Count), ("ranks", Count), ("cpus", Cpus)):
            for j, value in enumerate(rule.get(axis, [])):
                check.decode(value, kind, f"exclude[{i}].{axis}[{j}]")
    return rules


def resolve_threads(value, cores: int, hwthreads: int, sockets: int) -> int:
    """A thread count: an integer, or an expression over the node's cores/hwthreads/sockets."""
    if isinstance(value, int):
        return value
    match = COUNT.match(value)
    factor, name, sign, offset = match.groups()
    base = {"cores": cores, "hwthreads": hwthreads, "sockets": sockets}[name]
    result = int(factor or 1) * base
    if sign:
        result = result + int(offset) if sign == "+" else result - int(offset)
    return result


def _check_arch(check: Checker, arch, where: str) -> None:
    from jobs.counter_groups import PERFGROUPS, architectures

    known = architectures()
    if not known:
        check.fail(where, arch, f"no likwid group files in {PERFGROUPS} to check it against (install likwid)")
    if arch not in known:
        check.fail(where, arch, f"unknown likwid architecture (known: {', '.join(known)})")


def available_counter_groups(root: Path = Path("/usr/share/likwid/perfgroups")) -> set[str]:
    """Group names of every architecture likwid ships (the node that runs the case has one of them)."""
    return {p.stem for p in root.glob("*/*.txt")}
