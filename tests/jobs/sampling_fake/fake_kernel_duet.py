#!/usr/bin/env python3
"""Stand-in kernel for duets on a synthetic host with planted slow phases: every process takes the
next slot of the host's timeline (a counter in --timeline FILE, under a lock: the two halves of a duet
start together) and sleeps --hold seconds, so that the two halves of a duet overlap; a duet d holds
slots 2d and 2d+1, and the host's factor is 2 for the duets listed in --slow ("a-b": duets a..b-1).
Its wall_s is the true time (1 s serial, 0.8 s for any other model: the last part of the name it is
called by) times that factor; `work` is its slot, `placement` the one CPU it was allowed to run on."""

import fcntl
import os
import sys
import time
from pathlib import Path

from fake_record import print_records, timeline_parser

parser = timeline_parser("fake duet kernel: --reps --warmup --threads --timeline --slow")
parser.add_argument("--hold", type=float, default=0.3)
args = parser.parse_args()
with open(args.timeline, "a+") as timeline:
    fcntl.flock(timeline, fcntl.LOCK_EX)
    timeline.seek(0)
    slot = int(timeline.read() or 0)
    timeline.seek(0)
    timeline.truncate()
    timeline.write(str(slot + 1))
started = time.time()
time.sleep(args.hold)
windows = [tuple(map(int, w.split("-"))) for w in args.slow.split(",") if w]
factor = 2.0 if any(a <= slot // 2 < b for a, b in windows) else 1.0
model = Path(sys.argv[0]).name.rsplit("-", 1)[-1]
true_s = 1.0 if model == "serial" else 0.8
(cpu,) = os.sched_getaffinity(0) if len(os.sched_getaffinity(0)) == 1 else (-1,)
walls = [true_s * factor] * (args.warmup + args.reps)
stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started)) + f".{int(started % 1 * 1e6):06d}Z"
print_records(
    "fakeduet", model, args.threads, args.warmup, walls, work=slot, placement=[[cpu, cpu]], started=stamp
)
