"""Experiment -> cases: cross product per [[sweep]], union of the blocks, minus [[exclude]] rules.

A case is fully resolved for one node type (thread expressions evaluated, argv built); its case_id is a
hash of its canonical JSON, so re-planning the same experiment gives the same ids.
"""

import hashlib
import itertools
import json
import os
import sys

from jobs import competing_load as load_config
from jobs.binaries import binary_options, binary_path, is_mpi, split_name, unavailable_kernels
from jobs.conduct_plan import mark_conducted
from jobs.config import PROGRAM_BINARY, Experiment, NodeType, resolve_threads
from jobs.config_decode import Checker
from jobs.config_types import ALL_CPUS, NO_COUNTERS
from jobs.counter_groups import check_planned_groups
from jobs.duets import pair_cases
from jobs.families import family_of, repeat_baselines, trial_group_of
from jobs.kernel_args import kernel_refusal, refused_option
from jobs.programs.build import build_programs
from jobs.programs.config import check_workers_reach, used_names
from jobs.programs.config import resolve as resolve_program
from jobs.topology import detect_topology
from sbcore import case_shape
from sbcore.errors import UsageError
from sbcore.program_spec import RUNTIMES as PROGRAM_MODELS

# Fields that say where a case sits, not what it measures: kept out of the hash (`trial_group` too, so a
# campaign's case ids stay what they were before trial groups).
UNHASHED = ("case_id", "index", "experiment", "trial_group")
# The most cases one experiment may plan (its sweeps' products, counted before they are expanded): a plan
# stays a matter of seconds, a campaign's files a matter of megabytes.
MAX_CASES = 100_000


def case_id(case: dict) -> str:
    body = {k: v for k, v in case.items() if k not in UNHASHED}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def node_shape(node: NodeType) -> dict:
    """cores, hwthreads, sockets, threads_per_core of a node type (detected here for detect = true)."""
    if node.detect:
        topo = detect_topology()
        return {
            "cores": topo.cores,
            "hwthreads": len(topo.hwthreads),
            "sockets": topo.sockets,
            "threads_per_core": topo.threads_per_core,
        }
    cores = node.sockets * node.cores_per_socket
    return {
        "cores": cores,
        "hwthreads": cores * node.threads_per_core,
        "sockets": node.sockets,
        "threads_per_core": node.threads_per_core,
    }


def plan_cases(
    exp: Experiment,
    node_types: dict[str, NodeType],
    selected: list[str] | None = None,
    skipped: dict[str, str] | None = None,
    ask_kernels: bool = True,
) -> list:
    """The experiment's cases for the selected node types. `skipped`: the binaries to leave out (default:
    those the build skipped, said on stderr); `ask_kernels`: ask each kernel's --check-args about its
    option sets (a campaign re-derived for comparison with its cases.jsonl does not ask again)."""
    check = Checker(exp.path)
    names = selected or exp.node_types
    for name in names:
        if name not in node_types:
            raise UsageError(f"--node-type {name!r}: unknown node type (known: {', '.join(node_types)})")
    _check_size(exp, len(names))
    if skipped is None:
        skipped = skipped_kernels(exp)
        for why in dict.fromkeys(skipped.values()):
            binaries = ", ".join(name for name, reason in skipped.items() if reason == why)
            print(f"plan: skipping the cases of {binaries}: {why}", file=sys.stderr)
    _check_binaries(check, exp, skipped)
    cases, seen, where, cpus_of, excluded = [], set(), {}, {}, [0]
    for name in names:
        shape = node_shape(node_types[name])
        cpus_of[name] = shape["hwthreads"]
        check_planned_groups(check, exp, node_types[name], NO_COUNTERS)
        for s, sweep in enumerate(exp.sweeps):
            for case in _sweep_cases(check, exp, sweep, f"sweep[{s}]", name, shape, skipped, excluded):
                if case["case_id"] not in seen:
                    seen.add(case["case_id"])
                    where[case["case_id"]] = f"sweep[{s}]"
                    cases.append(case)
    if not cases and excluded[0]:
        raise UsageError(
            f"{exp.path}: the [[exclude]] rules leave no case to run (all {excluded[0]} excluded)"
        )
    if ask_kernels:
        build_programs(exp, [s.program for s in exp.sweeps if s.program])  # before they are checked
        _check_kernel_args(check, cases, where)
    if exp.interleave == "family":
        repeat_baselines(cases, exp.baseline_every)
    if exp.duet:
        pair_cases(cases, cpus_of, check.fail)
    if exp.conduct:
        mark_conducted(cases, cpus_of)
    for i, case in enumerate(cases):
        case["index"] = i
        case["case_id"] = case_id(case)
    return cases


