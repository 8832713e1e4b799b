#!/usr/bin/env python3
"""Stand-in kernel for the sampling tests: prints scalebench.run/1 records whose wall_s follow a known
distribution instead of computing anything.

--spread S: wall_s = 1 + S * u, u uniform in [-1, 1) from a generator seeded by the process id (every
invocation draws new values); --sleep T: seconds each invocation sleeps (spends runner time).
"""

import argparse
import os
import random
import time

from fake_record import print_records

parser = argparse.ArgumentParser(description="fake kernel: --reps --warmup --spread --sleep")
parser.add_argument("--reps", type=int, default=1)
parser.add_argument("--warmup", type=int, default=0)
parser.add_argument("--spread", type=float, default=0.0)
parser.add_argument("--sleep", type=float, default=0.0)
args = parser.parse_args()
time.sleep(args.sleep)
rng = random.Random(os.getpid() * 7919 + time.monotonic_ns())
walls = [1.0 + args.spread * rng.uniform(-1.0, 1.0) for _ in range(args.warmup + args.reps)]
print_records("fakedist", "serial", 1, args.warmup, walls)
