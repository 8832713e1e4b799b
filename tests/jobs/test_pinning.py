"""CPU lists per pin strategy for synthetic topologies (likwid-topology -O fixtures); the placement check."""

from pathlib import Path

import pytest

from jobs.pinning import pin_cpus, placement_violations, strategy_order
from jobs.topology import parse_likwid_topology
from sbcore.errors import ScalebenchError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "likwid"


def topology(name: str):
    return parse_likwid_topology((FIXTURES / name).read_text(), name)


def test_parses_one_socket_without_smt():
    topo = topology("topology-1s-2c-nosmt.txt")
    assert (topo.sockets, topo.cores, topo.threads_per_core) == (1, 2, 1)
    assert topo.siblings() == [[0], [1]]


def test_parses_two_sockets_with_smt_siblings():
    topo = topology("topology-2s-4c-smt2.txt")
    assert (topo.sockets, topo.cores, topo.threads_per_core, len(topo.hwthreads)) == (2, 8, 2, 16)
    # Linux numbering: cpu n and n+8 are the two hardware threads of one core.
    assert topo.siblings() == [[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]


TWO_SOCKET_ORDERS = {
    "compact": [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15],
    "cores": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    "scatter": [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15],
    "smt-siblings": [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15],
}


@pytest.mark.parametrize("strategy", sorted(TWO_SOCKET_ORDERS))
def test_strategy_order_two_sockets_smt2(strategy):
    assert strategy_order(strategy, topology("topology-2s-4c-smt2.txt")) == TWO_SOCKET_ORDERS[strategy]


def test_partial_lists_two_sockets():
    topo = topology("topology-2s-4c-smt2.txt")
    assert pin_cpus("compact", 4, topo) == [0, 8, 1, 9]  # two full cores
    assert pin_cpus("cores", 4, topo) == [0, 1, 2, 3]  # four cores of socket 0, one thread each
    assert pin_cpus("scatter", 4, topo) == [0, 4, 1, 5]  # alternating sockets
    assert pin_cpus("smt-siblings", 2, topo) == [0, 8]  # one sibling pair


def test_smt4_siblings_come_in_pairs_not_fours():
    text = "TABLE,Topology,4\nHWThread Thread Core Die Socket Available\n"
    text += "".join(f"{i} {i} 0 0 0 *\n" for i in range(4))
    topo = parse_likwid_topology(text)
    assert strategy_order("smt-siblings", topo) == [0, 1, 2, 3]
    assert strategy_order("cores", topo) == [0, 1, 2, 3]


@pytest.mark.parametrize("strategy", ["compact", "cores", "scatter"])
def test_one_socket_no_smt_and_wrapping(strategy):
    topo = topology("topology-1s-2c-nosmt.txt")
    assert pin_cpus(strategy, 1, topo) == [0]
    assert pin_cpus(strategy, 2, topo) == [0, 1]
    # More threads than CPUs: the list stays the CPUs, workers wrap round-robin over it.
    assert pin_cpus(strategy, 5, topo) == [0, 1]
    placement = [[0, 0], [1, 1], [0, 0], [1, 1], [0, 0]]
    assert placement_violations([0, 1], placement) == []


def test_unavailable_hwthreads_are_not_used():
    text = "TABLE,Topology,2\nHWThread Thread Core Die Socket Available\n0 0 0 0 0 *\n1 0 1 0 0\n"
    assert [h.hwthread for h in parse_likwid_topology(text).hwthreads] == [0]


def test_violations_name_worker_plan_and_seen():
    placement = [[0, 0], [0, 1], [1, 1]]
    assert placement_violations([0, 1], placement) == [
        {"worker": 1, "planned": 1, "seen": [0, 1]},
        {"worker": 2, "planned": 0, "seen": [1, 1]},
    ]


@pytest.mark.parametrize(
    "text",
    ["no table here\n", "TABLE,Topology,2\nHWThread Thread Core Die Socket Available\n0 0 0 0 0 *\n"],
    ids=["missing", "truncated"],
)
def test_bad_topology_output_is_a_clear_error(text):
    with pytest.raises(ScalebenchError, match="likwid-topology"):
        parse_likwid_topology(text)
