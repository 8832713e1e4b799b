"""Subcommands of the campaign engine: plan, run, run-case, status, probe, build.

Each handler imports its machinery lazily: `run-case` is what every Slurm array task starts, so its
start-up must not pay for modules other commands need.
"""

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

from sbcore.argtypes import int_at_least
from sbcore.errors import EXIT_FINDING, EXIT_OK, EnvironmentProblem, UsageError
from sbcore.install import entry_command, source_root

LIST_LIMIT = 20


def register(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "plan",
        help="validate an experiment and print its cases (writes nothing unless --write)",
        description="Validate an experiment (e.g. config/experiments/smoke.toml), expand its sweeps into\n"
        "cases and print the case table (count, case ids, parameters). Nothing is written unless\n"
        "--write is given.",
        formatter_class=fmt,
    )
    p.add_argument("experiment", metavar="EXP", help="experiment file, e.g. config/experiments/smoke.toml")
    _node_type_option(p)
    p.add_argument("--write", action="store_true", help="create the campaign directory under results/")
    _campaign_options(p)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser(
        "run",
        help="plan and run a campaign on this machine, or resume one",
        description="Create a campaign from EXP and run it on this machine: kernel processes interleaved\n"
        "in a seeded random order across cases (cases with a precision target get more processes,\n"
        'pass after pass, until it holds; with interleave = "family" in trials: one process of\n'
        "each case of a comparison family back to back, the baseline again after every baseline_every\n"
        "of them, the families that differ only in language or inner loop in the same trials, and\n"
        "with comparison_target_ci more trials where paired speedups, variant ratios or language /\n"
        "inner-loop ratios are not yet that precise, within comparison_budget_s (a family in a slow\n"
        "cache-line transfer is passed over, or waited out up to comparison_wait_s); with duet = true two\n"
        "single-worker alternatives at once, one per CPU; with conduct = true a family member on more\n"
        "than one CPU runs with its serial baseline on each of its CPUs just before each repetition;\n"
        "with run_budget_s the trials run in rounds and\n"
        "none starts that the time left cannot finish, and one line says where the budget ended), with a\n"
        "progress bar (ETA) on stderr. Ctrl-C stops cleanly and keeps what finished;\n"
        "`run --resume CAMPAIGN` runs only what is missing.\n"
        "Cases of Slurm node types are left for `submit`. At the end it prints the campaign\n"
        "directory and how to analyse it.",
        epilog="examples:\n  ./scalebench run config/experiments/smoke.toml\n"
        "  ./scalebench run --resume latest",
        formatter_class=fmt,
    )
    p.add_argument("experiment", metavar="EXP", nargs="?", help="experiment file to plan and run")
    p.add_argument("--resume", metavar="CAMPAIGN", help="campaign (path, name or 'latest') to complete")
    _node_type_option(p)
    _campaign_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _no_wait_option(p)
    p.add_argument(
        "--analyze", action="store_true", help="run `scalebench analyze` on the campaign at the end"
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "run-case",
        help="run one case of a campaign (what a Slurm array task calls)",
        description="Run case INDEX (line INDEX of cases.jsonl) until its sampling rule holds: its missing "
        "repetitions, or with a precision target (target_ci) kernel processes of reps_per_process "
        "repetitions until the CI of the median meets it, max_reps or budget_s; or only the process "
        "that measures --rep K. "
        "Slurm ids (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_JOB_PARTITION, "
        "SLURMD_NODENAME) are stored in the records when set. Exit status 1 if a repetition failed.",
    )
    p.add_argument("campaign", metavar="CAMPAIGN", help="campaign path, name under results/, or 'latest'")
    p.add_argument("index", metavar="INDEX", type=int_at_least(0), help="case index (= Slurm array task id)")
    p.add_argument(
        "--rep", metavar="K", type=int_at_least(0), help="run only the kernel process measuring repetition K"
    )
    _no_wait_option(p)
    p.set_defaults(func=cmd_run_case)

    p = sub.add_parser(
        "status",
        help="done / missing / failed cases of a campaign, per node type",
        description="Read a campaign's files and report, per node type, how many cases are done, missing or "
        "failed (with the reason), Slurm queue states of unfinished cases when the campaign was submitted, "
        "records whose placement broke the pinning plan, and every record line not counted (file:line: "
        "why: cut, not JSON, wrong case_id or rep, twice). Exit status 0 when every case is done, 1 when "
        "the campaign is incomplete (docs/exit-codes.md).",
    )
    p.add_argument("campaign", metavar="CAMPAIGN", help="campaign path, name under results/, or 'latest'")
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every unfinished case and uncounted line (default: first {LIST_LIMIT})",
    )
    _json_option(p)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
        "probe",
        help="topology, SMT siblings, counters and pinning on this node",
        description="Report this node's topology (likwid-topology, else Linux sysfs), SMT siblings, "
        "whether likwid-perfctr can read hardware counters (and why not) and whether pinning holds: by "
        "the kernel harness (the "
        "default), likwid's preload library and likwid-pin.",
    )
    p.add_argument("--campaign", metavar="CAMPAIGN", help="also cache this host's verdict in the campaign")
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser(
        "build",
        help="build the kernels with the site's compilers (CC, FC, MPICC)",
        description="Build the kernel binaries: `make kernels` in scalebench's source tree (the\n"
        "clone, or the clone a pip install was made from) with the compilers CC, FC and MPICC of the\n"
        "environment (e.g. after `module load gcc openmpi`). The binaries go to build/bin of the source\n"
        "tree, or to $SCALEBENCH_BIN_DIR; kernels whose compiler is missing are left out, one line each.",
        epilog="example:\n  CC=clang FC=gfortran scalebench build",
        formatter_class=fmt,
    )
    p.add_argument("-j", "--jobs", type=int_at_least(1), default=os.cpu_count() or 1, help="parallel jobs")
    p.set_defaults(func=cmd_build)


