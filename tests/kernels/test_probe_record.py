"""The machine-state probe in every kernel's measured records (C, Fortran, MPI): its latency chains and
throughput blocks (FP and integer ALU) timed on each CPU of the case before and after the repetition,
chained within a process, never in warm-ups, with each chain's fastest and slowest time written beside
the arrays."""

import json
import os
import re
import shutil
import subprocess

import pytest

from ..fortran_mpi.mpi_run import mpirun_records
from ..kernel_records import run_records

ARGS = {"mandelbrot": ["--width", 32, "--height", 24, "--max-iter", 100], "mcpi": ["--samples", 5000]}
CHAINS = ("int_mul", "fp_lat", "fp_tput", "int_alu")
BINARIES = ["mandelbrot-c-serial", "mcpi-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp", "mcpi-f-serial"]


def check_probe(records: list[dict], cpus: set[int] | None):
    measured = [r for r in records if not r["warmup"]]
    assert all("probe" not in r for r in records if r["warmup"])
    for previous, record in zip([None, *measured], measured, strict=False):
        probe = record["probe"]
        assert all(probe[f"{chain}_iters"] > 0 for chain in CHAINS)
        for side in ("before", "after"):
            sample = probe[side]
            n = len(sample["cpus"])
            assert n >= 1 and all(len(sample[f"{chain}_s"]) == n for chain in CHAINS)
            assert all(t is not None and 0 < t < 1 for chain in CHAINS for t in sample[f"{chain}_s"])
            if cpus is not None:
                assert set(sample["cpus"]) == cpus
        for chain in CHAINS:  # the kernel's own extremes are the arrays'
            times = probe["before"][f"{chain}_s"] + probe["after"][f"{chain}_s"]
            assert probe["min_s"][chain] == min(times) and probe["max_s"][chain] == max(times)
        if previous is not None:  # one probe between two repetitions serves both
            assert probe["before"] == previous["probe"]["after"]
        assert probe["runq_wait_s"] is None or probe["runq_wait_s"] >= 0


@pytest.mark.parametrize("binary", BINARIES)
def test_every_model_probes_its_cpus(kernel, record_validator, binary):
    name, _, model = binary.split("-")
    threads = [] if model == "serial" else ["--threads", 2]
    # The pin list the runner (and likwid-pin) exports names the CPUs to probe.
    env = {"LIKWID_HWTHREADS": "0,1"} if len(os.sched_getaffinity(0)) >= 2 else {}
    records = run_records(kernel(binary), *ARGS[name], *threads, "--reps", 3, "--warmup", 1, env=env)
    for record in records:
        record_validator.validate(record)
    check_probe(records, {0, 1} if env else None)


def test_mpi_records_carry_the_probe(kernel, record_validator):
    records = mpirun_records(2, kernel("mcpi-c-mpi"), *ARGS["mcpi"], "--reps", 2)
    for record in records:
        record_validator.validate(record)
    check_probe(records, None)


# A loop of one kind of instruction (the multiply of the FP block beside adds; the xor of the integer-ALU
# block beside adds and rotates), then dec and jne back to its start.
CHAIN_LOOP = re.compile(
    r"^\s*([0-9a-f]+):\s+(imul|mulsd|add|mulpd|xor)\s[^\n]*\n(?:\s*[0-9a-f]+:\s+(?:\2|addpd|add|rol)\s[^\n]*\n)*"
    r"\s*[0-9a-f]+:\s+dec\s+%\w+\n\s*([0-9a-f]+):\s+jne\s+([0-9a-f]+)\b",
    re.M,
)


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump (binutils)")
@pytest.mark.parametrize("binary", [*BINARIES, "mcpi-c-serial", "mandelbrot-c-omp", "mandelbrot-c-mpi"])
def test_timing_chains_start_on_a_cache_line(kernel, binary):
    """The probe's integer and floating-point chains, its throughput blocks (multiplies and adds; xors,
    adds and rotates) and the clock's add chain each start on a 64-byte line in every binary: where
    such a small loop straddled two lines it ran up to 1.6x slower in some binaries, which looked
    like a disturbed machine."""
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(kernel(binary))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loops = {
        (m.group(2), int(m.group(1), 16), int(m.group(3), 16))
        for m in CHAIN_LOOP.finditer(listing)
        if m.group(1) == m.group(4)
    }
    kinds = {kind for kind, *_ in loops}
    assert {"imul", "mulsd", "add", "mulpd", "xor"} <= kinds, f"chains not found in {binary}: {sorted(loops)}"
    # Starts a line, and its closing 2-byte jump ends in the same line.
    assert all(start % 64 == 0 and jump + 2 <= start + 64 for _, start, jump in loops), [
        (k, hex(s), hex(j)) for k, s, j in loops
    ]


