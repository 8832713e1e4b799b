"""The likwid marker API is loaded at run time: no kernel links liblikwid (its start-up would cost every
process), plain runs leave likwid silent, and under likwid-perfctr -m (LIKWID_EVENTS set) the harness
loads the library and calls its marker initialisation, which speaks for itself on stderr."""

import shutil
import subprocess

import pytest

from ..kernel_records import run_raw

BINARIES = ["mandelbrot-c-serial", "mcpi-c-omp", "mandelbrot-c-pthreads", "mandelbrot-f-omp"]


@pytest.mark.parametrize("binary", BINARIES)
def test_no_kernel_links_liblikwid(kernel, binary):
    needed = subprocess.run(
        ["readelf", "-d", str(kernel(binary))], capture_output=True, text=True, check=True
    )
    assert "(NEEDED)" in needed.stdout and "liblikwid" not in needed.stdout


@pytest.mark.skipif(shutil.which("likwid-perfctr") is None, reason="likwid is not installed")
def test_markers_load_likwid_only_when_perfctr_asks(kernel):
    plain = run_raw(kernel("mcpi-c-serial"), "--samples", 1000)
    assert plain.returncode == 0 and plain.stderr == ""
    # LIKWID_EVENTS without the rest of likwid-perfctr's environment: likwid's own marker initialisation
    # runs and says it has nothing to measure (or that it cannot reach the counters).
    asked = run_raw(kernel("mcpi-c-serial"), "--samples", 1000, env={"LIKWID_EVENTS": "x"})
    assert asked.returncode == 0, asked.stderr
    assert "Marker API" in asked.stderr or "MSR" in asked.stderr, asked.stderr