def _node_type_option(p) -> None:
    p.add_argument(
        "--node-type",
        action="append",
        metavar="NAME",
        help="plan for this node type (repeatable; default: the experiment's node_types)",
    )


def _json_option(p) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print one versioned JSON document instead of the text (docs/json-output.md)",
    )


def _campaign_options(p) -> None:
    p.add_argument("--name", help="campaign name (default: <experiment>-<UTC time>)")
    p.add_argument(
        "--results-dir",
        type=Path,
        help="where campaigns live (default: $SCALEBENCH_RESULTS_DIR, else ./results)",
    )


def cmd_plan(args) -> int:
    from jobs.campaign import create_campaign, plan_experiment

    exp, cases = plan_experiment(args.experiment, args.node_type)
    targeted = sum("sampling" in c for c in cases)
    note = f" (at most; {targeted} cases sampled to a precision target)" if targeted else ""
    print(f"{exp.name}: {len(cases)} cases, {sum(c['reps'] for c in cases)} repetitions{note}")
    print(format_case_table(cases))
    if args.write:
        path = create_campaign(args.experiment, args.node_type, args.name, args.results_dir)
        print(f"campaign written: {path}")
    return 0


def format_case_table(cases: list[dict]) -> str:
    from sbcore.program_spec import binary_name

    rows = [("index", "case_id", "node_type", "binary", "thr", "rk", "pin", "counters", "reps", "params")]
    for c in cases:
        params = " ".join(f"{k}={v}" for k, v in c["params"].items())
        scenario = ([f"cpus={c['cpus']}"] if "cpus" in c else []) + (
            [f"load={c['load']['name']}"] if "load" in c else []
        )
        params = " ".join([*scenario, params])
        rows.append(
            (
                str(c["index"]),
                c["case_id"],
                c["node_type"],
                binary_name(c),
                str(c["threads"]),
                str(c["ranks"]),
                c["pin"],
                c["counter_group"] or "-",
                f"{c['reps']}+{c['warmup']}w",
                params,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows
    )


def _no_wait_option(p) -> None:
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another scalebench process is measuring on this host, stop (exit 3) instead of "
        "waiting for it (one measurer per host: a host-wide lock, see jobs/measure_lock.py)",
    )


