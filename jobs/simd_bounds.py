"""The SIMD bounds of this node, measured once per host and campaign: build/bin/simd-bounds
(kernels/bounds/simd_bounds.c) times the latencies and instruction mixes the bounds rest on, and the
result is cached in the campaign as hosts/bounds/<hostname>.json (sbcore/simd_bounds.py reads it and
derives the bounds; docs/simd-bounds.md, docs/formats.md).

The first invocation of a runner or Slurm array task on a node that finds no cache measures, inside
the host's measurement lock it holds for its kernel (no other kernel runs beside it; a wait for the
lock is the invocation's lock_wait_s), and writes the file atomically (the first writer wins); the
others find it (each process reads it once). The tool runs 1.5 to 4.5 s; it fails (exit 3) when
another thread kept the core busy throughout, is run once more for up to 12 s, and a process that failed
twice does not try again. A cache that
does not validate is refused with one line naming it: it is not trusted, and not overwritten either
(delete it to measure again). Without the
tool (not built, or a test's stand-in binary directory) nothing is measured and the analysis says so.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from jobs.binaries import binary_path
from jobs.hostinfo import hostname
from sbcore import simd_bounds
from sbcore.atomic import dump_json, write_new
from sbcore.errors import UsageError

TOOL = "simd-bounds"
TIMEOUT_S = 60


_checked: dict[Path, dict | None] = {}  # per process: the caches already read, or measured in vain


def cached_or_measured(campaign_dir: Path) -> dict | None:
    """This host's bounds document of the campaign: read from its cache, else measured now and cached;
    None when the tool is missing or failed (one line on stderr says why). Call it holding the host's
    measurement lock (jobs/measure_lock.py)."""
    path = simd_bounds.path_in(campaign_dir, hostname())
    if path in _checked:
        return _checked[path]
    if os.path.lexists(path):
        _checked[path] = _cached(path)
        return _checked[path]
    tool = binary_path(TOOL)
    if not tool.is_file():
        return None
    doc = measure(tool)
    if doc is None:  # not tried again by this process: a host that failed once costs it once
        _checked[path] = None
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    if not write_new(path, dump_json(doc)):  # another host's task of the same name wrote it meanwhile
        doc = _cached(path)
    _checked[path] = doc
    return doc


def _cached(path: Path) -> dict:
    try:
        return simd_bounds.read(path)
    except ValueError as err:
        raise UsageError(f"{err}: not used; delete it to measure this host's SIMD bounds again") from None


# The tool's exit status when too few of its trials passed the check for a shared core (a slow phase of
# the host throughout its run): it is run once more, for up to RETRY_MAX_S (a phase of a few seconds has
# passed by then), before the host goes without.
HOST_BUSY = 3
RETRY_MAX_S = 12


def measure(tool: Path) -> dict | None:
    """The tool's document with hostname, time and cost added, validated; None (and one line on stderr)
    when the tool fails or prints something unusable."""
    started = time.monotonic()
    for args in ([], ["--max-seconds", str(RETRY_MAX_S)]):
        try:
            out = subprocess.run(
                [str(tool), *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return _failed(tool, str(err))
        if out.returncode != HOST_BUSY:
            break
    cost = time.monotonic() - started
    if out.returncode != 0:
        return _failed(tool, f"exit status {out.returncode}: {out.stderr.strip()[-300:]}")
    try:
        doc = json.loads(out.stdout)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        doc |= {
            "hostname": hostname(),
            "measured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cost_s": round(cost, 4),
        }
        simd_bounds.validate(doc, "its output")
    except ValueError as err:
        return _failed(tool, str(err))
    return doc


def _failed(tool: Path, why: str) -> None:
    print(f"scalebench: warning: {tool}: SIMD bounds not measured ({why})", file=sys.stderr)
    return None
