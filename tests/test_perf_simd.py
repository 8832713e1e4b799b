"""perf/perf_simd.py end to end on a small problem: every run gets a host phase from its probe and the
per-phase tables and verdicts are printed (the script is part of `make perf`, which stops at the first
script that fails)."""

from tests.perf_scripts import load_perf_script


def test_small_runs_are_classified_and_tabled(monkeypatch, capsys):
    ps = load_perf_script("perf_simd")
    small = ["--preset", "asymmetric", "--width", "96", "--height", "64"]
    monkeypatch.setitem(ps.PROBLEM, "mandelbrot", small)
    monkeypatch.setitem(ps.PROBLEM, "mcpi", ["--samples", "200000", "--seed", "1"])
    monkeypatch.setattr("sys.argv", ["perf_simd.py", "--trials", "2"])
    assert ps.main() == 0
    out = capsys.readouterr().out
    counted = out.split("host phase per SIMD run, from the probe's FP-throughput block: ")[1].splitlines()[0]
    per_phase = counted.split(" of ")[0].split(", ")
    assert sum(int(part.split()[1]) for part in per_phase) == 12  # 6 SIMD cases x 2 trials
    assert "checksums differ" not in out
    assert "iterations/cycle/core" in out and "samples/cycle/core" in out
