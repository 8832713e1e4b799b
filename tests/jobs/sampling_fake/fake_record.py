"""The record the stand-in kernels of the sampling tests print (schema scalebench.run/1, one CPU per
worker, a zero checksum)."""

import json
import sys


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
