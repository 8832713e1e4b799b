"""The Mandelbrot image equals an independent numpy implementation of the design's formula, pixel
for pixel, read back through --dump; the record's checksum and work are recomputed from the dump."""

from pathlib import Path

import numpy as np
import pytest

from ..kernel_records import run_raw, run_records

PRESETS = {"symmetric": (-2.0, 0.5, -1.25, 1.25), "asymmetric": (-0.75, 0.25, 0.0, 1.0)}


def reference_counts(width: int, height: int, max_iter: int, region) -> np.ndarray:
    """shared/design.md's loop, vectorised: same operation order, float64, no FMA (numpy never fuses)."""
    x0, x1, y0, y1 = region
    dx = (x1 - x0) / width
    dy = (y1 - y0) / height
    cx = x0 + (np.arange(width, dtype=np.float64) + 0.5) * dx
    cy = y1 - (np.arange(height, dtype=np.float64) + 0.5) * dy
    cx, cy = np.meshgrid(cx, cy)
    x = np.zeros_like(cx)
    y = np.zeros_like(cx)
    n = np.zeros(cx.shape, dtype=np.int64)
    for _ in range(max_iter):
        active = x * x + y * y <= 4.0
        if not active.any():
            break
        xt = (x * x - y * y) + cx
        yt = ((2.0 * x) * y) + cy
        x = np.where(active, xt, x)
        y = np.where(active, yt, y)
        n += active
    return n


def read_pgm16(path: Path) -> np.ndarray:
    data = path.read_bytes()
    magic, dims, maxval, rest = data.split(b"\n", 3)
    assert magic == b"P5" and maxval == b"65535"
    width, height = map(int, dims.split())
    assert len(rest) == 2 * width * height
    return np.frombuffer(rest, dtype=">u2").reshape(height, width).astype(np.int64)


def fnv1a64_u32le(counts: np.ndarray) -> int:
    h = 0xCBF29CE484222325
    for b in counts.astype("<u4").tobytes():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


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
