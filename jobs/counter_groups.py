"""Which likwid performance groups exist where: per architecture from likwid's group files (plan time,
for node types that name their `arch`), and on the node itself from `likwid-perfctr -a` (probed once per
host, checked before a counted run). A group missing for the node's architecture is an error that lists
the groups that exist there."""

import subprocess
from pathlib import Path

PERFGROUPS = Path("/usr/share/likwid/perfgroups")
LIST_GROUPS = ["likwid-perfctr", "-a"]


def architectures(root: Path = PERFGROUPS) -> list[str]:
    """likwid's architecture names (the group directories: zen3, CLX, skylakeX, arm8_tx2, power9, ...)."""
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def arch_groups(arch: str, root: Path = PERFGROUPS) -> list[str]:
    return sorted(p.stem for p in (root / arch).glob("*.txt"))


def node_groups(timeout_s: float = 30) -> list[str] | None:
    """The groups likwid-perfctr offers on this node (its architecture, plus the site's and user's own
    group files), or None when it cannot say. `-a` needs no access to the counters."""
    try:
        out = subprocess.run(LIST_GROUPS, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    lines = out.stdout.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("----")]
    if not rules:
        return None
    groups = {line.split()[0] for line in lines[rules[0] + 1 :] if line.strip()}
    return sorted(groups) or None


def missing_group(group: str, groups: list[str], where: str) -> str | None:
    """None when `group` is in `groups`, else the one-line reason naming the groups that exist."""
    if group in groups:
        return None
    return f"counter group {group!r} does not exist {where}; groups there: {', '.join(sorted(groups))}"


def check_planned_groups(check, exp, node, no_counters: str, root: Path = PERFGROUPS) -> None:
    """Plan time: every counter group of the experiment exists for the node type's architecture (only
    for node types with counters = true and an `arch`)."""
    if not node.counters or not node.arch:
        return
    groups = arch_groups(node.arch, root)
    for s, sweep in enumerate(exp.sweeps):
        for i, group in enumerate(sweep.axes["counter_group"]):
            reason = group != no_counters and missing_group(group, groups, f"for arch {node.arch}")
            if reason:
                check.fail(f"sweep[{s}].counter_group[{i}]", group, f"node type {node.name}: {reason}")
