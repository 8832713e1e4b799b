"""The per-cycle bounds of the Mandelbrot and π inner loops on one node, derived from what
build/bin/simd-bounds (kernels/bounds/simd_bounds.c) measured there, and the file that keeps it in a
campaign: hosts/bounds/<hostname>.json (docs/formats.md, derivations in docs/simd-bounds.md).

The file is read back as untrusted input: opened without following links, a regular file of at most
MAX_BYTES, every field checked (types, ranges, positive finite figures); anything else is one
ValueError naming the file. The jobs side writes it (jobs/simd_bounds.py), the analysis reads it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

SCHEMA = "scalebench.simd-bounds/1"
DIRECTORY = Path("hosts") / "bounds"  # inside the campaign: one file per host
MAX_BYTES = 64 * 1024
PATHS = ("scalar", "avx2", "avx512")  # the records' inner_path values
# What each inner path's bounds rest on (cycles; kernels/bounds/simd_bounds.c says how each is timed).
FIGURES = {
    "scalar": ("lat_mulsd", "lat_addsd", "lat_subsd", "mix_mcpi_scalar"),
    "avx2": ("lat_mulpd_256", "lat_addpd_256", "lat_subpd_256", "mix_mandelbrot_256", "mix_mcpi_256"),
    "avx512": ("lat_mulpd_512", "lat_addpd_512", "lat_subpd_512", "mix_mandelbrot_512", "mix_mcpi_512"),
}
BITS = {"avx2": 256, "avx512": 512}
LANES = {"avx2": 4, "avx512": 8}  # doubles (Mandelbrot lanes) or 64-bit samples per vector
# Units of work one mix unit does: Mandelbrot lane-steps (iterations), π samples.
MIX_WORK = {
    "mix_mandelbrot_256": 4,  # one vector step: 4 vmulpd + 3 vaddpd
    "mix_mandelbrot_512": 16,  # two vector steps: 7 vmulpd + 7 vaddpd (2x as x+x on every second)
    "mix_mcpi_scalar": 1,
    "mix_mcpi_256": 4,
    "mix_mcpi_512": 8,
}
FIGURE_RANGE = (0.05, 1000.0)  # cycles: anything outside is not a measurement of these loops
CLOCK_RANGE = (0.05, 20.0)  # GHz
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")  # hostname, uarch: shown in reports as they are


@dataclass(frozen=True)
class Bound:
    kernel: str
    inner_path: str
    per_cycle: float  # useful iterations (Mandelbrot) or samples (π) per core cycle
    limited_by: str


def path_in(campaign_dir: Path, host: str) -> Path:
    return Path(campaign_dir) / DIRECTORY / f"{host}.json"


def bounds(doc: dict) -> list[Bound]:
    """The bound of each (kernel, inner path) the validated document has figures for."""
    fig = doc["figures"]
    out = []
    if "scalar" in doc["paths"]:
        mul, add, sub = fig["lat_mulsd"], fig["lat_addsd"], fig["lat_subsd"]
        # the compiled loop: x' = (x*x - y*y) + cx, y' = ((x+x)*y) + cy (GCC makes 2*x an add)
        chain = max(mul + sub + add, add + mul + add)
        out.append(
            Bound(
                "mandelbrot",
                "scalar",
                1.0 / chain,
                f"latency: one iteration is a {chain:.2f}-cycle chain (x' = (x*x - y*y) + cx: mul {mul:.2f} "
                f"+ sub {sub:.2f} + add {add:.2f}; y' = ((x+x)*y) + cy: add + mul + add)",
            )
        )
        out.append(_mix_bound("mcpi", "scalar", fig, "mix_mcpi_scalar", "the scalar loop's instructions"))
    for path in ("avx2", "avx512"):
        if path not in doc["paths"]:
            continue
        bits, lanes = BITS[path], LANES[path]
        mix = f"mix_mandelbrot_{bits}"
        mul, add, sub = (fig[f"lat_{op}pd_{bits}"] for op in ("mul", "add", "sub"))
        chain = max(mul + sub + add, mul + mul + add)  # 2*x as a multiply on (some) vectors
        vectors = doc["vectors"][f"mandelbrot_{bits}"]
        by_latency = vectors * lanes / chain
        by_mix = MIX_WORK[mix] / fig[mix]
        if by_mix <= by_latency:
            why = (
                f"{bits}-bit instruction mix: {fig[mix]:.2f} cycles per {MIX_WORK[mix]} lane-steps "
                f"(latency would allow {by_latency:.2f}: {vectors} vectors on a {chain:.2f}-cycle chain)"
            )
        else:
            why = (
                f"latency: {vectors} vectors of {lanes} lanes on a {chain:.2f}-cycle chain "
                f"(the {bits}-bit mix would allow {by_mix:.2f})"
            )
        out.append(Bound("mandelbrot", path, min(by_mix, by_latency), why))
        out.append(_mix_bound("mcpi", path, fig, f"mix_mcpi_{bits}", f"the {bits}-bit loop's instructions"))
    return out


def _mix_bound(kernel: str, path: str, fig: dict, name: str, what: str) -> Bound:
    work = MIX_WORK[name]
    unit = "sample" if work == 1 else f"{work} samples"
    return Bound(kernel, path, work / fig[name], f"{what}: {fig[name]:.2f} cycles per {unit}")


# ---- the file ---------------------------------------------------------------------------------------


def read(path: Path, dir_fd: int | None = None) -> dict:
    """The validated document of one cache file; ValueError naming the file otherwise. With dir_fd,
    `path`'s name is opened in that directory."""
    return validate(json_object(path, dir_fd), path)


