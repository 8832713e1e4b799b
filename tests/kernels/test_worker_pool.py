"""The pthreads kernels' persistent worker pool (kernels/common/sb_threads.c).

likwid-pin pins the main thread on list[0] and the j-th pthread_create of the whole process on
list[j mod n]. Helpers created once, in worker order, and reused by every repetition therefore keep
worker i on list entry i mod n in every record, warm-ups included; threads created anew per
repetition would drift onto other entries from the second repetition on.
"""

import json
import resource
import shutil
import subprocess

import pytest

from ..kernel_records import checksums, run_raw, run_records

PTHREADS = ["mandelbrot-c-pthreads", "mcpi-c-pthreads"]
SMALL = {
    "mandelbrot-c-pthreads": ["--width", 48, "--height", 40, "--max-iter", 60],
    "mcpi-c-pthreads": ["--samples", 20000, "--batch", 100],
}
PIN_LIST = [0, 1]


@pytest.fixture(scope="module")
def likwid_pin() -> str:
    path = shutil.which("likwid-pin")
    if path is None:
        pytest.skip("likwid-pin is not installed (scripts/setup.sh installs it)")
    return path


@pytest.mark.parametrize("binary", PTHREADS)
# 3 and 4 on a list of 2 wrap (worker 2 on CPU 0). 4 also catches per-repetition creation with a
# list of 2: 3 creations per repetition shift the next repetition by one entry (3 would not: 2 do not).
@pytest.mark.parametrize("threads", [2, 3, 4])
def test_likwid_pin_keeps_worker_i_on_entry_i_in_every_repetition(kernel, likwid_pin, binary, threads):
    cmd = [likwid_pin, "-q", "-c", ",".join(map(str, PIN_LIST)), str(kernel(binary))]
    args = [*SMALL[binary], "--threads", threads, "--reps", 3, "--warmup", 2]
    proc = subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    records = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(records) == 5, proc.stdout
    planned = [[PIN_LIST[w % len(PIN_LIST)]] * 2 for w in range(threads)]
    seen = [(r["warmup"], r["rep"], r["placement"]) for r in map(json.loads, records)]
    wrong = [s for s in seen if s[2] != planned]
    assert not wrong, f"planned {planned}; (warmup, rep, placement) differing: {wrong}"


@pytest.mark.parametrize("binary", PTHREADS)
def test_os_threads_is_exactly_threads_in_every_repetition(kernel, binary):
    # Many repetitions: a pool that leaked or re-created threads would change the count.
    records = run_records(kernel(binary), *SMALL[binary], "--threads", 3, "--reps", 40, "--warmup", 3)
    assert len(records) == 43
    assert [r["os_threads"] for r in records] == [3] * 43


@pytest.mark.slow
def test_4096_workers_over_several_repetitions(kernel):
    image = ["--width", 64, "--height", 64, "--max-iter", 50]
    (reference,) = checksums(kernel("mandelbrot-c-serial"), *image)
    records = run_records(
        kernel("mandelbrot-c-pthreads"), *image, "--threads", 4096, "--reps", 2, "--warmup", 1,
        "--schedule", "queue,1", "--sync", "atomic",
    )  # fmt: skip
    assert {r["checksum"] for r in records} == {reference}
    assert [(r["os_threads"], len(r["placement"])) for r in records] == [(4096, 4096)] * 3


def limit_address_space():
    # 128 MiB: the binary starts, but a few hundred 256 KiB worker stacks exhaust it.
    resource.setrlimit(resource.RLIMIT_AS, (128 << 20, 128 << 20))


@pytest.mark.parametrize("binary", PTHREADS)
def test_pool_creation_failure_exits_cleanly(kernel, binary):
    proc = subprocess.run(
        [str(kernel(binary)), *map(str, SMALL[binary]), "--threads", "4096", "--reps", "2"],
        capture_output=True,
        text=True,
        timeout=60,  # a helper left waiting, or a join of a blocked helper, would hang here
        preexec_fn=limit_address_space,
    )
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{binary}: cannot create worker thread "), lines
    assert lines[0].endswith("of 4096: Resource temporarily unavailable"), lines
    assert proc.stdout == ""  # nothing measured was reported for a repetition that did not run


@pytest.mark.parametrize("binary", PTHREADS)
def test_single_thread_needs_no_pool(kernel, binary):
    proc = run_raw(kernel(binary), *SMALL[binary], "--threads", 1, "--reps", 3)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"os_threads":1,') == 3


@pytest.mark.parametrize("binary", PTHREADS)
def test_pool_is_joined_and_freed_at_exit_under_asan(sanitized_dir, binary):
    # LeakSanitizer runs at exit, after the pool's atexit shutdown: unjoined helpers or an unfreed
    # pool would be reported.
    args = [*SMALL[binary], "--threads", 5, "--reps", 3, "--warmup", 2]
    proc = run_raw(sanitized_dir / "asan" / binary, *args, env={"ASAN_OPTIONS": "detect_leaks=1"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-3000:]
    assert proc.stdout.count('"os_threads":5,') == 5
