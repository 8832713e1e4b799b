"""Fortran kernels agree bit for bit with the C serial reference: Mandelbrot checksum, work and
--dump bytes for every thread count and schedule; π hit counts for every thread count, sync and
batch size, including seeds with the top bit set (the signed int64 path of the Fortran generator)."""

import pytest

from ..kernel_records import run_records
from .conftest import MANDELBROT_ARGS, PI_ARGS, assert_same_image, mandelbrot_args

THREADS = [1, 2, 3, 7, 16]
OMP_SCHEDULES = ["static", "static,1", "dynamic", "dynamic,4", "guided", "guided,3"]
PI_SYNCS = ["reduction", "atomic", "critical"]
PI_BATCHES = ["1", "97", "100000"]
SEED = PI_ARGS[3]


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize("preset", ["asymmetric", "symmetric"])
def test_mandelbrot_f_serial_equals_c_serial(kernel, mandelbrot_reference, tmp_path, preset, inner):
    out = tmp_path / "f.pgm"
    (rec,) = run_records(kernel("mandelbrot-f-serial"), *mandelbrot_args(preset, out, "--inner", inner))
    assert_same_image(rec, out, mandelbrot_reference(preset))
    assert rec["inner"] == inner


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize("schedule", OMP_SCHEDULES)
@pytest.mark.parametrize("threads", THREADS)
def test_mandelbrot_f_omp_equals_c_serial(kernel, mandelbrot_reference, tmp_path, threads, schedule, inner):
    out = tmp_path / "f.pgm"
    args = mandelbrot_args("asymmetric", out, "--threads", threads, "--schedule", schedule, "--inner", inner)
    (rec,) = run_records(kernel("mandelbrot-f-omp"), *args)
    assert_same_image(rec, out, mandelbrot_reference("asymmetric"))
    assert (rec["lang"], rec["model"], rec["threads"], rec["schedule"]) == ("f", "omp", threads, schedule)
    assert len(rec["placement"]) == threads


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize("batch", ["1", "7", "4096", "100000"])
@pytest.mark.parametrize("seed", [SEED, "0", "0xffffffffffffffff", "0x8000000000000000"])
def test_mcpi_f_serial_equals_c_serial(kernel, pi_reference, seed, batch, inner):
    (rec,) = run_records(
        kernel("mcpi-f-serial"), *PI_ARGS[:2], "--seed", seed, "--batch", batch, "--inner", inner
    )
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(seed)


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize("batch", PI_BATCHES)
@pytest.mark.parametrize("sync", PI_SYNCS)
@pytest.mark.parametrize("threads", THREADS)
def test_mcpi_f_omp_equals_c_serial(kernel, pi_reference, threads, sync, batch, inner):
    (rec,) = run_records(
        kernel("mcpi-f-omp"),
        *PI_ARGS,
        "--threads",
        threads,
        "--sync",
        sync,
        "--batch",
        batch,
        "--inner",
        inner,
    )
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(SEED)
    assert (rec["threads"], rec["sync"], rec["params"]["batch"]) == (threads, sync, int(batch))


@pytest.mark.parametrize("schedule", ["dynamic", "dynamic,3", "guided,2", "static,5"])
def test_mcpi_f_omp_schedules_equal_c_serial(kernel, pi_reference, schedule):
    (rec,) = run_records(
        kernel("mcpi-f-omp"), *PI_ARGS, "--threads", "3", "--schedule", schedule, "--batch", "50"
    )
    assert (rec["checksum"], rec["result"]["hits"]) == pi_reference(SEED)


@pytest.mark.parametrize("binary", ["mandelbrot-f-serial", "mandelbrot-f-omp", "mcpi-f-serial", "mcpi-f-omp"])
def test_fortran_records_say_reference_build(kernel, binary):
    args = MANDELBROT_ARGS if binary.startswith("mandelbrot") else PI_ARGS
    recs = run_records(kernel(binary), *args, "--reps", "2", "--warmup", "1")
    assert [(r["rep"], r["warmup"]) for r in recs] == [(0, True), (0, False), (1, False)]
    for rec in recs:
        assert rec["lang"] == "f"
        assert rec["build"]["fp_contract"] == "off"
        assert "gfortran" in rec["build"]["flags"] and "-fwrapv" in rec["build"]["flags"]
