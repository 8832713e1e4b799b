"""A campaign directory as the analysis sees it: files only (docs/formats.md, layout in sbcore.layout)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.records.derive import canonical_json
from sbcore import campaign_access, layout, sampling, simd_bounds
from sbcore.program_spec import binary_name
from sbcore.run_budget import stored_run_budget
from sbcore.variant_dimensions import problem_params


@dataclass
class Campaign:
    path: Path
    name: str
    cases: pd.DataFrame  # one row per planned case (cases.jsonl)
    manifest: dict
    config: dict  # campaign.toml
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    case_lines: list[dict] = field(default_factory=list)  # cases.jsonl's usable lines as written
    hosts: dict[str, dict] = field(default_factory=dict)  # hostname -> hosts/<hostname>.json
    quiet: dict = field(default_factory=dict)  # quiet_gate.json of a seed study (jobs/seeds.py), if any
    simd_bounds: dict[str, dict] = field(default_factory=dict)  # hostname -> hosts/bounds/<hostname>.json


def read_campaign(path: Path) -> Campaign:
    problems: list[tuple[str, str]] = []
    manifest = _read_json(path / "manifest.json", problems)
    config = _read_toml(path / "campaign.toml", problems)
    if not isinstance(config.get("campaign", {}), dict):
        problems.append(("campaign.toml", f"campaign = {config['campaign']!r}: not a table; left out"))
        config = {k: v for k, v in config.items() if k != "campaign"}
    rows, lines = [], []
    cases_file = layout.cases_path(path)
    text = _read_bytes(cases_file, problems)
    if text is not None:
        for lineno, line in enumerate(text.decode(errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
                rows.append(case_row(case))
                lines.append(case)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
                problems.append((f"cases.jsonl:{lineno}", f"unusable case line: {err!r}"))
    elif (layout.CASES_FILE, "missing") in problems:
        problems[problems.index((layout.CASES_FILE, "missing"))] = (
            layout.CASES_FILE,
            "missing: failed/missing cases cannot be listed",
        )
    name = (config.get("campaign") or {}).get("name") or path.name
    cases = pd.DataFrame(rows, columns=CASE_COLUMNS)
    quiet_file = layout.quiet_gate_path(path)
    quiet = _read_json(quiet_file, problems) if quiet_file.is_file() else {}
    bounds, unusable = simd_bounds.read_all(path)
    problems += unusable
    return Campaign(
        path, str(name), cases, manifest, config, problems, lines, read_hosts(path), quiet, bounds
    )


def read_hosts(path: Path) -> dict[str, dict]:
    """hostname -> what hosts/<hostname>.json holds (the node's probed topology), for every readable
    file (an unreadable one counts as not probed)."""
    hosts = {}
    for host_file in sorted((Path(path) / "hosts").glob("*.json")):
        probed = _read_json(host_file, [])
        if isinstance(probed, dict) and probed:
            hosts[host_file.stem] = probed
    return hosts


CASE_COLUMNS = [
    "case_id",
    "index",
    "node_type",
    "binary",
    "kernel",
    "lang",
    "model",
    "threads",
    "ranks",
    "pin",
    "counter_group",
    "reps",
    "schedule",
    "sync",
    "inner",
    "problem",
    "scaling",  # "weak": the problem grows with the workers (a program's weak_scaling params), else "strong"
    "params_json",
    "sampling_rule",  # sbcore.sampling.Rule: when the case has enough repetitions
]


def case_row(case: dict) -> dict:
    params = case.get("params") or {}
    return {
        "case_id": str(case["case_id"]),
        "index": case.get("index"),
        "node_type": str(case["node_type"]),
        "binary": binary_name(case),
        "kernel": case["kernel"],
        "lang": case["lang"],
        "model": case["model"],
        "threads": int(case["threads"]),
        "ranks": int(case.get("ranks", 1)),
        "pin": case.get("pin"),
        "counter_group": case.get("counter_group"),
        "reps": int(case.get("reps", 0)),
        "schedule": params.get("schedule"),
        "sync": params.get("sync"),
        "inner": params.get("inner"),
        # A case confined to fewer CPUs or run under competing load is another problem, not another variant.
        "problem": problem_key(params | scenario_of(case)),
        "scaling": "weak" if case.get("weak_scaling") else "strong",
        "params_json": canonical_json(params),
        "sampling_rule": sampling.case_rule({"reps": int(case.get("reps", 0))} | case),
    }


def scenario_of(case: dict) -> dict:
    """The case's CPU limit and competing load (jobs/plan.py sets them only when asked for)."""
    out = {"cpus": case["cpus"]} if "cpus" in case else {}
    if case.get("load"):
        out["load"] = case["load"].get("name")
    return out


def problem_key(params: dict) -> str:
    """The kernel's problem (size, region, samples, seed...): params without the parallel variant."""
    return canonical_json(problem_params(params))


def _read_bytes(path: Path, problems: list) -> bytes | None:
    """A campaign file's bytes (sbcore/campaign_access.py: no link followed, only a regular file), or
    None with the problem noted."""
    try:
        return campaign_access.read_path(path)
    except FileNotFoundError:
        problems.append((path.name, "missing"))
    except (OSError, campaign_access.UnsafeFile) as err:
        problems.append((path.name, f"unreadable: {err}"))
    return None


def _read_json(path: Path, problems: list) -> dict:
    data = _read_bytes(path, problems)
    try:
        value = json.loads(data) if data is not None else {}
        return value if isinstance(value, dict) else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        problems.append((path.name, f"unreadable: {err}"))
    return {}


def _read_toml(path: Path, problems: list) -> dict:
    data = _read_bytes(path, problems)
    try:
        return tomllib.loads(data.decode()) if data is not None else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        problems.append((path.name, f"unreadable: {err}"))
    return {}


def cores_of(node_type: str, campaign: Campaign, records: pd.DataFrame) -> tuple[int | None, str]:
    """Physical cores of a node type and where that number came from.

    Looked up in hosts/<hostname>.json (topology probed on a node that ran the type's records), the
    manifest (topology per node type), campaign.toml (node type definition), then inferred from the CPUs
    the records ran on (hardware threads, an upper bound for cores)."""
    if not records.empty and "hostname" in records:
        hosts = records.loc[records["node_type"] == node_type, "hostname"].dropna().astype(str).unique()
        for host in sorted(hosts):
            probed = campaign.hosts.get(host, {})
            topology = probed.get("topology")
            cores = _cores_in(topology) if isinstance(topology, dict) else None
            if cores:
                return cores, f"hosts/{host}.json"
    for source, tree in (("manifest.json", campaign.manifest), ("campaign.toml", campaign.config)):
        entry = _find_node_entry(tree, node_type)
        cores = _cores_in(entry) if entry else None
        if cores:
            return cores, source
    topology = campaign.manifest.get("topology")
    if isinstance(topology, dict) and campaign.cases["node_type"].nunique() <= 1:
        cores = _cores_in(topology)
        if cores:
            return cores, "manifest.json topology"
    if not records.empty and "pin_cpus" in records:
        cpus = records.loc[records["node_type"] == node_type, "pin_cpus"].dropna().astype(str)
        seen = {c for text in cpus.unique() for c in text.split(",") if c}
        if seen:
            return len(seen), "CPUs seen in records (hardware threads)"
    return None, "unknown"


def _find_node_entry(tree: object, node_type: str, depth: int = 0) -> dict | None:
    if not isinstance(tree, dict) or depth > 4:
        return None
    if isinstance(tree.get(node_type), dict):
        return tree[node_type]
    for value in tree.values():
        found = _find_node_entry(value, node_type, depth + 1)
        if found:
            return found
    return None


def _cores_in(entry: dict) -> int | None:
    for key in ("cores", "physical_cores", "cores_total", "ncores"):
        if isinstance(entry.get(key), int) and entry[key] > 0:
            return entry[key]
    per_socket = entry.get("cores_per_socket")
    if isinstance(per_socket, int):
        return per_socket * int(entry.get("sockets", 1))
    return None


def run_budget_of(campaign: Campaign) -> float | None:
    """campaign.toml's [campaign] run_budget_s (the local runner's budget for its measuring phase), or
    None when it has none or holds no finite positive number (sbcore/run_budget.py's rule)."""
    return stored_run_budget(campaign.config)[0]
