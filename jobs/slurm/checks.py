"""Everything checked before the first real sbatch: node types, Slurm clients, the controller, placements.

`sbatch --test-only` validates partitions, constraints and whole array jobs without queueing anything.
"""

import sys
from dataclasses import replace
from pathlib import Path

from jobs.config import NODES_TOML, NodeType, load_node_types
from jobs.site_options import SiteOptions
from jobs.slurm import client
from jobs.slurm.scripts import placement_lines
from sbcore.errors import ScalebenchError, UsageError

CLIENTS = ("sbatch", "scancel", "squeue", "scontrol")


def slurm_node_types(
    names, nodes_path: Path = NODES_TOML, site: SiteOptions | None = None
) -> dict[str, NodeType]:
    """The named node types from nodes.toml, each of which must say where Slurm runs it; site options
    from the command line override those of nodes.toml."""
    known = load_node_types(nodes_path)
    selected = {}
    for name in names:
        if name not in known:
            raise UsageError(f"--node-types: {name!r} is not in {nodes_path} (known: {', '.join(known)})")
        node = known[name]
        if not (node.partition or node.constraint):
            raise UsageError(
                f"{nodes_path}: node_types.{name} has no partition or constraint: it cannot run under Slurm"
            )
        selected[name] = replace(node, site=node.site.merged(site)) if site else node
    return selected


def check_controller() -> None:
    """Client commands on PATH and slurmctld answering."""
    client.require_clients(*CLIENTS)
    client.ping_controller()


def test_only(node: NodeType, options: list[str], script: Path | None = None, out=sys.stdout) -> None:
    """`sbatch --test-only`: fail on anything Slurm would reject, except that every node is drained/down.

    Slurm answers "Requested node configuration is not available" both for a shape no node can hold and
    for a node type whose nodes are all drained right now; only the first is an error (a drained
    node type's jobs pend until it returns, which is what a real sbatch would do).
    """
    try:
        client.sbatch(options, script, test_only=True)
    except ScalebenchError as err:
        if "node configuration is not available" in str(err):
            usable, total = client.available_nodes(node.partition, node.constraint)
            if total and not usable:
                print(
                    f"warning: node type {node.name}: all {total} node(s) are drained or down now; "
                    "its jobs will pend until one returns",
                    file=out,
                )
                return
            if not total:
                where = " ".join(placement_lines(node))
                raise ScalebenchError(
                    f"node type {node.name}: no Slurm node matches {where} ({err})"
                ) from None
        raise ScalebenchError(f"node type {node.name}: Slurm rejects it: {err}") from None


def check_placements(nodes: dict[str, NodeType], out=sys.stdout) -> None:
    """Every partition/constraint is known to Slurm (nothing is queued by this)."""
    for node in nodes.values():
        test_only(node, [*placement_lines(node), "--nodes=1", "--exclusive", "--wrap=true"], out=out)


def check_throttle(throttle: int) -> int:
    if throttle < 1:
        raise UsageError(f"--throttle {throttle}: must be >= 1 (tasks running at once per node type)")
    return throttle
