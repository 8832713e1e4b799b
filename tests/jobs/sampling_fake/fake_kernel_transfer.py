#!/usr/bin/env python3
"""Stand-in kernel for a synthetic host whose pair of CPUs is placed apart in planted windows: every
process takes the next slot of the host's timeline (a counter in --timeline FILE); inside a window of
slots (--apart "a-b,c-d": slots a..b-1 and c..d-1) the probe's cache-line round trip is 4e-7 s instead
of 5e-8 s (only where two workers can time one: --threads 2 or more) and a multi-worker process takes
twice as long (its contended lock); its wall_s is the true time (1 s serial, 1/threads otherwise: the
model is the last part of the name it is called by) times 1 + a deterministic jitter within +-J of its
slot (--jitter J). Deterministic; `work` is its slot."""

import sys
from pathlib import Path

from fake_record import in_windows, print_records, take_slot, timeline_parser

parser = timeline_parser("fake kernel: --reps --warmup --threads --timeline --apart --jitter")
parser.add_argument("--apart", default="")
parser.add_argument("--jitter", type=float, default=0.0)
args = parser.parse_args()
slot = take_slot(args.timeline)
apart = in_windows(slot, args.apart)
model = Path(sys.argv[0]).name.rsplit("-", 1)[-1]
true_s = 1.0 if model == "serial" else 1.0 / args.threads
factor = (2.0 if apart and args.threads > 1 else 1.0) * (1 + args.jitter * ((slot * 7919) % 13 - 6) / 6)
trip = (4e-7 if apart else 5e-8) if args.threads > 1 else None
side = {"cpus": list(range(args.threads)), "xfer_s": [None] + [trip] * (args.threads - 1)}
probe = {"before": side, "after": side, "min_s": {"xfer": trip}, "max_s": {"xfer": trip}}
walls = [true_s * factor] * (args.warmup + args.reps)
print_records("fakexfer", model, args.threads, args.warmup, walls, work=slot, probe=probe)
