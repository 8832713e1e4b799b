#!/usr/bin/env python3
"""Stand-in kernel for a synthetic host with planted slow phases: every process takes the next slot of
the host's timeline (a counter in --timeline FILE) and its wall_s is the true time (1 s serial,
1/threads otherwise: the model is the last part of the name it is called by) times 2 inside a planted
window of slots (--slow "a-b,c-d": slots a..b-1 and c..d-1). Deterministic; `work` is its slot."""

import argparse
import json
import sys
from pathlib import Path

parser = argparse.ArgumentParser(description="fake kernel: --reps --warmup --threads --timeline --slow")
parser.add_argument("--reps", type=int, default=1)
parser.add_argument("--warmup", type=int, default=0)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--timeline", required=True)
parser.add_argument("--slow", default="")
args = parser.parse_args()
timeline = Path(args.timeline)
slot = int(timeline.read_text()) if timeline.exists() else 0
timeline.write_text(str(slot + 1))
windows = [tuple(map(int, w.split("-"))) for w in args.slow.split(",") if w]
factor = 2.0 if any(a <= slot < b for a, b in windows) else 1.0
model = Path(sys.argv[0]).name.rsplit("-", 1)[-1]
true_s = 1.0 if model == "serial" else 1.0 / args.threads
for r in range(args.warmup + args.reps):
    warm = r < args.warmup
    record = {
        "schema": "scalebench.run/1",
        "kernel": "fakephase",
        "lang": "py",
        "model": model,
        "threads": args.threads,
        "ranks": 1,
        "params": {},
        "rep": r if warm else r - args.warmup,
        "warmup": warm,
        "wall_s": true_s * factor,
        "work": slot,
        "placement": [[0, 0]] * args.threads,
        "checksum": "fnv1a64:0000000000000000",
    }
    sys.stdout.write(json.dumps(record) + "\n")
