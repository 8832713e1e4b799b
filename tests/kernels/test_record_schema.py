"""Every record validates against kernels/record.schema.json, and the fields mean what they say."""

import copy
import statistics

import jsonschema
import pytest

from ..kernel_records import run_records

C_BINARIES = [f"{k}-c-{m}" for k in ("mandelbrot", "mcpi") for m in ("serial", "omp", "pthreads")]
CASES = {
    "mandelbrot": ["--width", 32, "--height", 24, "--max-iter", 100],
    "mcpi": ["--samples", 5000, "--batch", 64],
}


@pytest.fixture(scope="module")
def sample_record(kernel):
    return run_records(kernel("mandelbrot-c-serial"), *CASES["mandelbrot"])[0]


@pytest.mark.parametrize("binary", C_BINARIES)
def test_records_validate_and_describe_the_run(kernel, record_validator, binary):
    name, lang, model = binary.split("-")
    threads = 1 if model == "serial" else 3
    records = run_records(kernel(binary), *CASES[name], "--threads", threads, "--reps", 3, "--warmup", 2)
    assert len(records) == 5
    for record in records:
        record_validator.validate(record)
        assert (record["kernel"], record["lang"], record["model"]) == (name, lang, model)
        assert record["threads"] == threads and record["ranks"] == 1
        assert len(record["placement"]) == threads
        assert all(cpu >= 0 for pair in record["placement"] for cpu in pair)
        assert record["os_threads"] >= threads
        assert record["wall_s"] > 0 and record["setup_s"] >= 0
        assert record["build"]["fp_contract"] == "off"
        assert "-ffp-contract=off" in record["build"]["flags"]
        assert ("-fopenmp" in record["build"]["flags"]) == (model == "omp")
    assert [(r["warmup"], r["rep"]) for r in records] == [
        (True, 0),
        (True, 1),
        (False, 0),
        (False, 1),
        (False, 2),
    ]


@pytest.mark.parametrize(
    ("binary", "schedule", "sync"),
    [
        ("mandelbrot-c-omp", "dynamic,4", "none"),
        ("mandelbrot-c-pthreads", "queue,2", "atomic"),
        ("mcpi-c-omp", "guided", "critical"),
        ("mcpi-c-pthreads", "cyclic", "fine"),
    ],
)
def test_schedule_and_sync_echoed(kernel, record_validator, binary, schedule, sync):
    (record,) = run_records(
        kernel(binary), *CASES[binary.split("-")[0]], "--threads", 2, "--schedule", schedule, "--sync", sync
    )
    record_validator.validate(record)
    assert (record["schedule"], record["sync"]) == (schedule, sync)


def test_cpu_time_counts_all_threads(kernel):
    # the same work on 1 and on 2 workers costs the same CPU time if getrusage covers every thread;
    # counting only the main thread would show about half. Medians of 3 and a threshold between 0.5 and
    # 1 keep the test meaningful on a loaded machine.
    args = ["--samples", 20_000_000, "--reps", 3, "--threads"]

    def median_cpu(threads: int) -> float:
        records = run_records(kernel("mcpi-c-pthreads"), *args, threads)
        return statistics.median(r["cpu_user_s"] + r["cpu_sys_s"] for r in records)

    cpu_one, cpu_two = median_cpu(1), median_cpu(2)
    assert cpu_one > 0.02
    assert cpu_two > 0.65 * cpu_one, (cpu_one, cpu_two)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.pop("checksum"),
        lambda r: r.update(extra_field=1),
        lambda r: r.update(threads="2"),
        lambda r: r.update(checksum="crc32:1234"),
        lambda r: r["build"].update(optimiser="O3"),
        lambda r: r.update(placement=[[0, 1, 2]]),
        lambda r: r["params"].pop("max_iter"),
        lambda r: r.update(warmup=0),
    ],
)
def test_schema_rejects_malformed_records(record_validator, sample_record, mutate):
    record = copy.deepcopy(sample_record)
    mutate(record)
    with pytest.raises(jsonschema.ValidationError):
        record_validator.validate(record)


def test_schema_accepts_mpi_rank_times_and_extended_result(record_validator, sample_record):
    record = copy.deepcopy(sample_record)
    record.update(ranks=2, rank_wall_s=[0.1, 0.2])
    record["result"]["note"] = "extension point"
    record_validator.validate(record)
