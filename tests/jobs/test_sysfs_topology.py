"""The sysfs topology reader (hosts without likwid): on small fake sysfs trees of SMT and multi-socket
nodes it gives the CPU lists likwid-topology gives for the same shapes, for every pin strategy; on this
host both sources agree; bad trees are one clear error naming the file."""

import shutil
import subprocess
from pathlib import Path

import pytest

from jobs.pinning import STRATEGIES, pin_cpus
from jobs.sysfs_topology import parse_cpulist, read_sysfs_topology
from jobs.topology import detect_topology, parse_likwid_topology
from sbcore.errors import ScalebenchError

TESTS = Path(__file__).resolve().parent.parent
PIN_STRATEGIES = [s for s in STRATEGIES if s != "none"]


def fake_sysfs(root: Path, cpus: dict[int, tuple[int, int, str]], offline=()) -> Path:
    """cpu number -> (core_id, physical_package_id, thread_siblings_list) as sysfs files under root."""
    for n, (core, socket, siblings) in cpus.items():
        topo = root / f"cpu{n}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{core}\n")
        (topo / "physical_package_id").write_text(f"{socket}\n")
        (topo / "die_id").write_text("0\n")
        (topo / "thread_siblings_list").write_text(f"{siblings}\n")
        if n:
            (root / f"cpu{n}" / "online").write_text("0\n" if n in offline else "1\n")
    (root / "cpufreq").mkdir()  # not a CPU: ignored
    return root


# Linux numbering of a 2-socket, 4-core SMT2 node: cpu n and n+8 are one core's two threads.
TWO_SOCKETS_SMT2 = {n: (n % 4, (n % 8) // 4, f"{n % 8},{n % 8 + 8}") for n in range(16)}
ONE_SOCKET_NO_SMT = {0: (0, 0, "0"), 1: (1, 0, "1")}
# Adjacent numbering (as on many AMD nodes): cpus 0 and 1 are one core's two threads.
ONE_CORE_SMT2 = {0: (0, 0, "0-1"), 1: (0, 0, "0-1")}

SHAPES = [
    (TWO_SOCKETS_SMT2, (TESTS / "fixtures" / "likwid" / "topology-2s-4c-smt2.txt").read_text()),
    (ONE_SOCKET_NO_SMT, (TESTS / "fixtures" / "likwid" / "topology-1s-2c-nosmt.txt").read_text()),
    (ONE_CORE_SMT2, (TESTS / "jobs" / "likwid_standin" / "likwid-topology").read_text()),
]


def assert_same_lists(sysfs, likwid):
    assert len(sysfs.hwthreads) == len(likwid.hwthreads)
    assert (sysfs.sockets, sysfs.cores, sysfs.threads_per_core) == (
        likwid.sockets,
        likwid.cores,
        likwid.threads_per_core,
    )
    assert sysfs.siblings() == likwid.siblings()
    for strategy in PIN_STRATEGIES:
        if strategy == "smt-siblings" and likwid.threads_per_core < 2:
            continue
        for threads in range(1, len(likwid.hwthreads) + 2):
            assert pin_cpus(strategy, threads, sysfs) == pin_cpus(strategy, threads, likwid), (
                strategy,
                threads,
            )


@pytest.mark.parametrize(("cpus", "likwid_output"), SHAPES, ids=["2s-4c-smt2", "1s-2c-nosmt", "1c-smt2"])
def test_fake_sysfs_gives_likwids_lists(tmp_path, cpus, likwid_output):
    sysfs = read_sysfs_topology(fake_sysfs(tmp_path, cpus))
    assert sysfs.source == "sysfs"
    assert_same_lists(sysfs, parse_likwid_topology(likwid_output))


def test_offline_and_disallowed_cpus_are_not_available(tmp_path):
    root = fake_sysfs(tmp_path, TWO_SOCKETS_SMT2, offline={15})
    topo = read_sysfs_topology(root, allowed=set(range(12)) | {15})
    assert [h.hwthread for h in topo.hwthreads] == list(range(12))
    # thread index stays the hardware's: cpus 8..11 are the second threads of cores 0..3
    assert [h.thread for h in topo.hwthreads[8:]] == [1, 1, 1, 1]


def test_parse_cpulist():
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("5") == [5]


def test_malformed_tree_is_one_error_naming_the_file(tmp_path):
    root = fake_sysfs(tmp_path, ONE_SOCKET_NO_SMT)
    (root / "cpu1" / "topology" / "core_id").write_text("one\n")
    with pytest.raises(ScalebenchError, match=r"cpu1/topology: malformed topology file"):
        read_sysfs_topology(root)
    (root / "cpu1" / "topology" / "core_id").unlink()
    with pytest.raises(ScalebenchError, match=r"cpu1/topology/core_id: cannot read the CPU topology"):
        read_sysfs_topology(root)


def test_empty_tree_is_an_error(tmp_path):
    with pytest.raises(ScalebenchError, match="no available hardware threads"):
        read_sysfs_topology(tmp_path)


@pytest.mark.skipif(shutil.which("likwid-topology") is None, reason="likwid is not installed")
def test_both_sources_agree_on_this_host():
    out = subprocess.run(["likwid-topology", "-O"], capture_output=True, text=True, timeout=60, check=True)
    assert_same_lists(read_sysfs_topology(), parse_likwid_topology(out.stdout))


def test_without_likwid_on_path_detection_reads_sysfs(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    topo = detect_topology()
    assert topo.source == "sysfs" and topo == read_sysfs_topology()
