"""smt-c-pthreads: each variant computes a timing-free checksum, workers land where --cpus says,
a pause worker spins only while a computing worker runs, and bad input exits 2."""

import pytest

from ..kernel_records import assert_usage_error, run_raw, run_records

BINARY = "smt-c-pthreads"
SMALL = ["--repeat", "20000", "--buffer-kib", "256", "--load", "4"]


@pytest.mark.parametrize("variant", ["int_mem", "dbl_mem", "int_dbl", "mcpi"])
def test_each_variant_is_deterministic_and_sane(kernel, record_validator, variant):
    records = run_records(kernel(BINARY), "--variant", variant, *SMALL, "--reps", "2")
    for r in records:
        record_validator.validate(r)
    assert len({r["checksum"] for r in records}) == 1
    r = records[0]["result"]
    assert r["computing_workers"] == 1 and r["samples"] == 1
    assert 0 < r["min_s"] <= records[0]["wall_s"] + 1e-3


def test_variants_differ_and_mcpi_estimates_pi(kernel):
    sums = {
        v: run_records(kernel(BINARY), "--variant", v, *SMALL)[0]["checksum"] for v in ("int_mem", "dbl_mem")
    }
    assert sums["int_mem"] != sums["dbl_mem"]
    (r,) = run_records(kernel(BINARY), "--variant", "mcpi", "--repeat", "200000")
    assert r["result"]["pi_worker0"] == pytest.approx(3.1416, abs=0.02)


def test_workers_are_pinned_to_the_cpu_list_and_pause_spins_beside_a_worker(kernel):
    (r,) = run_records(kernel(BINARY), "--threads", "2", "--variant", "mcpi,pause", "--cpus", "0,1", *SMALL)
    assert r["placement"] == [[0, 0], [1, 1]]
    assert r["result"]["computing_workers"] == 1 and r["result"]["pause_workers"] == 1
    # the spinner stops when the computing worker is done: the run is not much longer than the work
    assert r["wall_s"] < 10 * r["result"]["max_s"] + 0.05


def test_independent_workers_give_the_same_work_each(kernel):
    one = run_records(kernel(BINARY), "--variant", "int_dbl", *SMALL)[0]
    two = run_records(kernel(BINARY), "--threads", "2", "--variant", "int_dbl", *SMALL)[0]
    assert two["work"] == 2 * one["work"] == 2
    assert two["result"]["computing_workers"] == 2


def test_nice_favours_worker0_on_one_cpu(kernel):
    """P3's control: two workers on one logical CPU, worker 1 at nice 19, lets worker 0 finish first."""
    # Long enough (~0.1 s of work per worker) that time slices, not wake-up latency, decide who runs.
    args = ["--threads", "2", "--variant", "mcpi", "--repeat", "20000000", "--cpus", "0,0"]
    equal = run_records(kernel(BINARY), *args, "--nices", "0,0")[0]["result"]
    favoured = run_records(kernel(BINARY), *args, "--nices", "0,19")[0]["result"]
    assert favoured["worker0_s"] < 0.85 * equal["worker0_s"]
    assert favoured["worker0_s"] == favoured["min_s"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--variant", "pause"], ["--variant", "'pause'", "no computing worker"]),
        (["--variant", "int_mem,fast"], ["--variant", "'int_mem,fast'", "'fast'"]),
        (["--cpus", "0,x"], ["--cpus", "'0,x'"]),
        (["--repeat", "0"], ["--repeat", "'0'"]),
        (["--load", "-1"], ["--load", "'-1'"]),
        (["--threads", "65"], ["--threads", "'65'"]),
        (["--nices", "0,20"], ["--nices", "'0,20'", "0..19"]),
    ],
)
def test_bad_input_exits_2_with_one_line(kernel, args, expected):
    assert_usage_error(run_raw(kernel(BINARY), *args), BINARY, expected)
