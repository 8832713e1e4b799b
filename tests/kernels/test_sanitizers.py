"""ThreadSanitizer runs of the threaded kernels (reduced matrix) must be report-free.

pthreads kernels: GCC -fsanitize=thread (build/tsan/, `make kernels-sanitized`).

OpenMP kernels: GCC's libgomp is not TSan-instrumented, its barriers and atomics are invisible to
TSan, so a GCC TSan build reports races on every barrier-ordered access (false positives) and
valgrind's drd/helgrind have the same problem with libgomp's futex-based barriers unless libgomp is
rebuilt with --disable-linux-futex — neither gives real answers. LLVM's libomp with the Archer tool
(libarcher.so) tells TSan about OpenMP's synchronisation, so build/tsan/*-c-omp are built with clang
when clang and libarcher are installed and run with OMP_TOOL_LIBRARIES=libarcher.so and
ignore_noninstrumented_modules=1 (libomp itself is not instrumented). Without clang/libarcher the
OpenMP part is skipped with that reason. A deliberately racy canary program is built with each
set-up and must be reported, so "no reports" is not the checker being blind.

The ASan+UBSan build is exercised by test_bad_input.py.
"""

import glob
import shutil
import subprocess

import pytest

from ..kernel_records import checksums, run_raw

TSAN_ENV = {"TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1"}
MANDELBROT = ["--width", 24, "--height", 19, "--max-iter", 150, "--preset", "asymmetric"]
PI = ["--samples", 3001, "--seed", 7]
# The pthreads worker pool is created in the first repetition and woken for every later one: several
# repetitions and warm-ups exercise the hand-over between jobs, not only the first start.
POOL_REUSE = ["--reps", 3, "--warmup", 2]


def archer_library() -> str | None:
    found = sorted(glob.glob("/usr/lib/llvm-*/lib/libarcher.so"))
    return found[-1] if found else None


def all_records_agree(stdout: str, reference: str) -> bool:
    """Every repetition (warm-ups too) printed a record, each with the reference checksum."""
    sums = [line.split('"checksum":"')[1][:24] for line in stdout.splitlines()]
    return len(sums) == 5 and set(sums) == {reference}


def prints_checksum(stdout: str, reference: str) -> bool:
    return reference in stdout


def assert_clean(proc, what):
    assert proc.returncode == 0, f"{what}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "ThreadSanitizer" not in proc.stderr and "WARNING" not in proc.stderr, proc.stderr[-3000:]


def assert_tsan_clean(kernel, sanitized_dir, binary: str, case: list, args: list, env: dict, agrees):
    """build/tsan/<binary> on `case` + `args` with 2 and 5 threads: no report, and agrees(stdout,
    checksum) with the C serial reference of `case`."""
    (reference,) = checksums(kernel(binary.split("-")[0] + "-c-serial"), *case)
    for threads in (2, 5):
        proc = run_raw(sanitized_dir / "tsan" / binary, *case, "--threads", threads, *args, env=env)
        assert_clean(proc, f"{binary} threads {threads}")
        assert agrees(proc.stdout, reference)


def assert_canary_race_reported(tmp_path, compile_command: list, source: str, env: dict):
    """A deliberately racy program built with `compile_command` is reported, so the checker sees races."""
    binary = tmp_path / "canary"
    subprocess.run([*compile_command, source, "-o", str(binary)], check=True)
    proc = run_raw(binary, env=env)
    assert proc.returncode != 0 and "WARNING: ThreadSanitizer: data race" in proc.stderr


@pytest.mark.parametrize(
    ("schedule", "sync"),
    [(s, y) for s in ["block", "cyclic,2"] for y in ["none", "coarse", "fine", "atomic"]]
    + [("queue,3", y) for y in ["coarse", "fine", "atomic"]],
)
def test_mandelbrot_pthreads_tsan_clean(kernel, sanitized_dir, schedule, sync):
    args = ["--schedule", schedule, "--sync", sync, *POOL_REUSE]
    assert_tsan_clean(
        kernel, sanitized_dir, "mandelbrot-c-pthreads", MANDELBROT, args, TSAN_ENV, all_records_agree
    )


