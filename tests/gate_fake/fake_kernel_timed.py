#!/usr/bin/env python3
"""Stand-in kernel for the performance-gate test: prints scalebench.run/1 records whose wall_s is
known exactly instead of computing anything.

wall_s = --base x $SB_FAKE_SLOWDOWN (default 1) x (1 + 0.02 x j), j in {-1, -0.5, 0, 0.5, 1} chosen by
the repetition number: the same times in every run, a spread of +-2 % for the CIs to have a width.

A planted host phase: the kernel processes numbered in $SB_FAKE_DISTURBED_REPS (e.g. "0,2,4"; the
runner starts one process per measured repetition, so the n-th process of a case measures its n-th
repetition; counted per --base in files under $SB_FAKE_STATE_DIR) run
$SB_FAKE_PHASE_SLOWDOWN (default 1.5) times slower, and the machine-state probe around them says so
(its latency chains 1.6x their normal time), as on a host whose core another tenant takes for a while.
Every record carries the probe, as the real kernels' records do.
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
disturbed = {int(r) for r in os.environ.get("SB_FAKE_DISTURBED_REPS", "").split(",") if r.strip()}
process = 0
if disturbed:
    counter = os.path.join(os.environ["SB_FAKE_STATE_DIR"], f"processes-{args.base}")
    if os.path.exists(counter):
        with open(counter) as f:
            process = int(f.read())
    with open(counter, "w") as f:
        f.write(str(process + 1))
phase = float(os.environ.get("SB_FAKE_PHASE_SLOWDOWN", "1.5"))
NORMAL_S = {"int_mul": 0.000376, "fp_lat": 0.000372, "fp_tput": 0.00046}


def probe(slow: float) -> dict:
    """The machine-state probe around one repetition: every chain at its normal time, the latency
    chains `slow` times that after it."""
    before = {"cpus": [0]} | {f"{c}_s": [t] for c, t in NORMAL_S.items()}
    after = {"cpus": [0]} | {f"{c}_s": [t * (slow if c != "fp_tput" else 1)] for c, t in NORMAL_S.items()}
    return {
        "int_mul_iters": 400000,
        "fp_lat_iters": 400000,
        "fp_tput_iters": 500000,
        "before": before,
        "after": after,
        "runq_wait_s": 0.0,
        "min_s": {c: min(before[f"{c}_s"] + after[f"{c}_s"]) for c in NORMAL_S},
        "max_s": {c: max(before[f"{c}_s"] + after[f"{c}_s"]) for c in NORMAL_S},
    }


for r in range(args.warmup + args.reps):
    warm = r < args.warmup
    rep = r if warm else r - args.warmup
    jitter = (-1.0, -0.5, 0.0, 0.5, 1.0)[(rep * 3) % 5]
    in_phase = not warm and process in disturbed
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
        "wall_s": args.base * slowdown * (1 + 0.02 * jitter) * (phase if in_phase else 1),
        "probe": probe(1.6 if in_phase else 1.0),
        "placement": [[0, 0]],
        "checksum": "fnv1a64:0000000000000000",
    }
    sys.stdout.write(json.dumps(record) + "\n")
