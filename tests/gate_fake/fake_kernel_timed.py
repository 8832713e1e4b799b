#!/usr/bin/env python3
"""Stand-in kernel for the performance-gate test: prints scalebench.run/1 records whose wall_s is
known exactly instead of computing anything.

wall_s = --base x $SB_FAKE_SLOWDOWN (default 1) x (1 + 0.02 x j), j in {-1, -0.5, 0, 0.5, 1} chosen by
the repetition number: the same times in every run, a spread of +-2 % for the CIs to have a width.
"""

import argparse
import json
import os
import sys

parser = argparse.ArgumentParser(description="fake kernel: --reps --warmup --base")
parser.add_argument("--reps", type=int, default=1)
parser.add_argument("--warmup", type=int, default=0)
parser.add_argument("--base", type=float, default=0.1)
args, _ = parser.parse_known_args()
slowdown = float(os.environ.get("SB_FAKE_SLOWDOWN", "1"))
for r in range(args.warmup + args.reps):
    warm = r < args.warmup
    rep = r if warm else r - args.warmup
    jitter = (-1.0, -0.5, 0.0, 0.5, 1.0)[(rep * 3) % 5]
    record = {
        "schema": "scalebench.run/1",
        "kernel": "fakegate",
        "lang": "py",
        "model": "serial",
        "threads": 1,
        "ranks": 1,
        "params": {"base": args.base},
        "rep": rep,
        "warmup": warm,
        "wall_s": args.base * slowdown * (1 + 0.02 * jitter),
        "placement": [[0, 0]],
        "checksum": "fnv1a64:0000000000000000",
    }
    sys.stdout.write(json.dumps(record) + "\n")
