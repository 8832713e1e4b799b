"""Counters are checked, not trusted: the group against the node's architecture (plan time from likwid's
group files, run time from the node's own likwid-perfctr), the CSV's hardware threads against the CPUs
the case measured."""

import shutil
from pathlib import Path

import pytest

from jobs.config import load_experiment, load_node_types
from jobs.counter_groups import PERFGROUPS, arch_groups
from jobs.counter_record import counters_from_csv
from jobs.plan import plan_cases
from jobs.runcase import CaseError, Context, build_command
from jobs.topology import parse_likwid_topology
from sbcore.errors import UsageError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "likwid"
pytestmark = pytest.mark.skipif(
    not (PERFGROUPS / "CLX").is_dir(), reason=f"likwid group files absent ({PERFGROUPS})"
)


def nodes(tmp_path, arch_line: str, counters: str = "true"):
    path = tmp_path / "nodes.toml"
    path.write_text(f'[node_types.n]\ndescription = "n"\ndetect = true\ncounters = {counters}\n{arch_line}\n')
    return load_node_types(path)


def test_arch_is_validated_against_likwids_architectures(tmp_path):
    assert nodes(tmp_path, 'arch = "zen3"')["n"].arch == "zen3"
    with pytest.raises(UsageError, match=r"nodes.toml: node_types.n.arch = 'zen9': unknown likwid arch.*CLX"):
        nodes(tmp_path, 'arch = "zen9"')
    with pytest.raises(UsageError, match=r"node_types.n.arch = 3: must be a non-empty string"):
        nodes(tmp_path, "arch = 3")


def plan(tmp_path, node_types, group: str):
    path = tmp_path / "e.toml"
    path.write_text(
        f'description = "e"\nnode_types = ["n"]\n[[sweep]]\nbinary = ["mcpi-c-omp"]\n'
        f'counter_group = ["none", "{group}"]\nparams = {{ samples = [1000] }}\n'
    )
    return plan_cases(load_experiment(path, node_types), node_types)


def test_plan_checks_groups_for_the_node_types_architecture(tmp_path, bin_dir):
    # CPI is a zen3 group but not a Cascade Lake one: the node's architecture decides.
    assert len(plan(tmp_path, nodes(tmp_path, 'arch = "zen3"'), "CPI")) == 2
    with pytest.raises(UsageError) as err:
        plan(tmp_path, nodes(tmp_path, 'arch = "CLX"'), "CPI")
    message = str(err.value)
    assert "e.toml: sweep[0].counter_group[1] = 'CPI': node type n:" in message
    assert "does not exist for arch CLX; groups there: " + ", ".join(arch_groups("CLX")) in message
    # Without counters (or without arch) nothing is checked against an architecture.
    assert len(plan(tmp_path, nodes(tmp_path, 'arch = "CLX"', counters="false"), "CPI")) == 2
    assert len(plan(tmp_path, nodes(tmp_path, ""), "CPI")) == 2


TOPO = parse_likwid_topology((FIXTURES / "topology-2s-4c-smt2.txt").read_text()).to_json()
CASE = {
    "case_id": "0123456789ab",
    "index": 0,
    "node_type": "n",
    "binary": "mcpi-c-omp",
    "model": "omp",
    "threads": 2,
    "ranks": 1,
    "pin": "compact",
    "counter_group": "FLOPS_DP",
    "reps": 1,
    "warmup": 0,
    "timeout_s": 10,
    "env": {},
    "argv": ["--threads", "2"],
}


def test_run_time_group_check_lists_the_nodes_groups(tmp_path):
    host = {
        "topology": TOPO,
        "counters": {"available": True, "reason": "ok"},
        "counter_groups": ["CLOCK", "MEM"],
    }
    with pytest.raises(
        CaseError, match=r"'FLOPS_DP' does not exist on host node17; groups there: CLOCK, MEM"
    ):
        build_command(Context(tmp_path, "c", host, "node17"), CASE, 0, env={})
    host["counter_groups"].append("FLOPS_DP")
    cmd = build_command(Context(tmp_path, "c", host, "node17"), CASE, 0, env={})
    assert cmd.counters == {"status": "pending", "group": "FLOPS_DP", "cpus": [0, 8]}
    assert cmd.argv[:3] == ["likwid-perfctr", "-C", "0,8"]


def counted(tmp_path, group: str, cpus: list[int]) -> dict:
    csv = tmp_path / "out.csv"
    shutil.copy(FIXTURES / "perfctr-marker-2threads-FLOPS_DP.csv", csv)
    return counters_from_csv(csv, {"group": group, "cpus": cpus})


def test_csv_of_other_hardware_threads_is_invalid(tmp_path):
    ok = counted(tmp_path, "FLOPS_DP", [1, 0])
    assert ok["status"] == "ok" and "reason" not in ok
    assert ok["likwid"] == {
        "label_style": "HWThread",
        "versions": "5.1+",
        "cpu_type": ok["likwid"]["cpu_type"],
    }
    bad = counted(tmp_path, "FLOPS_DP", [0, 1, 2, 3])
    assert bad["status"] == "invalid"
    assert bad["reason"] == "CSV covers hardware threads 0,1, the case measured CPUs 0,1,2,3"
    assert bad["metrics"] == ok["metrics"]  # kept, but not used as a measurement
    other = counted(tmp_path, "MEM", [0, 1])
    assert (
        other["status"] == "invalid"
        and other["reason"] == "CSV measured group FLOPS_DP, the case asked for MEM"
    )