def cmd_run(args) -> int:
    from jobs.campaign import create_campaign, verified_cases
    from jobs.runner import run_local
    from jobs.status import note_uncounted
    from sbcore.child import stop_on_signals
    from sbcore.layout import trusted_campaign

    if bool(args.experiment) == bool(args.resume):
        raise UsageError("run: give either EXP (a new campaign) or --resume CAMPAIGN, not both or neither")
    if args.resume:
        if args.node_type or args.name:
            raise UsageError("run --resume: --node-type and --name only apply to a new campaign")
        campaign = trusted_campaign(args.resume)
        cases = verified_cases(campaign)  # nothing runs unless cases.jsonl is what its experiment plans
    else:
        campaign = create_campaign(args.experiment, args.node_type, args.name, args.results_dir)
    print(f"campaign: {campaign}", file=sys.stderr)
    if args.resume:
        note_uncounted(campaign, cases, sys.stderr)
    stop_on_signals()
    counts = run_local(campaign, progress=not args.no_progress, wait_for_lock=not args.no_wait)
    where = shlex.quote(str(campaign))
    if counts["interrupted"]:
        print(f"interrupted: finished records are kept; continue with ./scalebench run --resume {where}")
        return 130
    waited = (
        f"; {counts['comparison_deferrals']} deferred for a slow cache-line transfer"
        if counts["comparison_deferrals"]
        else ""
    )
    if counts["comparison_waits"]:
        waited += f"; waited {counts['comparison_wait_s']:.1f} s for it to pass"
    extra = (
        f" ({counts['comparison_trials']} trials for the comparison target{waited})"
        if counts["comparison_trials"] or waited
        else ""
    )
    print(f"{counts['ok']} repetitions ran, {counts['failed']} failed{extra}")
    if counts["budget_line"]:
        print(counts["budget_line"])
    print(f"campaign directory: {campaign}")
    if counts["failed"]:
        print(f"see why: ./scalebench status {where}; retry: ./scalebench run --resume {where}")
    status = 0
    if args.analyze:
        status = subprocess.call([*entry_command(), "analyze", str(campaign)])
    else:
        print(f"analyse it with: ./scalebench analyze {where}")
    return status or (1 if counts["failed"] else 0)


def cmd_build(args) -> int:
    from jobs.binaries import bin_dir

    root = source_root()
    if not (root / "Makefile").is_file():
        raise EnvironmentProblem(
            f"{root}: no Makefile: `scalebench build` needs scalebench's source tree (install with "
            "`pip install .` from a clone)"
        )
    binaries = bin_dir()
    argv = [
        "make",
        "-C",
        str(root),
        f"-j{args.jobs}",
        f"BIN_DIR={binaries}",
        f"OBJ_DIR={binaries.parent / 'obj'}",
    ]
    # The tool kernels (kernels/tools/standard_tools.py behind a script) run with the python running
    # this command.
    argv += [f"PY={sys.executable}", "kernels"]
    status = subprocess.call(argv)
    if status == 0:
        print(f"kernels in {binaries}")
    return status


def cmd_run_case(args) -> int:
    from jobs.campaign import verified_cases
    from jobs.runcase import run_case
    from jobs.status import note_uncounted
    from sbcore.child import stop_on_signals
    from sbcore.layout import trusted_campaign

    campaign = trusted_campaign(args.campaign)
    stop_on_signals()
    cases = verified_cases(campaign)  # nothing runs unless cases.jsonl is what its experiment plans
    if 0 <= args.index < len(cases):
        note_uncounted(campaign, [cases[args.index]], sys.stderr)
    results = run_case(campaign, args.index, args.rep, wait_for_lock=not args.no_wait)
    failed = [r for r in results if r["outcome"] == "failed"]
    for r in results:
        reps = r["reps"]
        which = f"rep {reps[0]}" if len(reps) == 1 else f"reps {reps[0]}-{reps[-1]}"
        line = f"case {args.index}: {which}: {r['outcome']} ({r['path'].name})"
        print(line + (f" ({r['reason']})" if "reason" in r else ""), file=sys.stderr)
    return 1 if failed else 0


