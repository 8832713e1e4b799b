"""build/bin/machine-probe, the machine-state probe around a program's run (kernels/programs/machine_probe.c):
its chains on each listed CPU and the cache-line round trip between the first CPU and each other one,
before and after, in the "probe" field a kernel's record carries."""

import json
import os
import subprocess

import pytest

from sbcore.install import bin_dir


def probe(cpus: str) -> dict:
    done = subprocess.run(
        [str(bin_dir() / "machine-probe"), cpus], input="0.001\n", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ready"
    return json.loads(lines[-1])["probe"]


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs 2 CPUs")
def test_two_cpus_get_their_chains_and_a_round_trip_before_and_after():
    found = probe("0,1")
    for side in ("before", "after"):
        sample = found[side]
        assert sample["cpus"] == [0, 1]
        assert all(t > 0 for t in sample["int_mul_s"] + sample["fp_tput_s"] + sample["int_alu_s"])
        first, other = sample["xfer_s"]
        # no round trip from the first CPU to itself; one to the other, at least a nanosecond and
        # at most the ping's budget of 2 ms per sample (sb_xfer.h)
        assert first is None and 1e-9 < other < 2e-3, sample["xfer_s"]
    assert found["min_s"]["xfer"] <= found["max_s"]["xfer"]
    assert found["runq_wait_s"] == pytest.approx(0.001)


def test_one_cpu_or_the_same_cpu_twice_has_no_round_trip():
    assert probe("0")["before"]["xfer_s"] == [None]
    twice = probe("0,0")
    assert twice["before"]["xfer_s"] == [None, None] and twice["min_s"]["xfer"] is None


def test_a_cpu_the_probe_cannot_be_placed_on_is_left_unmeasured():
    last = os.cpu_count() + 7  # no such CPU: neither its chains nor its round trip are measured
    found = probe(f"0,{last}")
    assert found["before"]["cpus"] == [0, last]
    assert found["before"]["xfer_s"] == [None, None] and found["before"]["int_mul_s"][1] is None
