"""--inner simd: the path chosen for this CPU, bit-identity with the scalar reference on the images
most likely to break a vector kernel, the AVX-512 path (compiled everywhere, run where the CPU has
it) and the measured core clock in every record. The exhaustive row-by-row comparison is the C test
kernels/tests/test_simd.c (`make test-kernels-c`)."""

import subprocess
from pathlib import Path

import pytest

from ..kernel_records import assert_error_line, run_raw, run_records


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


FLAGS = cpu_flags()
HAS_AVX512 = {"avx512f", "avx512dq"} <= FLAGS
EXPECTED_PATH = "avx512" if HAS_AVX512 else "avx2" if "avx2" in FLAGS else "scalar"

# (region, width, height, max_iter): lanes ending thousands of steps apart, pixel centres exactly on
# |z|^2 = 4 (c = -2, 2, 2i), overflow to inf and NaN, max-iter 1 and around the block length,
# widths that no vector width divides.
EDGE_IMAGES = [
    ("-0.75,0.25,0.0,1.0", 37, 23, 1000),
    ("-2.0,0.5,-1.25,1.25", 41, 17, 300),
    ("-0.7454,-0.7452,0.1130,0.1132", 29, 7, 20000),
    ("-2.5,2.5,-2.5,2.5", 5, 5, 1000),
    ("1.5,2.5,-0.5,0.5", 1, 1, 10),
    ("-1e300,1e300,-1e300,1e300", 23, 3, 100),
    ("-1e308,1e308,-1e308,1e308", 19, 3, 100),
    ("-2.0,0.5,-1.25,1.25", 13, 9, 1),
    ("-2.0,0.5,-1.25,1.25", 7, 9, 8),
    ("-2.0,0.5,-1.25,1.25", 3, 9, 9),
]


def image_args(region, width, height, max_iter) -> list:
    return ["--region", region, "--width", width, "--height", height, "--max-iter", max_iter]


def checksum(binary: Path, *args, env=None) -> tuple[str, str]:
    (rec,) = run_records(binary, *args, env=env)
    return rec["checksum"], rec["inner_path"]


def test_dispatch_picks_the_best_path_of_this_cpu(kernel):
    (rec,) = run_records(kernel("mandelbrot-c-serial"), "--width", 8, "--height", 8, "--inner", "simd")
    assert (rec["inner"], rec["inner_path"]) == ("simd", EXPECTED_PATH)
    (rec,) = run_records(kernel("mcpi-c-omp"), "--samples", 1000, "--inner", "scalar")
    assert (rec["inner"], rec["inner_path"]) == ("scalar", "scalar")


@pytest.mark.parametrize("binary", ["mandelbrot-c-omp", "mandelbrot-f-serial", "mcpi-c-pthreads"])
def test_sb_inner_path_caps_the_path_and_scalar_fallback_agrees(kernel, binary):
    args = ["--width", 31, "--height", 9] if binary.startswith("mandelbrot") else ["--samples", 10007]
    best = checksum(kernel(binary), *args, "--inner", "simd")
    fallback = checksum(kernel(binary), *args, "--inner", "simd", env={"SB_INNER_PATH": "scalar"})
    assert best == (fallback[0], EXPECTED_PATH)
    assert fallback[1] == "scalar"


@pytest.mark.parametrize(("region", "width", "height", "max_iter"), EDGE_IMAGES)
def test_simd_equals_scalar_on_edge_images(kernel, region, width, height, max_iter):
    args = image_args(region, width, height, max_iter)
    scalar = checksum(kernel("mandelbrot-c-serial"), *args)
    simd = checksum(
        kernel("mandelbrot-c-omp"), *args, "--threads", 2, "--schedule", "dynamic", "--inner", "simd"
    )
    assert simd == (scalar[0], EXPECTED_PATH)


