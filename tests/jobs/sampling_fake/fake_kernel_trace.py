#!/usr/bin/env python3
"""Stand-in kernel on a simulated host that replays a real noise trace (trace_host.py): its
repetitions take the true time (--true-s: the serial kernel's at the median speed; split over
min(threads, CPUs) of the trace's CPUs for any other model, the last part of the name it is called
by, worker k on CPU k; a dynamic, guided or queue --schedule balances the split) times the trace's
slowdown at the moment they run (trace_host.py).

The moment: --clock virtual (the default) keeps the host's time in the --timeline file, advanced by
each process's repetitions and a fixed --overhead-s per process, so a run is deterministic whatever
the machine does; --clock real takes it from the real clock (seconds since the timeline file's first
process) and sleeps each repetition's simulated time, so the runner's own time limits and budgets
behave as on the traced host. --start-s shifts where in the trace the campaign begins.
`started` is the simulated moment (2026-01-01 plus the host's time), `work` the process's index."""

import fcntl
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_record import print_records, timeline_parser  # noqa: E402
from trace_host import TraceHost  # noqa: E402

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

parser = timeline_parser("fake kernel on a replayed noise trace")
parser.add_argument("--trace", required=True)
parser.add_argument("--true-s", type=float, required=True)
parser.add_argument("--overhead-s", type=float, default=0.02)
parser.add_argument("--clock", choices=("virtual", "real"), default="virtual")
parser.add_argument("--start-s", type=float, default=0.0)
parser.add_argument("--inner", default="scalar")  # accepted like the kernels' (the trace says the speed)
parser.add_argument("--schedule", default="")
parser.add_argument("--sync", default="")
args = parser.parse_args()

host = TraceHost(Path(args.trace))
model = Path(sys.argv[0]).name.rsplit("-", 1)[-1]
workers = 1 if model == "serial" else args.threads
cpus = range(min(workers, len(host.cpus)))
balanced = args.schedule.split(",")[0] in ("dynamic", "guided", "queue")

with open(args.timeline, "a+") as timeline:
    fcntl.flock(timeline, fcntl.LOCK_EX)
    timeline.seek(0)
    state = timeline.read().split()
    index = int(state[0]) if state else 0
    if args.clock == "virtual":
        now = float(state[1]) if len(state) > 1 else 0.0
    else:
        origin = float(state[1]) if len(state) > 1 else time.time()
        now = time.time() - origin
    now += args.overhead_s if args.clock == "virtual" else 0.0
    began = now
    walls = []
    for _ in range(args.warmup + args.reps):
        wall = host.repetition(args.true_s, args.start_s + now, cpus, balanced)
        walls.append(wall)
        if args.clock == "real":
            time.sleep(wall)
        now += wall
    timeline.seek(0)
    timeline.truncate()
    timeline.write(f"{index + 1} {now if args.clock == 'virtual' else origin}\n")
started = (EPOCH + timedelta(seconds=began)).isoformat().replace("+00:00", "Z")
os.environ.pop("SB_PIN_CPUS", None)
print_records("tracehost", model, workers, args.warmup, walls, work=index, started=started)
