"""The OMPT side of a user program's case: the environment that loads scalebench's OMPT tool
(kernels/ompt/sb_ompt.c, built into build/lib/libscalebench_ompt.so) and the tool's report read back as
the record's per-worker fields that the POP metrics use (docs/own-programs.md, docs/pop-metrics.md).

Two modes:
- "native": the program runs on an OpenMP runtime with OMPT (LLVM's libomp, Intel's); the tool is
  named in OMP_TOOL_LIBRARIES.
- "libomp": a program built with GCC (libgomp has no OMPT) runs on LLVM's libomp instead, which
  implements the GOMP_ entry points: a directory holding libgomp.so.1 -> libomp.so.5
  (build/lib/libomp-as-libgomp/, made by `make kernels`) goes first on LD_LIBRARY_PATH. The program is
  checked first (readelf): it must load libgomp.so.1 dynamically, carry no DT_RPATH (which would win
  over LD_LIBRARY_PATH and measure nothing), and need no libgomp symbol version that libomp lacks
  (libomp 14 has no OMP_5.0.1, OMP_5.0.2, OMP_5.1, GOMP_5.1).

The report (one JSON object, schema scalebench.ompt/1) is untrusted input like every file in a
campaign: opened without following links, a regular file of bounded size, every number finite and
within the process's time.
"""

from __future__ import annotations

import math
import os
import re
import stat
import subprocess
from pathlib import Path

import msgspec

from sbcore.errors import ScalebenchError
from sbcore.install import bin_dir

TOOL_NAME = "libscalebench_ompt.so"
STANDIN_DIR = "libomp-as-libgomp"
REPORT_SCHEMA = "scalebench.ompt/1"
MODES = ("native", "libomp")
MAX_REPORT_BYTES = 1 << 20
# Clock slack between the tool's own intervals (monotonic clock, nanoseconds) when checking that a
# thread's useful time fits in the parallel time and that in the tool's lifetime.
SLACK_S = 1e-3


class OmptUnavailable(ScalebenchError):
    """The OMPT method cannot run for this program here (one line: why, and what to do)."""


class OmptReportError(Exception):
    """The tool's report is missing or not what the tool writes (one line naming the file)."""


class _Thread(msgspec.Struct, forbid_unknown_fields=True):
    useful_s: float
    lock_wait_s: float
    regions: int


class _Report(msgspec.Struct, forbid_unknown_fields=True):
    schema: str
    runtime: str
    tool_s: float
    parallel_s: float
    regions: int
    threads_dropped: int
    callbacks: dict[str, bool]
    threads: list[_Thread]


def lib_dir() -> Path:
    """build/lib beside build/bin (the tool and the libomp stand-in)."""
    return bin_dir().parent / "lib"


def tool_path() -> Path:
    return lib_dir() / TOOL_NAME


def ompt_env(mode: str, out_path: Path, program: Path | None = None) -> dict[str, str]:
    """The variables to add to a program's environment so that the tool measures it and writes its
    report to out_path. For mode "libomp" the program (when given) is checked to run on the
    stand-in; LD_LIBRARY_PATH keeps what the caller's environment had after the stand-in."""
    if mode not in MODES:
        raise OmptUnavailable(f"OMPT mode {mode!r} is not one of {', '.join(MODES)}")
    tool = tool_path()
    if not tool.is_file():
        raise OmptUnavailable(
            f"OMPT tool not built: {tool} is missing (make kernels; it needs omp-tools.h from LLVM's "
            "OpenMP, Debian libomp-14-dev)"
        )
    env = {"OMP_TOOL": "enabled", "OMP_TOOL_LIBRARIES": str(tool), "SB_OMPT_OUT": str(out_path)}
    if mode == "libomp":
        standin = lib_dir() / STANDIN_DIR
        if not (standin / "libgomp.so.1").exists():
            raise OmptUnavailable(
                f"LLVM's libomp was not found when scalebench was built ({standin}/libgomp.so.1 is "
                "missing): install libomp5 (Debian libomp5-14) or module load llvm, then make kernels"
            )
        if program is not None:
            check_libomp_standin(program, standin / "libgomp.so.1")
        before = os.environ.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = f"{standin}:{before}" if before else str(standin)
    return env


def _readelf(args: list[str], path: Path) -> str:
    try:
        done = subprocess.run(
            ["readelf", *args, "--", str(path)], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise OmptUnavailable(f"cannot check {path} for the libomp stand-in: readelf: {err}") from None
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["not an ELF file"])[0]
        raise OmptUnavailable(f"cannot check {path} for the libomp stand-in: {first}")
    return done.stdout


def _versions_needed(version_info: str, library: str) -> set[str]:
    """The symbol versions a binary needs from one library (readelf -V's .gnu.version_r)."""
    needed, inside = set(), False
    for line in version_info.splitlines():
        file_line = re.search(r"File:\s*(\S+)", line)
        if file_line:
            inside = file_line.group(1) == library
            continue
        name = re.search(r"Name:\s*(\S+)\s+Flags", line)
        if inside and name:
            needed.add(name.group(1))
    return needed


