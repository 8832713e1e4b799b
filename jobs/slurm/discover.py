"""Node types from the cluster: one config/nodes.toml block per distinct node configuration Slurm reports.

A configuration is (partition, features, sockets, cores per socket, threads per core, memory); nodes that
share one are one node type. The blocks are a proposal for the user to review and name, not a file
scalebench writes itself.
"""

import re
from dataclasses import dataclass

from jobs.slurm import client
from jobs.toml_write import dumps
from sbcore.errors import ScalebenchError

_FIELD = re.compile(r"(\w+)=(\S*)")


@dataclass(frozen=True)
class NodeConfig:
    partition: str
    features: tuple[str, ...]
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    memory_mb: int


def parse_nodes(text: str) -> dict[str, dict[str, str]]:
    """`scontrol show node --oneliner` -> node name -> its Key=Value fields."""
    nodes = {}
    for line in text.splitlines():
        fields = dict(_FIELD.findall(line))
        if "NodeName" in fields:
            nodes[fields["NodeName"]] = fields
    return nodes


def _int(fields: dict, key: str, node: str) -> int:
    value = fields.get(key, "")
    if not value.isdigit():
        raise ScalebenchError(f"scontrol show node: node {node}: {key} = {value!r}: not a number")
    return int(value)


def node_configs(nodes: dict[str, dict], partitions: dict[str, list[str]], only: str | None):
    """NodeConfig -> names of its nodes, in the order Slurm lists them."""
    configs: dict[NodeConfig, list[str]] = {}
    for name, fields in nodes.items():
        features = fields.get("AvailableFeatures", "")
        for partition in partitions.get(name, []):
            if only and partition != only:
                continue
            config = NodeConfig(
                partition=partition,
                features=tuple(f for f in features.split(",") if f and f != "(null)"),
                sockets=_int(fields, "Sockets", name),
                cores_per_socket=_int(fields, "CoresPerSocket", name),
                threads_per_core=_int(fields, "ThreadsPerCore", name),
                memory_mb=_int(fields, "RealMemory", name),
            )
            configs.setdefault(config, []).append(name)
    return configs


def _type_name(config: NodeConfig, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]", "-", config.partition)
    name = (
        base
        if base not in taken
        else f"{base}-{config.sockets}x{config.cores_per_socket}x{config.threads_per_core}"
    )
    number = 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    taken.add(name)
    return name


def render_blocks(configs: dict[NodeConfig, list[str]]) -> str:
    taken: set[str] = set()
    blocks = []
    for config, names in configs.items():
        shown = ", ".join(names[:4]) + (f", ... ({len(names)} nodes)" if len(names) > 4 else "")
        table = {
            "description": f"Slurm partition {config.partition}: {shown}",
            "partition": config.partition,
            **({"constraint": "&".join(config.features)} if config.features else {}),
            "sockets": config.sockets,
            "cores_per_socket": config.cores_per_socket,
            "threads_per_core": config.threads_per_core,
            "counters": False,
        }
        body = dumps({"node_types": {_type_name(config, taken): table}})
        blocks.append(
            f"# {len(names)} node(s), RealMemory {config.memory_mb} MB each. Review and rename; set\n"
            "# counters = true where likwid-perfctr may read the counters; add what your site requires:\n"
            '# account, qos, time_limit, mem (e.g. mem = "0" for all of it), reservation, sbatch_options.\n'
            + body
        )
    return "\n".join(blocks)


def discovered_blocks(partition: str | None = None) -> str:
    nodes = parse_nodes(client.show_nodes())
    configs = node_configs(nodes, client.node_partitions(), partition)
    if not configs:
        where = f"in partition {partition!r}" if partition else "at all"
        raise ScalebenchError(f"Slurm reports no nodes {where} (sinfo --Node)")
    return render_blocks(configs)
