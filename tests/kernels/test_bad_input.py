"""Bad invocations: exit status 2 and exactly one line on stderr naming the option and the value;
the same table under the ASan+UBSan build must stay free of sanitizer reports."""

import pytest

from ..kernel_records import assert_usage_error, run_raw

# (binary, arguments, texts the one stderr line must contain: option and value)
BAD_INVOCATIONS = [
    ("mandelbrot-c-omp", ["--threads", "0"], ["--threads", "'0'", "out of range (1..4096)"]),
    ("mandelbrot-c-pthreads", ["--threads", "4097"], ["--threads", "'4097'", "out of range"]),
    ("mcpi-c-omp", ["--threads", "-3"], ["--threads", "'-3'"]),
    ("mandelbrot-c-serial", ["--threads", "2"], ["--threads", "'2'", "(1..1)"]),
    ("mcpi-c-pthreads", ["--threads", "two"], ["--threads", "'two'", "not an integer"]),
    ("mcpi-c-serial", ["--samples", "0"], ["--samples", "'0'", "out of range"]),
    ("mcpi-c-omp", ["--samples", "1e6"], ["--samples", "'1e6'", "not an integer"]),
    ("mcpi-c-pthreads", ["--batch", "0"], ["--batch", "'0'"]),
    ("mcpi-c-serial", ["--seed", "-5"], ["--seed", "'-5'"]),
    ("mcpi-c-serial", ["--seed", "99999999999999999999"], ["--seed", "'99999999999999999999'"]),
    ("mandelbrot-c-serial", ["--max-iter", "0"], ["--max-iter", "'0'", "out of range"]),
    ("mandelbrot-c-omp", ["--width", "0"], ["--width", "'0'"]),
    ("mandelbrot-c-omp", ["--width", "99999999999"], ["--width", "'99999999999'"]),
    (
        "mandelbrot-c-serial",
        ["--width", "1000000", "--height", "1000000"],
        ["--width", "'1000000'", "--height '1000000'", "pixels"],
    ),
    ("mandelbrot-c-serial", ["--region", "0.5,-2,-1,1"], ["--region", "'0.5,-2,-1,1'", "inverted"]),
    ("mandelbrot-c-pthreads", ["--region", "0,0,0,0"], ["--region", "'0,0,0,0'", "empty"]),
    ("mandelbrot-c-serial", ["--region", "a,b,c,d"], ["--region", "'a,b,c,d'"]),
    ("mcpi-c-serial", ["--turns", "0,1"], ["--turns", "'0,1'", "3..1023"]),
    ("mcpi-c-serial", ["--turns", "7,7"], ["--turns", "'7,7'", "distinct"]),
    ("mcpi-c-omp", ["--turns", "5,x"], ["--turns", "'5,x'"]),
    ("mandelbrot-c-serial", ["--turns", "900,901"], ["--turns", "'900,901'", "descriptor 900 is not open"]),
    ("mandelbrot-c-serial", ["--region", "0,1,0"], ["--region", "'0,1,0'"]),
    ("mandelbrot-c-omp", ["--schedule", "fastest"], ["--schedule", "'fastest'", "static|dynamic|guided"]),
    ("mandelbrot-c-omp", ["--schedule", "queue"], ["--schedule", "'queue'"]),
    ("mandelbrot-c-omp", ["--schedule", "dynamic,0"], ["--schedule", "'dynamic,0'", "chunk"]),
    ("mandelbrot-c-omp", ["--schedule", "dynamic,x"], ["--schedule", "'dynamic,x'", "chunk"]),
    ("mandelbrot-c-omp", ["--sync", "atomic"], ["--sync", "'atomic'", "supports none"]),
    ("mandelbrot-c-pthreads", ["--schedule", "static"], ["--schedule", "'static'", "block|cyclic|queue"]),
    (
        "mandelbrot-c-pthreads",
        ["--schedule", "queue", "--sync", "none"],
        ["--sync", "'none'", "--schedule queue"],
    ),
    ("mandelbrot-c-pthreads", ["--schedule", "block,8"], ["--schedule", "'block,8'", "no chunk"]),
    ("mandelbrot-c-pthreads", ["--sync", "optimistic"], ["--sync", "'optimistic'"]),
    ("mcpi-c-omp", ["--sync", "coarse"], ["--sync", "'coarse'", "atomic|reduction|critical"]),
    ("mcpi-c-pthreads", ["--sync", "reduction"], ["--sync", "'reduction'"]),
    ("mcpi-c-pthreads", ["--schedule", "queue,4"], ["--schedule", "'queue,4'", "no chunk"]),
    ("mandelbrot-c-serial", ["--preset", "tilted"], ["--preset", "'tilted'"]),
    ("mandelbrot-c-serial", ["--inner", "avx512"], ["--inner", "'avx512'"]),
    ("mandelbrot-c-serial", ["--reps", "0"], ["--reps", "'0'"]),
    ("mcpi-c-serial", ["--warmup", "-1"], ["--warmup", "'-1'"]),
    ("mandelbrot-c-omp", ["--threads"], ["--threads", "missing value"]),
    ("mcpi-c-serial", ["--samples="], ["--samples", "''"]),
    ("mandelbrot-c-omp", ["--frobnicate"], ["'--frobnicate'", "unknown option"]),
    ("mcpi-c-serial", ["--width", "10"], ["'--width'", "unknown option"]),
    ("mandelbrot-c-serial", ["leftover"], ["'leftover'", "unexpected argument"]),
    ("mandelbrot-c-serial", ["--dump", "/proc/no/such/dir/x.pgm"], ["--dump", "'/proc/no/such/dir/x.pgm'"]),
    ("mandelbrot-c-serial", ["--dump", "/tmp"], ["--dump", "'/tmp'", "directory"]),
]


def ids(case):
    return f"{case[0]} {' '.join(case[1])}"


def test_table_is_large_enough():
    assert len(BAD_INVOCATIONS) >= 15


@pytest.mark.parametrize(("binary", "args", "expected"), BAD_INVOCATIONS, ids=map(ids, BAD_INVOCATIONS))
def test_bad_invocation(kernel, binary, args, expected):
    assert_usage_error(run_raw(kernel(binary), *args, timeout=10), binary, expected)


@pytest.mark.parametrize(("binary", "args", "expected"), BAD_INVOCATIONS, ids=map(ids, BAD_INVOCATIONS))
def test_bad_invocation_under_asan_ubsan(sanitized_dir, binary, args, expected):
    env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
    proc = run_raw(sanitized_dir / "asan" / binary, *args, env=env, timeout=30)
    assert_usage_error(proc, binary, expected)


def test_only_first_mpi_rank_prints_the_error(kernel):
    proc = run_raw(kernel("mcpi-c-serial"), "--samples", "0", env={"OMPI_COMM_WORLD_RANK": "1"})
    assert proc.returncode == 2 and proc.stderr == ""
    proc = run_raw(kernel("mcpi-c-serial"), "--samples", "0", env={"PMIX_RANK": "0"})
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("binary", ["mandelbrot-c-omp", "mcpi-c-pthreads"])
def test_help_exits_zero_and_documents_options(kernel, binary):
    proc = run_raw(kernel(binary), "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    for option in ["--threads", "--reps", "--warmup", "--schedule", "--sync"]:
        assert option in proc.stdout
