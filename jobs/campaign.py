"""Campaign directories: create one from an experiment (plan + write), find one, read its cases.

Layout and fields: docs/formats.md. A campaign directory appears complete or not at all (it is built
under a temporary name and renamed), and results/latest is switched atomically to the newest.
"""

import errno
import json
import os
from pathlib import Path

from sbcore import campaign_access, layout, run_budget
from sbcore.atomic import dump_json, write_atomic
from sbcore.campaign_files import read_cases, read_manifest
from sbcore.errors import ScalebenchError, UsageError
from sbcore.names import check_name, has_control
from sbcore.run_budget import stored_run_budget

# Planning, provenance and TOML writing are imported where used: every Slurm array task imports this
# module for load_cases, and its start-up is part of the per-case overhead (perf/perf_runcase.py).


def plan_experiment(experiment_path, node_types=None, nodes_path=None):
    """Validate the experiment and return (experiment, cases) without writing anything."""
    from jobs.config import NODES_TOML, load_experiment, load_node_types
    from jobs.plan import plan_cases

    nodes_path = nodes_path or NODES_TOML
    known = load_node_types(nodes_path)
    exp = load_experiment(Path(experiment_path), known)
    return exp, plan_cases(exp, known, list(node_types) if node_types else None)


def resolved_config(exp, cases: list[dict], name: str, created: str, seed: int) -> dict:
    """campaign.toml: the experiment with every default filled in, plus the [campaign] table."""
    sweeps = []
    for sweep in exp.sweeps:
        block = {k: list(v) for k, v in sweep.axes.items()}
        block |= dict(sweep.run)
        block["env"] = dict(sweep.env)
        block["params"] = {k: list(v) for k, v in sweep.params.items()}
        if sweep.program:  # a user's program (its runner is build/bin/program-run)
            del block["binary"]
            block["program"] = sweep.program
            if sweep.weak_scaling:
                block["weak_scaling"] = list(sweep.weak_scaling)
        sweeps.append(block)
    config = {
        "description": exp.description,
        "node_types": sorted({c["node_type"] for c in cases}, key=[c["node_type"] for c in cases].index),
        "seed": seed,
        **exp.run,
        "env": dict(exp.env),
        "campaign": {
            "name": name,
            "created": created,
            "seed": seed,
            "experiment": exp.name,
            "experiment_file": str(exp.path),
            "cases": len(cases),
        },
        "sweep": sweeps,
    }
    if exp.run_budget_s is not None:  # the runner reads it back (campaign_run_budget)
        config["campaign"][run_budget.KEY] = exp.run_budget_s
    if exp.excludes:
        config["exclude"] = exp.excludes
    if exp.loads:
        config["load"] = exp.loads
    if exp.reference:
        config["reference"] = exp.reference
    if exp.programs:  # TOML has no null: unset settings are left out
        config["programs"] = {
            name: {k: v for k, v in program.items() if v is not None}
            for name, program in exp.programs.items()
        }
    return config


def create_campaign(experiment_path, node_types=None, name=None, results_dir=None) -> Path:
    import datetime
    import secrets
    import shutil

    from jobs import toml_write
    from jobs.manifest import collect_manifest, unavailable_tools
    from jobs.plan import skipped_kernels
    from jobs.topology import detect_topology

    if name is not None:
        check_name("--name", name)
    results = Path(results_dir) if results_dir else layout.results_root()
    if has_control(str(results)):
        raise UsageError(f"--results-dir {str(results)!r}: contains a control character (newline, tab, ...)")
    exp, cases = plan_experiment(experiment_path, node_types)
    snapshot = _experiment_bytes(exp.path)
    try:
        results.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ScalebenchError(f"{results}: cannot create the results directory: {err.strerror}") from None
    campaign_access.check_trusted(results, "results directory", sticky_ok=True)
    _remove_stale_staging(results)
    now = datetime.datetime.now(datetime.UTC)
    created = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    base = name or f"{exp.name}-{now.strftime('%Y%m%dT%H%M%SZ')}"
    if name and (results / name).exists():
        raise UsageError(f"--name {name!r}: campaign {results / name} already exists")
    campaign, n = base, 1
    while (results / campaign).exists():
        n += 1
        campaign = f"{base}-{n}"
    seed = exp.seed if exp.seed is not None else secrets.randbits(32)
    for case in cases:
        case["experiment"] = exp.name
    try:
        topology = detect_topology().to_json()
    except ScalebenchError:
        topology = None  # a submit host without likwid still plans Slurm campaigns

    staging = results / f".{campaign}.staging-{os.getpid()}"
    staging.mkdir()
    try:
        for sub in (layout.RAW_DIR, "logs", "hosts"):
            (staging / sub).mkdir()
        write_atomic(
            staging / "campaign.toml", toml_write.dumps(resolved_config(exp, cases, campaign, created, seed))
        )
        write_atomic(staging / layout.EXPERIMENT_FILE, snapshot)
        write_atomic(layout.cases_path(staging), "".join(json.dumps(c) + "\n" for c in cases))
        manifest = collect_manifest(campaign, [c["binary"] for c in cases], topology)
        manifest["unavailable"] = {"kernels": skipped_kernels(exp), "tools": unavailable_tools()}
        manifest["loader_env"] = loader_env(cases)
        write_atomic(staging / "manifest.json", dump_json(manifest))
        try:
            os.rename(staging, results / campaign)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            raise UsageError(
                f"--name {campaign}: campaign {results / campaign} was created by another command meanwhile"
            ) from None
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise ScalebenchError(
            f"{err.filename or staging}: cannot write the campaign: {err.strerror}"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    layout.update_latest(results, campaign)
    return results / campaign


def _experiment_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror}") from None