@pytest.mark.skipif(not HAS_AVX512, reason="this CPU has no AVX-512F+DQ: the AVX-512 path cannot run here")
@pytest.mark.parametrize(("region", "width", "height", "max_iter"), EDGE_IMAGES)
def test_avx512_equals_scalar_on_edge_images(kernel, region, width, height, max_iter):
    args = image_args(region, width, height, max_iter)
    scalar = checksum(kernel("mandelbrot-c-serial"), *args)
    avx512 = checksum(
        kernel("mandelbrot-c-serial"), *args, "--inner", "simd", env={"SB_INNER_PATH": "avx512"}
    )
    assert avx512 == (scalar[0], "avx512")


@pytest.mark.skipif(not HAS_AVX512, reason="this CPU has no AVX-512F+DQ: the AVX-512 path cannot run here")
def test_avx512_pi_equals_scalar(kernel):
    args = ["--samples", 100003, "--seed", "0xffffffffffffffff", "--batch", 777]
    scalar = checksum(kernel("mcpi-c-serial"), *args)
    assert checksum(kernel("mcpi-c-serial"), *args, "--inner", "simd") == (scalar[0], "avx512")


def test_avx512_kernels_are_compiled_on_every_machine(kernel):
    """Both vector paths are in every binary, whatever the build machine has."""
    objdump = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(kernel("mandelbrot-c-serial"))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for fn in ["sb_mandel_row_avx512", "sb_pi_hits_avx512", "sb_mandel_row_avx2", "sb_pi_hits_avx2"]:
        assert f"<{fn}>:" in objdump, fn
    avx512_body = objdump.split("<sb_mandel_row_avx512>:")[1].split("\n\n")[0]
    assert "zmm" in avx512_body
    avx2_body = objdump.split("<sb_mandel_row_avx2>:")[1].split("\n\n")[0]
    assert "vmulpd" in avx2_body and "zmm" not in avx2_body
    # no FMA anywhere in the vector kernels: it would change the rounding
    assert "vfmadd" not in avx2_body and "vfmadd" not in avx512_body


def test_records_carry_the_measured_clock(kernel):
    (rec,) = run_records(kernel("mcpi-c-serial"), "--samples", 1000, "--inner", "simd")
    clock = rec["clock"]
    assert 0.2 < clock["before_ghz"] < 10 and 0.2 < clock["after_ghz"] < 10
    assert rec["clock_ghz"] == pytest.approx((clock["before_ghz"] + clock["after_ghz"]) / 2)


@pytest.mark.parametrize("path", ["scalar", "avx2", "avx512"])
def test_the_clock_of_the_avx512_path_is_read_beside_512_bit_code(kernel, path):
    """An AVX-512 region runs at the clock the core keeps while 512-bit code runs (lower on cores
    with a frequency licence): its record's clock is measured beside 512-bit multiplies, and says
    so; every other path's by the plain add chain."""
    if path == "avx512" and not HAS_AVX512:
        pytest.skip("this CPU has no AVX-512F+DQ: the AVX-512 path cannot run here")
    if path == "avx2" and "avx2" not in FLAGS:
        pytest.skip("this CPU has no AVX2")
    args = ["--width", 64, "--height", 8, "--inner", "simd"]
    (rec,) = run_records(kernel("mandelbrot-c-serial"), *args, env={"SB_INNER_PATH": path})
    assert rec["inner_path"] == path
    wide = "dependent integer add chain beside 512-bit multiplies, best of"
    if path == "avx512":
        assert rec["clock"]["method"].startswith(wide)
    else:
        assert rec["clock"]["method"].startswith("dependent integer add chain, best of")
    assert 0.2 < rec["clock_ghz"] < 10


def test_unknown_inner_names_the_choices(kernel):
    proc = run_raw(kernel("mcpi-c-serial"), "--inner", "avx2")
    assert proc.returncode == 2
    assert_error_line(proc.stderr, "mcpi-c-serial", ["--inner", "'avx2'", "scalar, simd"])
