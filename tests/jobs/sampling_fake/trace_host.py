"""A simulated host that replays real noise traces: a CSV of back-to-back repetitions of one kernel on
each CPU (columns `cpu`, `seq`, `wall_s`, as the traces of a shared 2-vCPU guest hold them), read as
each CPU's speed over time. At a moment t of the trace, CPU c runs a kernel `factor` times slower than
its median (the repetition that covered t: its wall_s over the CPU's median); the trace wraps round.

A simulated repetition whose work takes T at the median speed on one CPU, split over a set of CPUs,
takes T / n times the slowest CPU's mean factor over the time it runs (a static split), or T over
the sum of the CPUs' speeds (a dynamic schedule: the faster CPUs take more); two fixed-point steps,
as the time depends on the factor and the factor on the time. The CPUs' traces are taken as they
were recorded, side by side from their first repetitions: slow phases of one CPU need not be slow
phases of the other."""

from __future__ import annotations

import bisect
import csv
import statistics
from itertools import accumulate
from pathlib import Path


class TraceHost:
    def __init__(self, path: Path):
        walls: dict[int, list[tuple[int, float]]] = {}
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                walls.setdefault(int(row["cpu"]), []).append((int(row["seq"]), float(row["wall_s"])))
        if not walls:
            raise ValueError(f"{path}: no repetitions")
        self.cpus = sorted(walls)
        self.ends, self.integral, self.factor = {}, {}, {}
        for cpu in self.cpus:
            wall = [w for _, w in sorted(walls[cpu])]
            median = statistics.median(wall)
            self.factor[cpu] = [w / median for w in wall]
            self.ends[cpu] = list(accumulate(wall))
            # the factor integrated over time, up to the end of each repetition
            self.integral[cpu] = list(accumulate(w * f for w, f in zip(wall, self.factor[cpu], strict=True)))
        self.length = min(float(self.ends[c][-1]) for c in self.cpus)

    def _integral(self, cpu: int, t: float) -> float:
        """The factor integrated from 0 to t (t within one round of the trace)."""
        ends, integral, factor = self.ends[cpu], self.integral[cpu], self.factor[cpu]
        i = bisect.bisect_right(ends, t)
        if i >= len(ends):
            return integral[-1]
        before_end = ends[i - 1] if i else 0.0
        before_integral = integral[i - 1] if i else 0.0
        return before_integral + factor[i] * (t - before_end)

    def mean_factor(self, cpu: int, start: float, duration: float) -> float:
        """The mean factor of one CPU over [start, start + duration), wrapping round the trace."""
        if duration <= 0:
            i = bisect.bisect_right(self.ends[cpu], start % self.length)
            return self.factor[cpu][min(i, len(self.ends[cpu]) - 1)]
        total, t, left = 0.0, start % self.length, duration
        while left > 0:
            step = min(left, self.length - t)
            total += self._integral(cpu, t + step) - self._integral(cpu, t)
            left -= step
            t = 0.0
        return total / duration

    def repetition(self, true_s: float, start: float, cpus, balanced: bool = False) -> float:
        """The wall time of a repetition of true length true_s (its time on one CPU at the median
        speed) starting at `start`, its work split evenly over `cpus` (the trace's CPUs by index
        modulo their number): the slowest CPU's share ends it; `balanced` (a dynamic schedule): the
        faster CPUs take more, so the work ends at true_s / the sum of the CPUs' speeds."""
        used = sorted({self.cpus[c % len(self.cpus)] for c in cpus})

        def wall_at(duration: float) -> float:
            factors = [self.mean_factor(c, start, duration) for c in used]
            if balanced:
                return true_s / sum(1 / f for f in factors)
            return true_s / len(used) * max(factors)

        wall = wall_at(0.0)
        for _ in range(2):
            wall = wall_at(wall)
        return wall
