"""osbench-c-serial: each OS-overhead operation gives a sane per-operation distribution, the
ping-pong really alternates, and bad input exits 2 with one line."""

import pytest

from ..kernel_records import assert_usage_error, run_raw, run_records

BINARY = "osbench-c-serial"


def one(kernel, *args) -> dict:
    (record,) = run_records(kernel(BINARY), *args)
    return record


def test_records_validate_and_carry_the_distribution(kernel, record_validator):
    record = one(kernel, "--op", "timer", "--ops", "2000", "--batch", "100")
    record_validator.validate(record)
    r = record["result"]
    assert r["op"] == "clock_gettime" and r["samples"] == 20 and r["ops"] == record["work"] == 2000
    assert 0 < r["min_s"] <= r["median_s"] <= r["p99_s"] <= r["max_s"]
    assert r["min_s"] <= r["mean_s"] <= r["max_s"]
    # a vDSO clock read costs nanoseconds, never a millisecond; its steps are at most a microsecond
    assert 1e-10 < r["median_s"] < 1e-5
    assert 0 < r["smallest_step_s"] <= 1e-6
    assert record["params"] == {
        "op": "timer",
        "ops": "2000",
        "batch": "100",
        "bytes": "1024",
        "touch": "no",
        "cpus": "same",
        "policy": "other",
        "mode": "pipe",
    }


@pytest.mark.parametrize("policy", ["other", "fifo", "rr"])
@pytest.mark.parametrize("op", ["ctxsw-thread", "ctxsw-process"])
def test_pingpong_on_one_cpu_switches_once_per_round_trip(kernel, op, policy):
    """Tokens come back incremented in order (else the kernel fails), and on one CPU the measuring
    party leaves the CPU at every round trip: the switches really happened, under every policy."""
    r = one(kernel, "--op", op, "--ops", "3000", "--cpus", "same", "--policy", policy)["result"]
    assert r["ops"] == 6000  # two switches per round trip
    assert r["round_trips"] == 3000
    assert r["main_switches_per_round_trip"] >= 0.95
    assert 1e-8 < r["median_s"] < 1e-3


@pytest.mark.parametrize("policy", ["fifo", "rr"])
@pytest.mark.parametrize("op", ["ctxsw-thread", "ctxsw-process"])
def test_yield_hand_offs_alternate_on_one_cpu(kernel, op, policy):
    """The seed's implicit switch: every sched_yield of a real-time party hands the CPU to the other
    (the kernel counts the yields that found the partner had not run), one switch out per round."""
    r = one(kernel, "--op", op, "--ops", "3000", "--batch", "100", "--mode", "yield", "--policy", policy)[
        "result"
    ]
    assert r["ops"] == 6000 and r["round_trips"] == 3000
    assert r["yields_without_switch"] == 0 and r["main_switches_per_round_trip"] >= 0.95
    assert 1e-8 < r["median_s"] < 1e-3


def test_yield_mode_refuses_what_cannot_alternate(kernel):
    for args in (["--policy", "other"], ["--policy", "fifo", "--cpus", "split"]):
        proc = run_raw(kernel(BINARY), "--op", "ctxsw-thread", "--mode", "yield", *args)
        assert proc.returncode == 2 and "--mode yield: needs --cpus same and --policy fifo|rr" in proc.stderr


def test_pingpong_across_cpus_puts_the_partner_elsewhere(kernel):
    record = one(kernel, "--op", "ctxsw-thread", "--ops", "500", "--cpus", "split")
    assert record["result"]["partner_cpu"] != record["placement"][0][0]


@pytest.mark.parametrize(
    ("op", "low", "high"),
    [("thread-create", 1e-7, 0.05), ("fork", 1e-6, 0.5), ("fork-exec", 1e-5, 0.5)],
)
def test_creation_costs_are_sane(kernel, op, low, high):
    r = one(kernel, "--op", op, "--ops", "50")["result"]
    assert r["op"] == op and r["ops"] == 50
    assert low < r["median_s"] < high


def test_process_creation_costs_more_than_a_thread(kernel):
    thread = one(kernel, "--op", "thread-create", "--ops", "200")["result"]["min_s"]
    process = one(kernel, "--op", "fork", "--ops", "200")["result"]["min_s"]
    assert process > thread


def test_malloc_without_touch_hardly_depends_on_size_touching_does(kernel):
    small = one(kernel, "--op", "malloc", "--bytes", "256", "--ops", "20000", "--batch", "1000")["result"]
    touched = one(
        kernel, "--op", "malloc", "--bytes", str(1 << 20), "--touch", "yes", "--ops", "200", "--batch", "10"
    )["result"]
    assert small["median_s"] < 1e-5
    # touching 256 pages of a fresh mmap'd MiB means page faults: far more than a cached small block
    assert touched["min_s"] > 5 * small["min_s"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--op", "teleport"], ["--op", "'teleport'", "timer"]),
        (["--ops", "0"], ["--ops", "'0'"]),
        (["--ops", "10", "--batch", "3"], ["--batch", "'3'", "divide"]),
        (["--bytes", "x"], ["--bytes", "'x'"]),
        (["--cpus", "all"], ["--cpus", "'all'", "same|split"]),
        (["--policy", "idle"], ["--policy", "'idle'", "other|fifo|rr"]),
        (["--samples", "5"], ["'--samples'"]),
        (["--threads", "2"], ["--threads", "'2'"]),
    ],
)
def test_bad_input_exits_2_with_one_line(kernel, args, expected):
    assert_usage_error(run_raw(kernel(BINARY), *args), BINARY, expected)


def test_pinning_of_one_repetition_does_not_leak_into_the_next(kernel):
    """Each repetition pins its parties; the next one must again see every CPU it started with."""
    records = run_records(
        kernel(BINARY),
        "--op",
        "ctxsw-thread",
        "--cpus",
        "split",
        "--ops",
        "100",
        "--warmup",
        "1",
        "--reps",
        "2",
    )
    assert len(records) == 3
    assert all(r["result"]["partner_cpu"] != r["placement"][0][0] for r in records)


def test_thread_limit_probe_keeps_the_threads_alive_up_to_its_cap(kernel):
    record = one(kernel, "--op", "thread-limit", "--ops", "300")
    r = record["result"]
    assert (r["threads_created"], r["limit_reached"], r["refusal_errno"]) == (300, 0, 0)
    assert r["threads_max"] > 0 and r["max_map_count"] > 0 and r["rlimit_nproc"] != 0
    assert record["checksum"] and r["op"] == "thread-limit"