def json_object(path: Path, dir_fd: int | None = None) -> object:
    """The JSON in `path`, opened without following a link (ValueError if it is one, or not a regular
    file, or too big, or not JSON)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(Path(path).name, flags, dir_fd=dir_fd) if dir_fd is not None else os.open(path, flags)
    except OSError as err:
        raise ValueError(f"{path}: cannot open ({err.strerror}; a link is not followed)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: not a regular file")
        if info.st_size > MAX_BYTES:
            raise ValueError(f"{path}: {info.st_size} bytes, more than {MAX_BYTES}")
        raw = os.read(fd, MAX_BYTES + 1)
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror})") from None
    finally:
        os.close(fd)
    try:
        return json.loads(raw)
    except ValueError as err:  # not JSON, or not UTF-8
        raise ValueError(f"{path}: not valid JSON ({err})") from None


def _number(value, name: str, low: float, high: float, where) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low <= value <= high:
        raise ValueError(f"{where}: {name} = {value!r}: not a number in [{low:g}, {high:g}]")
    return float(value)


def validate(doc: object, where) -> dict:
    """`doc` checked field by field (docs/formats.md); the figures as floats. Unknown keys are kept
    but never read."""
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{where}: schema {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("hostname", "uarch"):
        if not isinstance(doc.get(key), str) or not NAME.fullmatch(doc[key]):
            raise ValueError(f"{where}: {key} must be a name of letters, digits, '.', '_' and '-'")
    paths = doc.get("paths")
    if not isinstance(paths, list) or not set(paths) <= set(PATHS) or len(set(paths)) != len(paths):
        raise ValueError(f"{where}: paths = {paths!r}: a list of distinct {', '.join(PATHS)}")
    figures = doc.get("figures")
    if not isinstance(figures, dict):
        raise ValueError(f"{where}: figures must be an object")
    clean = {}
    for path in paths:
        for name in FIGURES[path]:
            if name not in figures:
                raise ValueError(f"{where}: figures.{name} missing (path {path} is listed)")
            clean[name] = _number(figures[name], f"figures.{name}", *FIGURE_RANGE, where)
    vectors = doc.get("vectors")
    if not isinstance(vectors, dict):
        raise ValueError(f"{where}: vectors must be an object")
    for key in ("mandelbrot_256", "mandelbrot_512"):
        value = vectors.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
            raise ValueError(f"{where}: vectors.{key} = {value!r}: not an integer in [1, 64]")
    clock = doc.get("clock_ghz", {})
    if not isinstance(clock, dict):
        raise ValueError(f"{where}: clock_ghz must be an object")
    for key, value in clock.items():
        _number(value, f"clock_ghz.{key}", *CLOCK_RANGE, where)
    if "cost_s" in doc:
        _number(doc["cost_s"], "cost_s", 0.0, 3600.0, where)
    if not isinstance(doc.get("settled", True), bool):
        raise ValueError(f"{where}: settled = {doc['settled']!r}: not true or false")
    unsettled = doc.get("unsettled", [])
    if not isinstance(unsettled, list) or not set(unsettled) <= set(clean):
        raise ValueError(f"{where}: unsettled = {unsettled!r}: not a list of the figures above")
    return doc | {"figures": clean}


def unsettled(doc: dict) -> list[str]:
    """The figures of a validated document whose two halves of the measurement disagreed (a slow phase
    of the host covered one of them: each is still the floor of all its trials, docs/simd-bounds.md)."""
    return list(doc.get("unsettled", [])) if doc.get("settled") is False else []


def read_all(campaign_dir: Path) -> tuple[dict[str, dict], list[tuple[str, str]]]:
    """hostname -> validated document for every hosts/bounds/<hostname>.json of the campaign, and the
    (file, reason) of each file that is not used (the directory itself is not followed if a link)."""
    directory = Path(campaign_dir) / DIRECTORY
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}, []
    except OSError as err:
        return {}, [(str(DIRECTORY), f"not read ({err.strerror}; a link is not followed)")]
    docs, problems = {}, []
    try:
        for name in sorted(os.listdir(dir_fd)):
            if not name.endswith(".json") or name.startswith("."):
                continue  # a writer's temporary file
            try:
                doc = read(directory / name, dir_fd)
                if doc["hostname"] != name[: -len(".json")]:
                    raise ValueError(f"{directory / name}: hostname {doc['hostname']!r} is not the file's")
            except ValueError as err:
                problems.append((str(DIRECTORY / name), str(err)))
                continue
            docs[doc["hostname"]] = doc
    finally:
        os.close(dir_fd)
    return docs, problems
