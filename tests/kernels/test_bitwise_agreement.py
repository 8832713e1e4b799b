"""Checksums identical for every thread count, schedule, sync and model (reference build).

The serial binary gives the reference; test_image_reference.py checks that reference against an
independent implementation, so agreement here means every variant computes the defined image
(kernels/common/sb_mandelbrot.h).
"""

import pytest

from ..kernel_records import checksums, run_records

THREADS = [1, 2, 3, 4, 7, 16, 64]
# --inner simd runs the same work distribution code; fewer thread counts keep the suite fast
THREADS_BY_INNER = {"scalar": THREADS, "simd": [1, 3, 16]}
# Odd sizes so no schedule divides the rows evenly; the asymmetric region so rows differ in cost.
IMAGE = ["--width", 53, "--height", 37, "--max-iter", 300, "--preset", "asymmetric", "--reps", 2]

MANDELBROT_VARIANTS = (
    [
        ("omp", s, "none")
        for s in ["static", "static,3", "dynamic", "dynamic,1", "dynamic,5", "guided", "guided,2"]
    ]
    + [
        ("pthreads", s, y)
        for s in ["block", "cyclic", "cyclic,3"]
        for y in ["none", "coarse", "fine", "atomic"]
    ]
    + [("pthreads", s, y) for s in ["queue", "queue,1", "queue,4"] for y in ["coarse", "fine", "atomic"]]
)

PI_SAMPLES = 20011  # prime: no batch size divides it
PI_BATCHES = [1, 7, 1000, 50000]
PI_VARIANTS = (
    [
        ("omp", s, y)
        for s in ["static", "static,2", "dynamic,3", "guided", "guided,5"]
        for y in ["reduction", "atomic", "critical"]
    ]
    + [("pthreads", s, y) for s in ["block", "cyclic"] for y in ["none", "coarse", "fine", "atomic"]]
    + [("pthreads", "queue", y) for y in ["coarse", "fine", "atomic"]]
)


@pytest.fixture(scope="module")
def mandelbrot_reference(kernel) -> str:
    (ref,) = checksums(kernel("mandelbrot-c-serial"), *IMAGE)
    return ref


@pytest.fixture(scope="module")
def pi_reference(kernel) -> str:
    (ref,) = checksums(kernel("mcpi-c-serial"), "--samples", PI_SAMPLES, "--seed", 99)
    return ref


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize(("model", "schedule", "sync"), MANDELBROT_VARIANTS)
def test_mandelbrot_checksum_matches_serial(kernel, mandelbrot_reference, model, schedule, sync, inner):
    binary = kernel(f"mandelbrot-c-{model}")
    wrong = {}
    for threads in THREADS_BY_INNER[inner]:
        got = checksums(
            binary, *IMAGE, "--threads", threads, "--schedule", schedule, "--sync", sync, "--inner", inner
        )
        if got != {mandelbrot_reference}:
            wrong[threads] = got
    assert not wrong, f"serial gives {mandelbrot_reference}; differing thread counts: {wrong}"


@pytest.mark.parametrize("inner", ["scalar", "simd"])
@pytest.mark.parametrize(("model", "schedule", "sync"), PI_VARIANTS)
def test_pi_hits_match_serial(kernel, pi_reference, model, schedule, sync, inner):
    binary = kernel(f"mcpi-c-{model}")
    wrong = {}
    for threads in THREADS_BY_INNER[inner]:
        for batch in PI_BATCHES:
            got = checksums(
                binary,
                "--samples",
                PI_SAMPLES,
                "--seed",
                99,
                "--threads",
                threads,
                "--batch",
                batch,
                "--schedule",
                schedule,
                "--sync",
                sync,
                "--inner",
                inner,
            )
            if got != {pi_reference}:
                wrong[(threads, batch)] = got
    assert not wrong, f"serial gives {pi_reference}; differing (threads, batch): {wrong}"


@pytest.mark.parametrize("inner", ["scalar", "simd"])
def test_serial_pi_independent_of_batch(kernel, pi_reference, inner):
    for batch in PI_BATCHES:
        got = checksums(
            kernel("mcpi-c-serial"), "--samples", PI_SAMPLES, "--seed", 99, "--batch", batch, "--inner", inner
        )
        assert got == {pi_reference}, f"batch {batch}"


@pytest.mark.parametrize(
    ("binary", "args"),
    [
        ("mandelbrot-c-omp", ["--schedule", "dynamic,2"]),
        ("mandelbrot-c-pthreads", ["--schedule", "queue,2", "--sync", "fine"]),
        ("mandelbrot-c-pthreads", ["--schedule", "cyclic", "--sync", "none"]),
    ],
)
def test_mandelbrot_512_threads(kernel, mandelbrot_reference, binary, args):
    records = run_records(kernel(binary), *IMAGE, "--threads", 512, *args)
    assert {r["checksum"] for r in records} == {mandelbrot_reference}
    assert all(len(r["placement"]) == 512 and r["os_threads"] >= 512 for r in records)


@pytest.mark.parametrize(
    ("binary", "args"),
    [
        ("mcpi-c-omp", ["--sync", "atomic", "--schedule", "dynamic"]),
        ("mcpi-c-pthreads", ["--schedule", "queue", "--sync", "atomic"]),
        ("mcpi-c-pthreads", ["--schedule", "block", "--sync", "fine"]),
    ],
)
def test_pi_512_threads(kernel, pi_reference, binary, args):
    got = checksums(
        kernel(binary), "--samples", PI_SAMPLES, "--seed", 99, "--batch", 3, "--threads", 512, *args
    )
    assert got == {pi_reference}