def _versions_defined(version_info: str) -> set[str]:
    """The symbol versions a library defines (readelf -V's .gnu.version_d)."""
    return set(re.findall(r"Rev: \d+\s+Flags: \S+\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)", version_info))


def check_libomp_standin(program: Path, standin: Path) -> None:
    """Raise OmptUnavailable unless the program would really run on libomp through LD_LIBRARY_PATH."""
    dynamic = _readelf(["-d", "-W"], program)
    if "(NEEDED)" not in dynamic or "[libgomp.so.1]" not in dynamic:
        raise OmptUnavailable(
            f"{program} does not load libgomp.so.1 dynamically: the libomp stand-in cannot replace its "
            'OpenMP runtime (use pop = "task-cpu")'
        )
    if "(RPATH)" in dynamic:
        raise OmptUnavailable(
            f"{program} carries a DT_RPATH, which wins over LD_LIBRARY_PATH: the libomp stand-in would "
            'not be loaded (relink with --enable-new-dtags, or use pop = "task-cpu")'
        )
    missing = _versions_needed(_readelf(["-V", "-W"], program), "libgomp.so.1") - _versions_defined(
        _readelf(["-V", "-W"], standin.resolve())
    )
    if missing:
        raise OmptUnavailable(
            f"{program} needs libgomp symbol versions that LLVM's libomp lacks "
            f'({", ".join(sorted(missing))}): it cannot run on the stand-in (use pop = "task-cpu")'
        )


def _read_regular(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise OmptReportError(
            f"{path}: the OMPT tool wrote no report (the program's OpenMP runtime has no OMPT, or it "
            "did not end through the runtime's shutdown)"
        ) from None
    except OSError as err:
        raise OmptReportError(f"{path}: cannot open the OMPT report: {err.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OmptReportError(f"{path}: the OMPT report is not a regular file")
        if info.st_size > MAX_REPORT_BYTES:
            raise OmptReportError(f"{path}: the OMPT report is larger than {MAX_REPORT_BYTES} bytes")
        return f.read(MAX_REPORT_BYTES + 1)


def _check(report: _Report, path: Path) -> None:
    def bad(what: str) -> OmptReportError:
        return OmptReportError(f"{path}: {what}")

    if report.schema != REPORT_SCHEMA:
        raise bad(f"schema {report.schema!r}, expected {REPORT_SCHEMA}")
    numbers = [report.tool_s, report.parallel_s] + [
        v for t in report.threads for v in (t.useful_s, t.lock_wait_s)
    ]
    if not all(math.isfinite(v) and v >= 0 for v in numbers):
        raise bad("a time that is negative or not finite")
    if report.parallel_s > report.tool_s + SLACK_S:
        raise bad(f"parallel_s {report.parallel_s} is longer than the tool's lifetime {report.tool_s}")
    for i, thread in enumerate(report.threads):
        if thread.useful_s > report.parallel_s + SLACK_S or thread.lock_wait_s > report.parallel_s + SLACK_S:
            raise bad(
                f"thread {i}'s useful or waiting time is longer than the parallel time {report.parallel_s}"
            )
        if thread.regions < 0 or thread.regions > report.regions:
            raise bad(f"thread {i} ran {thread.regions} regions of {report.regions}")
    if report.threads_dropped:
        raise bad(f"{report.threads_dropped} threads beyond the tool's table were not measured")
    if report.regions > 0 and not any(t.regions for t in report.threads):
        raise bad("parallel regions without any thread's implicit task (the runtime's callbacks are missing)")


def read_ompt_report(path: Path) -> dict:
    """The record fields from the tool's report:

    worker_useful_mean_s / _max_s   useful time in parallel regions, over the threads that ran one;
    worker_wait_mean_s              mean waiting for locks, critical sections and ordered regions;
    worker_wait_at_useful_max_s     that waiting of the thread with the largest useful time;
    parallel_s                      time inside outermost parallel regions (primary thread);
    serial_s                        the tool's lifetime outside them (serial code);
    ompt_threads, ompt_regions      threads that ran a region, outermost regions;
    ompt_runtime                    the runtime's version string.
    """
    try:
        report = msgspec.json.decode(_read_regular(path), type=_Report)
    except msgspec.ValidationError as err:
        raise OmptReportError(f"{path}: not an OMPT report of this tool: {err}") from None
    except msgspec.DecodeError as err:
        raise OmptReportError(f"{path}: not JSON: {err}") from None
    _check(report, path)
    workers = [t for t in report.threads if t.regions > 0]
    fields = {
        "parallel_s": report.parallel_s,
        "serial_s": max(0.0, report.tool_s - report.parallel_s),
        "ompt_threads": len(workers),
        "ompt_regions": report.regions,
        "ompt_runtime": report.runtime[:120],
    }
    if workers:
        critical = max(workers, key=lambda t: t.useful_s)
        fields |= {
            "worker_useful_mean_s": sum(t.useful_s for t in workers) / len(workers),
            "worker_useful_max_s": critical.useful_s,
            "worker_wait_mean_s": sum(t.lock_wait_s for t in workers) / len(workers),
            "worker_wait_at_useful_max_s": critical.lock_wait_s,
        }
    return fields