def _remove_stale_staging(results: Path) -> None:
    """Staging directories (.<name>.staging-<pid>) this user left when killed (SIGKILL) while planning:
    removed once their process is gone (a live one is another command planning now)."""
    import re
    import shutil

    for entry in os.scandir(results):
        match = re.fullmatch(r"\..+\.staging-(\d+)", entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        if entry.stat(follow_symlinks=False).st_uid != os.geteuid() or _alive(int(match.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def loader_env(cases: list[dict]) -> list[str]:
    """The environment variables of the cases that change what the loader runs (LD_PRELOAD, ...): the
    experiment asked for them, and the manifest names them."""
    from jobs.config import LOADER_ENV

    return sorted({key for case in cases for key in case.get("env", {}) if LOADER_ENV.fullmatch(key)})


def load_cases(campaign_dir) -> list[dict]:
    return read_cases(Path(campaign_dir))


def verified_cases(campaign_dir) -> list[dict]:
    """cases.jsonl when it is exactly what the campaign's own experiment snapshot (experiment.toml,
    validated as any experiment) plans for its node types, with the kernels the build skipped then
    (manifest.json); else one UsageError naming the first difference, before anything runs. What runs
    is thereby only what `plan` would write: known binaries by name, case ids of the planner's form,
    validated options, environments and limits (docs/trust.md)."""
    from jobs.config import NODES_TOML, load_experiment, load_node_types
    from jobs.plan import plan_cases

    campaign_dir = Path(campaign_dir)
    cases = read_cases(campaign_dir)
    manifest = read_manifest(campaign_dir)
    config = _campaign_config(campaign_dir)
    snapshot = campaign_dir / layout.EXPERIMENT_FILE
    try:
        text = campaign_access.read_bytes(campaign_dir, layout.EXPERIMENT_FILE)
    except FileNotFoundError:
        raise UsageError(
            f"{snapshot}: missing: the campaign's cases cannot be checked against its experiment "
            "(planned by an older scalebench?); plan it again"
        ) from None
    except OSError as err:
        raise UsageError(f"{snapshot}: cannot read: {err.strerror}") from None
    info = config.get("campaign")
    nodes = config.get("node_types")
    if (
        not isinstance(info, dict)
        or not isinstance(nodes, list)
        or not all(isinstance(n, str) for n in nodes)
    ):
        raise UsageError(f"{campaign_dir / 'campaign.toml'}: no [campaign] table or node_types list")
    known = load_node_types(NODES_TOML)
    exp = load_experiment(snapshot, known, name=info.get("experiment"), text=text)
    skipped = (manifest.get("unavailable") or {}).get("kernels") or {}
    if not isinstance(skipped, dict) or not all(isinstance(v, str) for v in skipped.values()):
        raise UsageError(f"{campaign_dir / 'manifest.json'}: unavailable.kernels is not a table of reasons")
    planned = plan_cases(exp, known, nodes, skipped=skipped, ask_kernels=False)
    for case in planned:
        case["experiment"] = exp.name
    _compare(layout.cases_path(campaign_dir), cases, planned)
    named = manifest.get("loader_env") or []
    for key in loader_env(planned):
        if key not in named:
            raise UsageError(
                f"{campaign_dir / 'manifest.json'}: loader_env does not name {key}, which the cases set"
            )
    return cases


def _compare(path: Path, cases: list[dict], planned: list[dict]) -> None:
    def canonical(case: dict) -> str:
        return json.dumps(case, sort_keys=True, separators=(",", ":"))

    for i, (case, want) in enumerate(zip(cases, planned, strict=False)):
        if canonical(case) != canonical(want):
            keys = sorted(
                k for k in set(case) | set(want) if canonical({k: case.get(k)}) != canonical({k: want.get(k)})
            )
            raise UsageError(
                f"{path}:{i + 1}: differs from what the campaign's experiment plans "
                f"(key {', '.join(map(repr, keys[:3]))}): not run"
            )
    if len(cases) != len(planned):
        raise UsageError(
            f"{path}: {len(cases)} cases, but the campaign's experiment plans {len(planned)}: not run"
        )


def _campaign_config(campaign_dir: Path) -> dict:
    import tomllib

    path = Path(campaign_dir) / "campaign.toml"
    try:
        return tomllib.loads(campaign_access.read_bytes(Path(campaign_dir), "campaign.toml").decode())
    except (OSError, ValueError) as err:  # missing, not UTF-8, not TOML
        raise UsageError(f"{path}: cannot read: {getattr(err, 'strerror', None) or err}") from None


def campaign_seed(campaign_dir) -> int:
    path = Path(campaign_dir) / "campaign.toml"
    try:
        return int(_campaign_config(campaign_dir)["campaign"]["seed"])
    except (KeyError, ValueError, TypeError) as err:
        raise UsageError(f"{path}: cannot read [campaign] seed: {err}") from None


def campaign_run_budget(campaign_dir) -> float | None:
    """The experiment's `run_budget_s` as the campaign keeps it (sbcore/run_budget.py); None when it has
    none. A value that is not a positive finite number is refused."""
    budget, problem = stored_run_budget(_campaign_config(campaign_dir))
    if problem:
        raise UsageError(f"{Path(campaign_dir) / 'campaign.toml'}: {problem}")
    return budget