def _check_size(exp: Experiment, node_types: int) -> None:
    """Refuse an experiment whose sweeps expand to more than MAX_CASES cases (counted before anything
    is expanded or excluded: a product of the axes' lengths)."""
    total = 0
    for sweep in exp.sweeps:
        size = node_types
        for values in (*sweep.axes.values(), *sweep.params.values()):
            size *= len(values)
        total += size
    if total > MAX_CASES:
        raise UsageError(
            f"{exp.path}: the sweeps expand to {total} cases (before excludes), more than {MAX_CASES}: "
            "split the experiment or narrow its axes"
        )


def _check_kernel_args(check: Checker, cases: list[dict], where: dict[str, str]) -> None:
    """The kernel's own --check-args, once per distinct option set (asked a few at a time): what it
    refuses fails the plan, at the first case (in plan order) with a refused option set."""
    from concurrent.futures import ThreadPoolExecutor

    def key_of(case: dict) -> tuple:
        return (case["binary"], tuple(case["argv"]), case["warmup"], tuple(sorted(case["env"].items())))

    distinct = {key_of(case): case for case in reversed(cases)}

    def ask(case: dict) -> str | None:
        env = os.environ | {"OMP_NUM_THREADS": str(case["threads"])} | case["env"]
        return kernel_refusal(case["binary"], case["argv"], case["warmup"], env)

    with ThreadPoolExecutor(max_workers=max(2, min(8, 2 * (os.cpu_count() or 1)))) as pool:
        answers = dict(zip(distinct, pool.map(ask, distinct.values()), strict=True))
    for case in cases:
        reason = answers[key_of(case)]
        if reason is not None:
            _refused(check, case, where[case["case_id"]], reason)


def _refused(check: Checker, case: dict, where: str, reason: str) -> None:
    option = refused_option(reason)
    if option in case["params"]:
        check.fail(
            f"{where}.params.{option}", case["params"][option], f"{case['binary']} refuses it: {reason}"
        )
    if option in ("threads", "warmup"):
        check.fail(f"{where}.{option}", case[option], f"{case['binary']} refuses it: {reason}")
    check.fail(f"{where}.binary", case["binary"], f"refuses the options {case['argv']}: {reason}")


def skipped_kernels(exp: Experiment) -> dict[str, str]:
    """The experiment's binaries the build skipped for a missing optional tool -> why (their cases are
    left out of the plan; the manifest lists them)."""
    unavailable = unavailable_kernels()
    wanted = dict.fromkeys(name for sweep in exp.sweeps for name in sweep.axes["binary"])
    return {name: unavailable[name] for name in wanted if name in unavailable}


def _check_binaries(check: Checker, exp: Experiment, skipped: dict[str, str]) -> None:
    for s, sweep in enumerate(exp.sweeps):
        if sweep.program:
            _check_program_sweep(check, exp, sweep, f"sweep[{s}]")
            continue
        for i, name in enumerate(sweep.axes["binary"]):
            key = f"sweep[{s}].binary[{i}]"
            if name in skipped:
                continue
            try:
                split_name(name)
            except ValueError:
                check.fail(key, name, "binary names are <kernel>-<lang>-<model>, e.g. mandelbrot-c-omp")
            path = binary_path(name)
            if not (path.is_file() and os.access(path, os.X_OK)):
                have = sorted(p.name for p in path.parent.glob("*-*-*")) if path.parent.is_dir() else []
                check.fail(
                    key,
                    name,
                    f"no such kernel binary {path} "
                    f"(build with `make kernels`; have: {', '.join(have) or 'none'})",
                )
            options = binary_options(path)
            for param, values in sweep.params.items():
                if param.replace("_", "-") not in options:
                    check.fail(
                        f"sweep[{s}].params.{param}",
                        values,
                        f"{name} takes no option --{param.replace('_', '-')} "
                        f"(its options: {', '.join(sorted(options))})",
                    )