@pytest.mark.parametrize(
    ("schedule", "sync"),
    [(s, y) for s in ["block", "cyclic"] for y in ["none", "coarse", "fine", "atomic"]]
    + [("queue", y) for y in ["coarse", "fine", "atomic"]],
)
def test_mcpi_pthreads_tsan_clean(kernel, sanitized_dir, schedule, sync):
    args = ["--batch", 13, "--schedule", schedule, "--sync", sync, *POOL_REUSE]
    assert_tsan_clean(kernel, sanitized_dir, "mcpi-c-pthreads", PI, args, TSAN_ENV, all_records_agree)


def test_tsan_reports_a_real_race(repo_root, tmp_path):
    command = ["gcc", "-g", "-O1", "-fsanitize=thread", "-pthread"]
    source = str(repo_root / "kernels/tests/tsan_canary_pthreads.c")
    assert_canary_race_reported(tmp_path, command, source, TSAN_ENV)


@pytest.fixture(scope="module")
def archer_env():
    archer = archer_library()
    if not (shutil.which("clang") and archer):
        pytest.skip("clang or libarcher missing: no TSan check of the OpenMP kernels (see docstring)")
    return {
        **TSAN_ENV,
        "TSAN_OPTIONS": TSAN_ENV["TSAN_OPTIONS"] + " ignore_noninstrumented_modules=1",
        "OMP_TOOL_LIBRARIES": archer,
    }


def test_archer_reports_a_real_openmp_race(repo_root, tmp_path, archer_env):
    command = ["clang", "-g", "-O1", "-fopenmp", "-fsanitize=thread"]
    source = str(repo_root / "kernels/tests/tsan_canary_omp.c")
    assert_canary_race_reported(tmp_path, command, source, archer_env)


@pytest.mark.parametrize("schedule", ["static", "dynamic,2", "guided"])
def test_mandelbrot_omp_archer_clean(kernel, sanitized_dir, archer_env, schedule):
    args = ["--schedule", schedule, "--reps", 2]
    assert_tsan_clean(
        kernel, sanitized_dir, "mandelbrot-c-omp", MANDELBROT, args, archer_env, prints_checksum
    )


@pytest.mark.parametrize("sync", ["reduction", "atomic", "critical"])
def test_mcpi_omp_archer_clean(kernel, sanitized_dir, archer_env, sync):
    args = ["--batch", 13, "--schedule", "dynamic", "--sync", sync]
    assert_tsan_clean(kernel, sanitized_dir, "mcpi-c-omp", PI, args, archer_env, prints_checksum)


@pytest.mark.parametrize(
    ("binary", "case", "args"),
    [
        ("mandelbrot-c-pthreads", MANDELBROT, ["--schedule", "queue,3", "--sync", "coarse"]),
        ("mandelbrot-c-pthreads", MANDELBROT, ["--schedule", "cyclic,2", "--sync", "none"]),
        ("mcpi-c-pthreads", PI, ["--batch", 13, "--schedule", "queue", "--sync", "atomic"]),
    ],
)
def test_simd_pthreads_tsan_clean(kernel, sanitized_dir, binary, case, args):
    """--inner simd: the per-thread row buffer of the pixel-wise syncs and the vector kernels."""
    args = [*args, "--inner", "simd", *POOL_REUSE]
    assert_tsan_clean(kernel, sanitized_dir, binary, case, args, TSAN_ENV, all_records_agree)


def test_simd_mandelbrot_omp_archer_clean(kernel, sanitized_dir, archer_env):
    args = ["--schedule", "dynamic,1", "--reps", 2, "--inner", "simd"]
    assert_tsan_clean(
        kernel, sanitized_dir, "mandelbrot-c-omp", MANDELBROT, args, archer_env, prints_checksum
    )


@pytest.mark.parametrize(
    "region",
    ["-0.75,0.25,0.0,1.0", "-1e308,1e308,-1e308,1e308", "-2.5,2.5,-2.5,2.5", "-0.7454,-0.7452,0.1130,0.1132"],
)
def test_simd_under_asan_ubsan_agrees(kernel, sanitized_dir, region):
    """The vector kernels (lane refill, stored |z|^2, NaN orbits) under ASan+UBSan: clean and exact."""
    case = ["--region", region, "--width", 13, "--height", 5, "--max-iter", 3000]
    (reference,) = checksums(kernel("mandelbrot-c-serial"), *case)
    proc = run_raw(
        sanitized_dir / "asan" / "mandelbrot-c-pthreads",
        *case,
        "--threads",
        3,
        "--sync",
        "fine",
        "--inner",
        "simd",
    )
    assert proc.returncode == 0 and "runtime error" not in proc.stderr, proc.stderr[-3000:]
    assert reference in proc.stdout
