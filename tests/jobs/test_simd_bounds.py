"""The SIMD bounds measured once per host and campaign (jobs/simd_bounds.py, build/bin/simd-bounds): the
tool's figures are plausible for the core it ran on, the first caller writes the cache and later ones
read it, a bad cache is refused with one line naming it, a missing or broken tool measures nothing."""

import json
import re
import stat
import subprocess
from pathlib import Path

import pytest

from jobs import simd_bounds as probe
from jobs.hostinfo import hostname
from sbcore import simd_bounds
from sbcore.errors import UsageError

from ..analysis.test_simd_bounds import MEASURED_ON_REAL_CORES, ZEN5, document


@pytest.fixture(autouse=True)
def fresh_process_memo(monkeypatch):
    monkeypatch.setattr(probe, "_checked", {})


def test_the_tool_measures_every_figure_of_the_paths_this_cpu_has(kernel, capsys):
    tool = kernel("simd-bounds")
    doc = probe.measure(tool)
    if doc is None:  # a host busy through both attempts is the one refusal allowed, said in one line
        why = capsys.readouterr().err
        assert re.search(r"exit status 3: simd-bounds: \w+: \d+ of \d+ trials passed the check", why), why
        pytest.skip(f"the core was shared throughout the measurement: {why.strip()}")
    assert doc["hostname"] == hostname()
    # Its run by its own rule (how fast it is, perf/perf_simd.py prints; a test asserts no wall time): it
    # ran rounds for at least its --min-seconds, all of them inside what measuring cost the caller, and
    # it says settled exactly when it lists no figure as not settled.
    usage = subprocess.run([str(tool), "--help"], capture_output=True, text=True, check=True).stdout
    min_s = float(re.search(r"at\s+least --min-seconds \(([\d.]+)\)", usage)[1])
    assert min_s <= doc["seconds"] <= doc["cost_s"], doc
    assert doc["rounds"] >= 1 and doc["settled"] is (doc["unsettled"] == []), doc
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    flags = set(next(line for line in cpuinfo if line.startswith("flags")).split())
    expected = ["scalar"] + ["avx2"] * ("avx2" in flags) + ["avx512"] * ({"avx512f", "avx512dq"} <= flags)
    assert doc["paths"] == expected
    figures = doc["figures"]
    for name, value in figures.items():
        # every x86-64 FP op takes at least 2 cycles of latency; no loop issues more than 8 ops a cycle
        low = 1.5 if name.startswith("lat_") else 0.5
        assert low < value < 100, (name, value)
    assert figures["mix_mcpi_256" if "avx2" in doc["paths"] else "mix_mcpi_scalar"] > 4
    assert doc["vectors"] == {"mandelbrot_256": 6, "mandelbrot_512": 8}
    assert {b.inner_path for b in simd_bounds.bounds(doc)} == set(expected)


def test_the_first_caller_measures_and_caches_the_others_read(tmp_path, monkeypatch):
    stand_in_tool(tmp_path, monkeypatch, ZEN5_TOOL)  # the tool itself: the test above
    first = probe.cached_or_measured(tmp_path)
    path = simd_bounds.path_in(tmp_path, hostname())
    assert first is not None and path.is_file()
    assert json.loads(path.read_text())["figures"] == first["figures"]
    (tmp_path / "no-tool").mkdir()
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(tmp_path / "no-tool"))  # not measured again: read
    monkeypatch.setattr(probe, "_checked", {})  # as another process
    assert probe.cached_or_measured(tmp_path)["figures"] == first["figures"]


def test_a_bad_cache_is_refused_with_one_line_and_kept(tmp_path):
    path = simd_bounds.path_in(tmp_path, hostname())
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "scalebench.simd-bounds/1", "figures": {"lat_mulsd": -1}}')
    with pytest.raises(UsageError) as err:
        probe.cached_or_measured(tmp_path)
    assert str(path) in str(err.value) and "delete it" in str(err.value) and "\n" not in str(err.value)
    assert path.read_text().startswith('{"schema"')  # nothing measured is overwritten
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UsageError, match="a link is not followed"):
        probe.cached_or_measured(tmp_path)