def _check_program_sweep(check: Checker, exp: Experiment, sweep, where: str) -> None:
    """A program's sweep: its runner built, every placeholder given a value, every param used."""
    program = exp.programs[sweep.program]
    path = binary_path(PROGRAM_BINARY)
    if not (path.is_file() and os.access(path, os.X_OK)):
        check.fail(f"{where}.program", sweep.program, f"{path} is missing: build with `make kernels`")
    check_workers_reach(check, program, f"programs.{sweep.program}.command")
    known = {"threads", "ranks", "workers"} | set(sweep.params)
    for name in sorted(used_names(program) - known):
        check.fail(
            f"programs.{sweep.program}.command",
            f"{{{name}}}",
            f"no value for this placeholder in {where} (give {where}.params.{name}, or use "
            f"{{threads}}, {{ranks}}, {{workers}})",
        )
    for name in sorted(set(sweep.params) - used_names(program)):
        check.fail(
            f"{where}.params.{name}",
            sweep.params[name],
            f"program {sweep.program} uses no placeholder {{{name}}} in its command or env",
        )
    if sweep.run["pin_tool"] != "harness":
        check.fail(
            f"{where}.pin_tool", sweep.run["pin_tool"], "a program is placed by its runner: use 'harness'"
        )


def _program_case(
    exp: Experiment, sweep, params: dict, threads: int, ranks: int
) -> tuple[dict, dict, list[str]]:
    """(record params, the case's program spec, argv of build/bin/program-run) of one program case;
    weak-scaling params are given per worker and multiplied here (the record keeps the per-worker value,
    so the series of one problem size per worker stays one family)."""
    workers = case_shape.workers(threads, ranks)
    values = {"threads": threads, "ranks": ranks, "workers": workers}
    values |= {k: (v * workers if k in sweep.weak_scaling else v) for k, v in params.items()}
    program = exp.programs[sweep.program]
    spec = resolve_program(program, sweep.program, values, sweep.weak_scaling, ranks, sweep.run["timeout_s"])
    spec["params"] = dict(params)
    argv = ["--spec", json.dumps(spec, sort_keys=True, separators=(",", ":")), "--threads", str(threads)]
    return params, spec, argv


def _matches(rule: dict, combo: dict, shape: dict) -> bool:
    for key, values in rule.items():
        if key in ("threads", "ranks", "cpus"):
            values = [
                resolve_threads(v, shape["cores"], shape["hwthreads"], shape["sockets"]) for v in values
            ]
        if combo.get(key, object()) not in values:
            return False
    return True


