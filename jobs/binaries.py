"""The kernel binaries in build/bin: which exist, which the build skipped and why, and which options each
one takes (from its --help)."""

import functools
import re
import subprocess
from pathlib import Path

from sbcore.errors import ScalebenchError
from sbcore.install import bin_dir, source_root
from sbcore.names import name_problem

ROOT = source_root()  # the clone, or the one a pip install was made from
OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
# Written by `make kernels`: one "<binary>\t<why>" line per kernel a missing optional compiler kept
# from being built (the Makefile's kernels_need).
UNAVAILABLE_FILE = "unavailable.tsv"


def binary_path(name: str) -> Path:
    return bin_dir() / name


def unavailable_kernels() -> dict[str, str]:
    """Binary name -> why the build skipped it (empty when everything was built)."""
    try:
        text = (bin_dir() / UNAVAILABLE_FILE).read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        name, sep, why = line.partition("\t")
        if sep and not binary_path(name).is_file():
            found[name] = why
    return found


def split_name(name: str) -> tuple[str, str, str]:
    """'mandelbrot-c-omp' -> ('mandelbrot', 'c', 'omp')."""
    parts = name.split("-") if name_problem(name) is None else []
    if len(parts) != 3 or not all(parts):
        raise ValueError(name)
    return parts[0], parts[1], parts[2]


@functools.cache
def binary_options(path: Path) -> frozenset[str]:
    """Long options the binary documents in its --help (names without '--')."""
    try:
        out = subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=30, check=False)
    except OSError as err:
        raise ScalebenchError(f"{path}: cannot run --help: {err}") from None
    if out.returncode != 0:
        raise ScalebenchError(f"{path} --help failed with exit status {out.returncode}")
    return frozenset(OPTION.findall(out.stdout + out.stderr))


def is_mpi(model: str) -> bool:
    return model == "mpi" or model.startswith("mpi")
