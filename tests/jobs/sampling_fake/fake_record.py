"""The record the stand-in kernels of the sampling tests print (schema scalebench.run/1, one CPU per
worker, a zero checksum)."""

import argparse
import json
import sys
from pathlib import Path


def timeline_parser(description: str) -> argparse.ArgumentParser:
    """The options of the stand-ins on a synthetic host's timeline (fake_kernel_phases.py,
    fake_kernel_duet.py): the harness's --reps --warmup --threads, the --timeline file, --slow windows."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--timeline", required=True)
    parser.add_argument("--slow", default="")
    return parser


def take_slot(timeline: str) -> int:
    """This process's slot of the host's timeline: the counter in the file, which it advances."""
    path = Path(timeline)
    slot = int(path.read_text()) if path.exists() else 0
    path.write_text(str(slot + 1))
    return slot


def in_windows(slot: int, windows: str) -> bool:
    """The slot lies in one of the windows "a-b,c-d" (slots a..b-1 and c..d-1)."""
    spans = [tuple(map(int, w.split("-"))) for w in windows.split(",") if w]
    return any(a <= slot < b for a, b in spans)


def print_records(kernel: str, model: str, threads: int, warmup: int, walls: list[float], **extra) -> None:
    """One line per repetition: the first `warmup` of `walls` are warm-ups, `extra` goes into each."""
    for r, wall in enumerate(walls):
        warm = r < warmup
        record = {
            "schema": "scalebench.run/1",
            "kernel": kernel,
            "lang": "py",
            "model": model,
            "threads": threads,
            "ranks": 1,
            "params": {},
            "rep": r if warm else r - warmup,
            "warmup": warm,
            "wall_s": wall,
            "placement": [[0, 0]] * threads,
            "checksum": "fnv1a64:0000000000000000",
        } | extra
        sys.stdout.write(json.dumps(record) + "\n")