def cmd_status(args) -> int:
    from jobs.campaign import load_cases
    from jobs.status import case_states
    from sbcore.layout import CASE_STATES, resolve_campaign

    campaign = resolve_campaign(args.campaign)
    states = case_states(campaign)
    cases = {c["index"]: c for c in load_cases(campaign)}
    queue = _queue_states(campaign)
    complete = all(s["state"] == "done" for s in states)
    status = EXIT_OK if complete else EXIT_FINDING  # an incomplete campaign is a finding (docs/exit-codes.md)
    if args.json:
        from jobs.status_json import status_document
        from sbcore.output_json import print_document

        print_document(status_document(campaign, states, queue))
        return status
    print(f"campaign {campaign} ({len(states)} cases)")
    queue_columns = f"{'pending':>9}{'running':>9}" if queue else ""
    header = f"{'node type':<16}{'done':>6}{'partial':>9}{'missing':>9}{'failed':>8}{'reps done':>14}"
    print(header + queue_columns)
    for node in dict.fromkeys(s["node_type"] for s in states):
        mine = [s for s in states if s["node_type"] == node]
        n = {state: sum(s["state"] == state for s in mine) for state in CASE_STATES}
        reps = f"{sum(s['reps_done'] for s in mine)}/{sum(s['reps'] for s in mine)}"
        queued = [queue[s["index"]] for s in mine if s["state"] != "done" and s["index"] in queue]
        counts = f"{queued.count('PENDING'):>9}{queued.count('RUNNING'):>9}" if queue else ""
        print(f"{node:<16}{n['done']:>6}{n['partial']:>9}{n['missing']:>9}{n['failed']:>8}{reps:>14}{counts}")
    targeted = [s for s in states if s["target_ci"]]
    if targeted:  # cases sampled to a precision target: reps are "at most"; say how each one ended
        ended = {
            stop: sum(s["stop"] == stop for s in targeted) for stop in ("target_met", "max_reps", "budget")
        }
        print(
            f"precision target: {len(targeted)} cases, "
            + ", ".join(f"{n} {stop}" for stop, n in ended.items())
            + f", {len(targeted) - sum(ended.values())} still sampling"
        )
    if (campaign / "jobs" / "submissions.jsonl").exists():
        from jobs.slurm.submissions import unsubmitted_note  # the Slurm adapter's module

        note = unsubmitted_note(campaign, states)
        if note:
            print(note)
    for state in ("failed", "partial", "missing"):
        rows = [s for s in states if s["state"] == state]
        if rows:
            print(f"{state}:")
        for s in rows if args.all else rows[:LIST_LIMIT]:
            print(
                "  "
                + _describe(cases[s["index"]], s)
                + _queued(queue, s)
                + (f": {s['reason']}" if s["reason"] else "")
            )
        if len(rows) > LIST_LIMIT and not args.all:
            print(f"  ... {len(rows) - LIST_LIMIT} more (--all lists them)")
    broken = [s for s in states if s["pin_violations"]]
    if broken:
        print("pinning violated (placement differs from the plan):")
        for s in broken:
            print(f"  {_describe(cases[s['index']], s)}: in {s['pin_violations']} of {s['reps_done']} reps")
    problems = [f"{campaign}/{line}" for s in states for line in s["problems"]]
    if problems:
        print(f"record lines not counted ({len(problems)}; resume measures those repetitions again):")
        for line in problems if args.all else problems[:LIST_LIMIT]:
            print(f"  {line}")
        if len(problems) > LIST_LIMIT and not args.all:
            print(f"  ... {len(problems) - LIST_LIMIT} more (--all lists them)")
    return status


def _describe(case: dict, state: dict) -> str:
    return (
        f"case {case['index']} {case['case_id']} {case['binary']} threads={case['threads']} "
        f"pin={case['pin']} "
        f"[{state['reps_done']}/{state['reps']} reps]"
    )


def _queued(queue: dict, state: dict) -> str:
    return f" [Slurm: {queue[state['index']]}]" if state["index"] in queue else ""


def _queue_states(campaign: Path) -> dict:
    if not (campaign / "jobs" / "submissions.jsonl").exists():
        return {}
    from jobs.slurm.queue import QueueUnavailable, queue_states  # the Slurm adapter's module

    try:
        return queue_states(campaign)
    except QueueUnavailable as err:
        # The files alone still say what is done; the queue only adds pending/running.
        print(f"scalebench status: warning: no Slurm queue states ({err}); file states only", file=sys.stderr)
        return {}


def cmd_probe(args) -> int:
    from jobs.capabilities import report

    print(report())
    if args.campaign:
        from jobs.hostinfo import host_info
        from sbcore.layout import resolve_campaign

        campaign = resolve_campaign(args.campaign)
        info = host_info(campaign)
        print(f"cached for host {info['hostname']} in {campaign / 'hosts'}")
    return 0
