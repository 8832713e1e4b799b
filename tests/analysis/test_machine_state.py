"""The probe columns of many records read at once (records/machine_state.py) equal probe_columns
record by record, for the documented shape (with the kernel's own fastest and slowest times, and without
them as older kernels wrote it) and for every odd one (which falls back to it)."""

import json

import numpy as np
import pytest

from analysis.records.machine_state import machine_state_columns, probe_columns


def side(cpus, rng, chains=("int_mul", "fp_lat", "fp_tput", "int_alu")):
    """Per-CPU chain times, and the cache-line round trips with the first CPU (none for it)."""
    transfers = [None] + [float(t) for t in 5e-8 + 5e-8 * rng.random(len(cpus) - 1)] if len(cpus) else []
    return {"cpus": list(cpus), "xfer_s": transfers} | {
        f"{c}_s": [float(t) for t in 3e-4 + 1e-4 * rng.random(len(cpus))] for c in chains
    }


def usual_probes(rng, n=40) -> list:
    out = []
    for k in range(n):
        cpus = range(int(rng.integers(1, 9)))
        out.append(
            {
                "int_mul_iters": 400000,
                "fp_lat_iters": 400000,
                "fp_tput_iters": 500000,
                # within a kernel process a repetition's before is the previous one's after
                "before": out[-1]["after"] if k % 3 and out else side(cpus, rng),
                "after": side(cpus if k % 5 else [7, 8], rng),
                "runq_wait_s": None if k % 7 == 0 else float(rng.random() * 1e-3),
            }
        )
    return out


def _rows(probes: list) -> dict[str, list]:
    raws = [json.dumps(p).encode() for p in probes]
    return machine_state_columns(raws)


def _reference(probes: list) -> dict[str, list]:
    rows = [probe_columns(p) for p in probes]
    return {key: [row[key] for row in rows] for key in probe_columns(None)}


def test_usual_probes_equal_the_record_by_record_columns():
    rng = np.random.default_rng(1)
    probes = usual_probes(rng)
    probes[3] = None  # no probe
    probes[4]["after"] = None  # one side missing
    probes[5]["before"] = {}
    probes[6]["before"]["fp_tput_s"] = []  # nothing timed on one side
    del probes[7]["after"]["fp_tput_s"]  # an older probe without the throughput block
    probes[8]["before"]["int_mul_s"][0] = None  # a CPU the thread could not move to
    probes[9]["before"] = probes[9]["after"] = {
        "cpus": [],
        "int_mul_s": [None],
        "fp_lat_s": [],
        "fp_tput_s": [],
    }
    got, expected = _rows(probes), _reference(probes)
    assert list(got) == list(expected)
    assert got == expected
    assert got["probe_int_mul_min_s"][9] is None and got["probe_cpus"][9] is None


ODD = {
    "text time": lambda p: p["before"]["int_mul_s"].__setitem__(0, "0.5"),
    "boolean time": lambda p: p["before"]["fp_lat_s"].__setitem__(0, True),
    "nested time": lambda p: p["after"]["fp_tput_s"].append([1.0, 2.0]),
    "probe not an object": None,
}


@pytest.mark.parametrize("odd", ODD.values(), ids=ODD.keys())
def test_odd_probes_are_read_as_probe_columns_reads_them(odd):
    probes = usual_probes(np.random.default_rng(2), n=6)
    if odd is None:
        probes[2] = 5
    else:
        odd(probes[2])
    assert _rows(probes) == _reference(probes)


def test_a_probe_written_over_several_lines_is_read_whole():
    probes = usual_probes(np.random.default_rng(3), n=4)
    raws = [
        json.dumps(p, indent=1).encode() if k == 1 else json.dumps(p).encode() for k, p in enumerate(probes)
    ]
    assert machine_state_columns(raws) == _reference(probes)


def with_extremes(probe: dict) -> dict:
    """The probe as today's kernels write it: each chain's extremes over both sides beside the arrays."""
    sides = [probe["before"], probe["after"]]
    times = {
        c: [t for s in sides for t in s.get(f"{c}_s", []) if t is not None]
        for c in ("int_mul", "fp_lat", "fp_tput", "int_alu", "xfer")
    }
    return probe | {
        "min_s": {c: min(t, default=None) for c, t in times.items()},
        "max_s": {c: max(t, default=None) for c, t in times.items()},
    }


def test_the_kernels_extremes_are_read_without_the_arrays():
    probes = [with_extremes(p) for p in usual_probes(np.random.default_rng(4))]
    got = _rows(probes)
    assert got == _reference(probes)
    # The kernel's numbers are the ones used: arrays that say otherwise are not read.
    probes[0]["min_s"]["int_mul"] = 1e-9
    probes[0]["before"]["int_mul_s"] = probes[0]["after"]["int_mul_s"] = [5.0]
    got = _rows(probes)
    assert got["probe_int_mul_min_s"][0] == 1e-9 and got["probe_int_mul_max_s"][0] < 1.0
    assert got == _reference(probes)


def test_probes_of_kernels_before_the_integer_alu_block_have_no_time_for_it():
    """Extremes and arrays without the integer-ALU block: its columns are None, the others the kernel's
    own, and the probe is not sent to be derived from its arrays."""
    probes = usual_probes(np.random.default_rng(6), n=8)
    for probe in probes:
        for name in ("before", "after"):
            probe[name].pop("int_alu_s", None)  # before may be the previous after
    probes = [with_extremes(p) for p in probes]
    assert all("int_alu" in p["min_s"] for p in probes)  # with_extremes wrote it as None
    for probe in probes:
        del probe["min_s"]["int_alu"], probe["max_s"]["int_alu"]
    got = _rows(probes)
    assert got == _reference(probes)
    assert got["probe_int_alu_min_s"] == got["probe_int_alu_max_s"] == [None] * 8
    assert got["probe_fp_tput_max_s"][0] == probes[0]["max_s"]["fp_tput"]


def test_records_with_and_without_the_kernels_extremes_mix():
    probes = usual_probes(np.random.default_rng(5), n=12)
    probes = [with_extremes(p) if k % 2 else p for k, p in enumerate(probes)]
    probes[1]["max_s"]["fp_tput"] = None  # a chain the kernel has no time of: from the arrays
    del probes[3]["min_s"]  # half of them
    probes[5]["min_s"] = None
    got = _rows(probes)
    assert got == _reference(probes)
    assert got["probe_fp_tput_max_s"][1] == max(
        probes[1]["before"]["fp_tput_s"] + probes[1]["after"]["fp_tput_s"]
    )


@pytest.mark.parametrize("odd", ["0.5", True, [1.0], {"t": 1.0}])
def test_odd_extremes_are_read_as_probe_columns_reads_them(odd):
    probes = [with_extremes(p) for p in usual_probes(np.random.default_rng(6), n=6)]
    probes[2]["min_s"]["fp_lat"] = odd
    got = _rows(probes)
    assert got == _reference(probes)
    assert got["probe_fp_lat_min_s"][2] == min(
        probes[2]["before"]["fp_lat_s"] + probes[2]["after"]["fp_lat_s"]
    )