def test_without_the_tool_nothing_is_measured_nor_cached(tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(tmp_path / "bin"))
    assert probe.cached_or_measured(tmp_path / "c") is None
    assert not (tmp_path / "c" / simd_bounds.DIRECTORY).exists()


# A stand-in's script that prints what a Zen 5 core measured.
ZEN5_TOOL = f"cat <<'EOF'\n{json.dumps(document(ZEN5, uarch='zen5'))}\nEOF"


def stand_in_tool(tmp_path, monkeypatch, script: str):
    """build/bin/simd-bounds replaced by a shell script (selected through SCALEBENCH_BIN_DIR)."""
    tool = tmp_path / "bin" / probe.TOOL
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\n{script}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SCALEBENCH_BIN_DIR", str(tool.parent))
    return tool


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ('echo \'{"schema": "scalebench.simd-bounds/1"}\'', "its output: uarch must be"),
        ("echo not json", "Expecting value"),
        ("echo oops >&2; exit 3", "exit status 3: oops"),
    ],
)
def test_a_broken_tool_is_one_warning_and_no_cache(tmp_path, monkeypatch, capsys, script, why):
    stand_in_tool(tmp_path, monkeypatch, script)
    assert probe.cached_or_measured(tmp_path / "c") is None
    err = capsys.readouterr().err
    assert why in err and "SIMD bounds not measured" in err and err.count("\n") == 1
    assert not simd_bounds.path_in(tmp_path / "c", hostname()).exists()


def test_the_rates_recorded_on_this_core_stay_within_the_bounds_measured_now(kernel):
    """The bound measured here, loaded or not, is never below what this core's kernels were measured to
    reach (before the floor, one run in four read a slow phase: the scalar π loop at 136 % of it)."""
    doc = probe.measure(kernel("simd-bounds"))
    if doc is None:
        pytest.skip("the core was shared throughout the measurement (the tool said so)")
    rates = {uarch: rates for _, _, _, uarch, rates in MEASURED_ON_REAL_CORES}.get(doc["uarch"])
    if rates is None:
        pytest.skip(f"no kernel rates recorded for a {doc['uarch']} core")
    bound = {(b.kernel, b.inner_path): b.per_cycle for b in simd_bounds.bounds(doc)}
    for key, rate in rates.items():
        if key in bound:
            assert rate <= bound[key], (
                f"{key}: {rate} per cycle is {100 * rate / bound[key]:.0f} % of {bound[key]:.4g}"
            )


def test_a_process_measures_at_most_once_when_the_tool_fails(tmp_path, monkeypatch, capsys):
    stand_in_tool(
        tmp_path, monkeypatch, f'echo "run $*" >> {tmp_path / "runs"}\necho "core shared" >&2\nexit 3'
    )
    assert probe.cached_or_measured(tmp_path / "c") is None
    assert probe.cached_or_measured(tmp_path / "c") is None
    # a shared core (exit 3) is tried once more, for longer, then never again by this process
    assert (tmp_path / "runs").read_text() == f"run \nrun --max-seconds {probe.RETRY_MAX_S}\n"
    assert "exit status 3: core shared" in capsys.readouterr().err


def test_a_shared_core_is_measured_again_once(tmp_path, monkeypatch):
    once = tmp_path / "once"
    # exit 3 (a shared core) on its first run, a Zen 5 core's document on the second
    tool = stand_in_tool(
        tmp_path, monkeypatch, f"if [ ! -e {once} ]; then touch {once}; exit 3; fi\n{ZEN5_TOOL}"
    )
    doc = probe.measure(tool)
    assert doc is not None and doc["figures"] == ZEN5
