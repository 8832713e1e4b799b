"""--turns R,W (kernels/common/sb_turns.h): a kernel measures a repetition only when its conductor says
so and says when it is done, so two kernels' repetitions can alternate microseconds apart; a conductor
that goes away ends it with one line. The conductor is perf/perf_alternating.py's."""

import json
import os
import subprocess
import time

import pytest

from tests.perf_scripts import load_perf_script

alternating = load_perf_script("perf_alternating")


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_repetition_waits_for_its_turn(bin_dir, tmp_path):
    taker = alternating.TurnTaker(
        [str(bin_dir / "mcpi-c-serial"), "--samples", "100000", "--warmup", "1", "--reps", "2"],
        "0",
        None,
        tmp_path,
        "pi",
    )
    time.sleep(0.3)
    assert taker.out.read_text() == "", "measured before its first turn"
    for expected in (1, 2, 3):  # the warm-up, then each repetition: one record per turn
        taker.go()
        taker.done()
        assert len(_records(taker.out)) == expected
    measured = taker.close()
    assert [r["rep"] for r in measured] == [0, 1]


def test_each_repetition_is_probed_after_its_turn(bin_dir, tmp_path):
    """Without turns a repetition's probe before is the previous one's after (nothing ran between);
    with turns another process may have, so it is measured again."""
    argv = [str(bin_dir / "mcpi-c-serial"), "--samples", "100000", "--reps", "3"]
    plain = [
        json.loads(line) for line in subprocess.run(argv, capture_output=True, check=True).stdout.splitlines()
    ]
    assert all(b["probe"]["before"] == a["probe"]["after"] for a, b in zip(plain, plain[1:], strict=False))
    taker = alternating.TurnTaker(argv, "0", None, tmp_path, "pi")
    for _ in range(3):
        taker.go()
        taker.done()
    turns = taker.close()
    assert all(b["probe"]["before"] != a["probe"]["after"] for a, b in zip(turns, turns[1:], strict=False))


def test_a_conductor_that_goes_away_ends_the_kernel(bin_dir, tmp_path):
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    proc = subprocess.Popen(
        [str(bin_dir / "mcpi-c-serial"), "--samples", "1000", "--reps", "3", "--turns", f"{go_r},{done_w}"],
        pass_fds=(go_r, done_w),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(go_r)
    os.close(done_w)
    os.write(go_w, b"g")
    assert os.read(done_r, 1) == b"d"
    os.close(go_w)  # gone before the second turn
    assert proc.wait(timeout=30) == 1
    assert proc.stderr.read().strip().endswith(f"--turns: the conductor closed descriptor {go_r}")
    os.close(done_r)


@pytest.mark.parametrize("binary", ["mcpi-c-mpi", "mandelbrot-c-mpi"])
def test_mpi_kernels_refuse_turns(bin_dir, binary):
    go_r, go_w = os.pipe()
    try:
        proc = subprocess.run(
            [str(bin_dir / binary), "--check-args", "--turns", f"{go_r},{go_w}"],
            pass_fds=(go_r, go_w),
            capture_output=True,
            text=True,
        )
    finally:
        os.close(go_r)
        os.close(go_w)
    assert proc.returncode == 2
    assert "--turns: not supported by" in proc.stderr and proc.stderr.count("\n") == 1