TWO_CPUS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")
XFER_BINARIES = ["mcpi-c-pthreads", "mcpi-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp"]


def transfers(record: dict, side: str) -> list:
    return record["probe"][side]["xfer_s"]


@TWO_CPUS
@pytest.mark.parametrize("binary", XFER_BINARIES)
def test_workers_pinned_by_the_harness_time_the_cache_line_transfer(kernel, record_validator, binary):
    """Two workers on CPUs 0 and 1: each probe times the round trip between them (entry 1; entry 0 is
    the first CPU itself), a plausible one (a round trip between two CPUs of one machine takes tens
    of nanoseconds to a few microseconds, never 0 or a millisecond on an idle pair), and min_s /
    max_s carry its fastest and slowest. The pthreads pool exists only after the first repetition, so
    that process's first probe has no pair to time."""
    name = binary.split("-")[0]
    records = run_records(
        kernel(binary), *ARGS[name], "--threads", 2, "--reps", 3, env={"SB_PIN_CPUS": "0,1"}
    )
    for record in records:
        record_validator.validate(record)
        probe = record["probe"]
        assert probe["xfer_round_trips"] > 0
        assert probe["after"]["cpus"] == [0, 1]
        timed = [t for side in ("before", "after") for t in transfers(record, side) if t is not None]
        assert all(transfers(record, side)[0] is None for side in ("before", "after"))
        assert timed and all(5e-9 < t < 1e-3 for t in timed), timed
        assert probe["min_s"]["xfer"] == min(timed) and probe["max_s"]["xfer"] == max(timed)
    first = transfers(records[0], "before")
    assert first == ([None, None] if "pthreads" in binary else first) and first[0] is None


@pytest.mark.parametrize(
    ("binary", "threads"), [("mcpi-c-serial", []), ("mcpi-c-pthreads", ["--threads", 1])]
)
def test_one_cpu_times_no_transfer(kernel, binary, threads):
    records = run_records(kernel(binary), *ARGS["mcpi"], *threads, "--reps", 2, env={"SB_PIN_CPUS": "0"})
    for record in records:
        probe = record["probe"]
        assert probe["min_s"]["xfer"] is None and probe["max_s"]["xfer"] is None
        assert transfers(record, "after") == [None]


def test_mpi_ranks_time_no_transfer(kernel):
    for record in mpirun_records(2, kernel("mcpi-c-mpi"), *ARGS["mcpi"], "--reps", 2):
        assert record["probe"]["max_s"]["xfer"] is None


@TWO_CPUS
def test_a_busy_partner_cpu_ends_the_transfer_timing_within_its_budget(kernel):
    """Another process busy on CPU 1: the partner answers once per time slice, so the ping stops
    after its budget (a few ms) instead of timing every round trip; the slow trips are the result."""
    hog = subprocess.Popen(["taskset", "-c", "1", "sh", "-c", "while :; do :; done"])
    try:
        proc = subprocess.run(
            [str(kernel("mcpi-c-pthreads")), *map(str, ARGS["mcpi"]), "--threads", "2", "--reps", "4"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "SB_PIN_CPUS": "0,1", "SB_WAIT_POLICY": ""},
        )
    finally:
        hog.kill()
        hog.wait()
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and len(records) == 4, proc.stderr[-2000:]
    timed = [r["probe"]["max_s"]["xfer"] for r in records[1:]]
    assert all(t is not None and t > 0 for t in timed), timed