def _sweep_cases(
    check: Checker,
    exp: Experiment,
    sweep,
    where: str,
    node: str,
    shape: dict,
    skipped: dict[str, str],
    excluded: list[int],
):
    param_names = list(sweep.params)
    axes = [sweep.axes[a] for a in ("binary", "threads", "ranks", "pin", "counter_group", "load", "cpus")]
    for values in itertools.product(*axes, *(sweep.params[p] for p in param_names)):
        binary, threads_raw, ranks_raw, pin, group, load, cpus_raw = values[:7]
        if binary in skipped:
            continue
        params = dict(zip(param_names, values[7:], strict=True))
        threads = resolve_threads(threads_raw, shape["cores"], shape["hwthreads"], shape["sockets"])
        ranks = resolve_threads(ranks_raw, shape["cores"], shape["hwthreads"], shape["sockets"])
        combo = {"binary": binary, "threads": threads, "ranks": ranks, "pin": pin}
        cpus = (
            None
            if cpus_raw == ALL_CPUS
            else resolve_threads(cpus_raw, *(shape[k] for k in ("cores", "hwthreads", "sockets")))
        )
        combo |= {"counter_group": group, "node_type": node, "load": load, "cpus": cpus, **params}
        if any(_matches(rule, combo, shape) for rule in exp.excludes):
            excluded[0] += 1
            continue
        if sweep.program:
            kernel, lang = sweep.program, "program"
            model = PROGRAM_MODELS[exp.programs[sweep.program]["runtime"]]
        else:
            kernel, lang, model = split_name(binary)
        if threads < 1:
            check.fail(f"{where}.threads", threads_raw, f"resolves to {threads} on node type {node}")
        if ranks < 1:
            check.fail(f"{where}.ranks", ranks_raw, f"resolves to {ranks} on node type {node}")
        if model == "serial" and threads != 1:
            check.fail(
                f"{where}.threads",
                threads_raw,
                f"{binary} is serial: threads must be 1 (give it its own [[sweep]] or an [[exclude]])",
            )
        if ranks > 1 and not is_mpi(model):
            check.fail(f"{where}.ranks", ranks, f"{binary} is not an MPI binary: ranks must be 1")
        if is_mpi(model) and pin != "none":
            check.fail(f"{where}.pin", pin, "MPI cases are placed by mpirun/srun: use pin = 'none'")
        if ranks > 1 and group != NO_COUNTERS:
            check.fail(
                f"{where}.counter_group", group, "counters are measured per process: not with ranks > 1"
            )
        if cpus is not None and (is_mpi(model) or not 1 <= cpus <= shape["hwthreads"]):
            check.fail(
                f"{where}.cpus", cpus_raw, f"must be 1..{shape['hwthreads']} on node type {node} (not MPI)"
            )
        if load != load_config.NONE:
            load_config.check_fits_node(check, exp.loads[load], f"{where}.load", node, shape["hwthreads"])
        if pin == "smt-siblings" and shape["threads_per_core"] < 2:
            check.fail(f"{where}.pin", pin, f"node type {node} has no SMT siblings (1 thread per core)")
        options = binary_options(binary_path(binary))
        if sweep.program:
            params, _, argv = _program_case(exp, sweep, params, threads, ranks)
        if sweep.run["dump_image"] and "dump" not in options:
            check.fail(f"{where}.dump_image", True, f"{binary} writes no image (it has no --dump)")
        if sweep.run["dump_image"] and "dump" in params:
            check.fail(f"{where}.params.dump", params["dump"], "give either params.dump or dump_image")
        if not sweep.program:
            argv = ["--threads", str(threads)] if "threads" in options else []
            for name in sorted(params):
                argv += [f"--{name.replace('_', '-')}", str(params[name])]
        if pin != "none" and not sweep.program:  # a program's runner pins from the environment
            for arg in argv:
                if not arg or any(ch.isspace() for ch in arg):
                    check.fail(
                        f"{where}.params",
                        arg,
                        "likwid-pin splits its command line on whitespace: such values need pin = 'none'",
                    )
        case = {
            "case_id": "",
            "index": -1,
            "experiment": exp.name,
            "node_type": node,
            "binary": binary,
            "kernel": kernel,
            "lang": lang,
            "model": model,
            "threads": threads,
            "ranks": ranks,
            "pin": pin,
            "counter_group": None if group == NO_COUNTERS else group,
            "reps": sweep.run["repetitions"],
            "warmup": sweep.run["warmup"],
            "timeout_s": sweep.run["timeout_s"],
            "params": params,
            "env": dict(sweep.env),
            "argv": argv,
        }
        # Only when set, so the ids of cases without a scenario stay as they were.
        if sweep.program:
            case["program"] = sweep.program  # its spec is in argv (--spec), hashed with it
            if sweep.weak_scaling:
                case["weak_scaling"] = list(sweep.weak_scaling)
        if cpus is not None:
            case["cpus"] = cpus
        if load != load_config.NONE:
            case["load"] = exp.loads[load]
        if sweep.run["dump_image"]:
            case["dump_image"] = True  # only when set, so the ids of other cases stay as they were
        # Sampling and pin-tool fields likewise only when they differ from the defaults.
        if sweep.run["target_ci"]:
            case["reps"] = sweep.run["max_reps"]
            case["sampling"] = {
                "target_ci": sweep.run["target_ci"],
                "min_reps": sweep.run["min_reps"],
                "max_reps": sweep.run["max_reps"],
                "budget_s": sweep.run.get("budget_s"),
            }
        if sweep.run["reps_per_process"] != 1:
            case["reps_per_process"] = sweep.run["reps_per_process"]
        if sweep.run["pin_tool"] != "harness" and pin != "none":
            case["pin_tool"] = sweep.run["pin_tool"]
        if exp.interleave == "family":
            case["family"] = family_of(case)
            case["trial_group"] = trial_group_of(case)
            if exp.comparison:
                # The campaign's target on each case (the runner reads it) and whether the case counts:
                # oversubscribed cases (more workers than cores) are reported but not sampled for it.
                oversubscribed = case_shape.oversubscribed(case_shape.workers(threads, ranks), shape["cores"])
                case["comparison"] = dict(exp.comparison) | {"oversubscribed": oversubscribed}
        case["case_id"] = case_id(case)
        yield case
