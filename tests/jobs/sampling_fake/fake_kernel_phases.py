#!/usr/bin/env python3
"""Stand-in kernel for a synthetic host with planted slow phases: every process takes the next slot of
the host's timeline (a counter in --timeline FILE) and its wall_s is the true time (1 s serial,
1/threads otherwise: the model is the last part of the name it is called by) times 2 inside a planted
window of slots (--slow "a-b,c-d": slots a..b-1 and c..d-1), times 1 + a deterministic jitter within
+-J of its slot (--jitter J); with --inner simd a quarter of that. Deterministic; `work` is its slot."""

import sys
from pathlib import Path

from fake_record import in_windows, print_records, take_slot, timeline_parser

parser = timeline_parser("fake kernel: --reps --warmup --threads --timeline --slow")
parser.add_argument("--jitter", type=float, default=0.0)
parser.add_argument("--inner", choices=("scalar", "simd"), default="scalar")
args = parser.parse_args()
slot = take_slot(args.timeline)
factor = 2.0 if in_windows(slot, args.slow) else 1.0
factor *= 1 + args.jitter * ((slot * 7919) % 13 - 6) / 6
model = Path(sys.argv[0]).name.rsplit("-", 1)[-1]
true_s = (1.0 if model == "serial" else 1.0 / args.threads) / (4 if args.inner == "simd" else 1)
walls = [true_s * factor] * (args.warmup + args.reps)
print_records("fakephase", model, args.threads, args.warmup, walls, work=slot)
