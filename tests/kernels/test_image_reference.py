"""The Mandelbrot image equals an independent numpy implementation of its formula
(tests/mandelbrot_reference.py), pixel for pixel, read back through --dump; the record's checksum and
work are recomputed from the dump."""

import numpy as np
import pytest

from ..kernel_records import run_raw, run_records
from ..mandelbrot_reference import PRESETS, fnv1a64_u32le, read_pgm16, reference_counts


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize(
    ("binary", "extra"),
    [
        ("mandelbrot-c-serial", []),
        ("mandelbrot-c-omp", ["--threads", 3, "--schedule", "guided"]),
        ("mandelbrot-c-pthreads", ["--threads", 3, "--schedule", "queue,2", "--sync", "coarse"]),
    ],
)
def test_dump_equals_numpy_reference(kernel, tmp_path, preset, binary, extra):
    width, height, max_iter = 97, 64, 700  # max_iter <= 65535: the PGM holds the counts unclamped
    dump = tmp_path / "image.pgm"
    (record,) = run_records(
        kernel(binary),
        "--width",
        width,
        "--height",
        height,
        "--max-iter",
        max_iter,
        "--preset",
        preset,
        "--dump",
        dump,
        *extra,
    )
    image = read_pgm16(dump)
    expected = reference_counts(width, height, max_iter, PRESETS[preset])
    mismatches = np.argwhere(image != expected)
    assert mismatches.size == 0, f"{len(mismatches)} pixels differ, first (row, col): {mismatches[:5]}"
    assert record["checksum"] == f"fnv1a64:{fnv1a64_u32le(image):016x}"
    assert record["work"] == int(image.sum())
    assert record["params"]["region"] == list(PRESETS[preset])
    assert list(tmp_path.iterdir()) == [dump], "temporary file left next to the dump"


def test_region_option_overrides_preset(kernel, tmp_path):
    region = (-1.5, -1.0, 0.0, 0.4)
    dump = tmp_path / "r.pgm"
    run_records(
        kernel("mandelbrot-c-serial"),
        "--width",
        40,
        "--height",
        30,
        "--max-iter",
        200,
        "--preset",
        "asymmetric",
        "--region",
        ",".join(map(str, region)),
        "--dump",
        dump,
    )
    assert np.array_equal(read_pgm16(dump), reference_counts(40, 30, 200, region))


def test_dump_clamps_counts_above_65535(kernel, tmp_path):
    dump = tmp_path / "inside.pgm"
    # a region inside the main cardioid: every pixel reaches max_iter
    (record,) = run_records(
        kernel("mandelbrot-c-serial"),
        "--width",
        4,
        "--height",
        3,
        "--max-iter",
        70000,
        "--region",
        "-0.2,0.2,-0.2,0.2",
        "--dump",
        dump,
    )
    assert record["work"] == 12 * 70000
    assert (read_pgm16(dump) == 65535).all()


def test_unwritable_dump_fails_before_computing(kernel, tmp_path):
    # a run that would take minutes: exit 2 within the timeout proves the check comes first
    proc = run_raw(
        kernel("mandelbrot-c-serial"),
        "--width",
        8192,
        "--height",
        8192,
        "--max-iter",
        100000,
        "--dump",
        tmp_path / "no-such-dir" / "x.pgm",
        timeout=10,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "--dump" in proc.stderr and "no-such-dir/x.pgm" in proc.stderr
