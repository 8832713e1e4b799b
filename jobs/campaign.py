"""Campaign directories: create one from an experiment (plan + write), find one, read its cases.

Layout and fields: docs/formats.md. A campaign directory appears complete or not at all (it is built
under a temporary name and renamed), and results/latest is switched atomically to the newest.
"""

import errno
import json
import os
from pathlib import Path

from sbcore import layout
from sbcore.atomic import dump_json, write_atomic
from sbcore.campaign_files import read_cases
from sbcore.errors import ScalebenchError, UsageError
from sbcore.names import check_name

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
    if exp.excludes:
        config["exclude"] = exp.excludes
    if exp.loads:
        config["load"] = exp.loads
    if exp.reference:
        config["reference"] = exp.reference
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
    exp, cases = plan_experiment(experiment_path, node_types)
    results = Path(results_dir) if results_dir else layout.results_root()
    results.mkdir(parents=True, exist_ok=True)
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
        write_atomic(layout.cases_path(staging), "".join(json.dumps(c) + "\n" for c in cases))
        manifest = collect_manifest(campaign, [c["binary"] for c in cases], topology)
        manifest["unavailable"] = {"kernels": skipped_kernels(exp), "tools": unavailable_tools()}
        write_atomic(staging / "manifest.json", dump_json(manifest))
        try:
            os.rename(staging, results / campaign)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            raise UsageError(
                f"--name {campaign}: campaign {results / campaign} was created by another command meanwhile"
            ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    layout.update_latest(results, campaign)
    return results / campaign


def load_cases(campaign_dir) -> list[dict]:
    return read_cases(Path(campaign_dir))


def campaign_seed(campaign_dir) -> int:
    import tomllib

    path = Path(campaign_dir) / "campaign.toml"
    try:
        return int(tomllib.loads(path.read_text())["campaign"]["seed"])
    except (OSError, KeyError, ValueError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"{path}: cannot read [campaign] seed: {err}") from None
