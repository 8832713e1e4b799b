"""Work per cycle per core and % of bound (stats/efficiency.py, simd_bounds.csv) and its report section."""

import pandas as pd
import pytest

from analysis.outputs.report.sections.efficiency import TITLE
from analysis.records.flatten import flatten_record
from analysis.reference_data import SIMD_BOUNDS, load_bounds
from analysis.stats.efficiency import COLUMNS, efficiency

from ..kernel_records import run_records


def summary_row(case_id: str, kernel: str, inner: str, workers: int) -> dict:
    return {
        "case_id": case_id,
        "binary": f"{kernel}-c-omp",
        "kernel": kernel,
        "inner": inner,
        "workers": workers,
        "node_type": "ws",
    }


def record(case_id, kernel, path, work, wall, ghz, threads=1, uarch="zen3") -> dict:
    return {
        "case_id": case_id,
        "kernel": kernel,
        "inner_path": path,
        "uarch": uarch,
        "work": work,
        "wall_s": wall,
        "clock_ghz": ghz,
        "threads": threads,
        "ranks": 1,
    }


def test_per_cycle_per_core_and_percent_of_bound():
    summary = pd.DataFrame(
        [
            summary_row("a", "mandelbrot", "simd", 2),
            summary_row("b", "mcpi", "scalar", 1),
            summary_row("c", "mandelbrot", "simd", 4),
            summary_row("d", "mandelbrot", "simd", 1),
        ]
    )
    records = pd.DataFrame(
        [
            # 2 workers x 1 s x 2 GHz = 4e9 core cycles; 4.8e9 iterations -> 1.2 per cycle
            record("a", "mandelbrot", "avx2", 4.8e9, 1.0, 2.0, threads=2),
            record("a", "mandelbrot", "avx2", 4.8e9, 2.0, 2.0, threads=2),  # 0.6
            record("a", "mandelbrot", "avx2", 4.8e9, 0.5, 2.0, threads=2),  # 2.4 -> median 1.2
            record("b", "mcpi", "scalar", 1e9, 1.0, 10.0),  # 0.1 per cycle
            record("c", "mandelbrot", "avx2", 1e9, 1.0, 1.0, threads=4, uarch="sparc"),  # no bound
            record("d", "mandelbrot", "avx2", 1e9, 1.0, None),  # no clock: left out
        ]
    )
    out = efficiency(summary, records, {"ws": 2}, load_bounds()).set_index("case_id")
    assert list(out.reset_index().columns) == COLUMNS
    assert out.loc["a", "per_cycle_core"] == pytest.approx(1.2)
    bound = load_bounds().set_index(["kernel", "inner_path", "uarch"])["bound_per_cycle"]
    assert out.loc["a", "bound_per_cycle"] == bound[("mandelbrot", "avx2", "zen3")]
    assert out.loc["a", "pct_of_bound"] == pytest.approx(100 * 1.2 / bound[("mandelbrot", "avx2", "zen3")])
    assert out.loc["a", "n"] == 3
    assert out.loc["b", "pct_of_bound"] == pytest.approx(100 * 0.1 / 0.1818)
    assert pd.isna(out.loc["c", "bound_per_cycle"]) and pd.isna(out.loc["c", "pct_of_bound"])
    assert bool(out.loc["c", "oversubscribed"]) and not bool(out.loc["a", "oversubscribed"])
    assert "d" not in out.index


def test_records_without_clock_give_an_empty_table():
    summary = pd.DataFrame([summary_row("a", "mcpi", "scalar", 1)])
    records = pd.DataFrame([{"case_id": "a", "work": 1, "wall_s": 1.0, "threads": 1, "ranks": 1}])
    assert efficiency(summary, records, {}, load_bounds()).empty


def test_real_kernel_records_flatten_into_a_per_cycle_row(kernel):
    """The kernel's inner_path, uarch and clock_ghz reach the table through flatten_record."""
    (raw,) = run_records(kernel("mcpi-c-serial"), "--samples", 200000, "--inner", "simd")
    raw.update(case_id="k", rep=0, status="ok")  # the harness fields run-case adds
    row, _ = flatten_record(raw, "raw/k/rep-0.json")
    assert (row["inner_path"], row["uarch"]) == (raw["inner_path"], raw["uarch"])
    out = efficiency(
        pd.DataFrame([summary_row("k", "mcpi", "simd", 1)]), pd.DataFrame([row]), {"ws": 2}, load_bounds()
    )
    assert len(out) == 1 and out.loc[0, "per_cycle_core"] > 0
    readings = raw["clock"]["before_ghz"], raw["clock"]["after_ghz"]
    assert out.loc[0, "clock_ghz"] == pytest.approx(max(readings))


def test_the_higher_clock_reading_counts():
    """One reading lowered by an interruption (2.0 against 3.0 GHz) must not inflate the per-cycle
    figure: the cycles are counted at 3.0 GHz, not at the mean 2.5."""
    rec = record("a", "mandelbrot", "avx2", 3e9, 1.0, 2.5)
    rec["clock_max_ghz"] = 3.0
    out = efficiency(
        pd.DataFrame([summary_row("a", "mandelbrot", "simd", 1)]),
        pd.DataFrame([rec]),
        {"ws": 2},
        load_bounds(),
    )
    assert out.loc[0, "per_cycle_core"] == pytest.approx(1.0)


def test_bounds_table_is_consistent():
    bounds = load_bounds()
    by_key = bounds.set_index(["kernel", "inner_path", "uarch"])["bound_per_cycle"]
    for kernel in ("mandelbrot", "mcpi"):
        for uarch in ("zen2", "zen3", "zen4", "intel", "intel-avx512"):
            assert by_key[(kernel, "avx2", uarch)] > by_key[(kernel, "scalar", uarch)], (kernel, uarch)
        assert (kernel, "avx512", "intel-avx512") in by_key.index


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kernel,inner_path,uarch,bound_per_cycle\nmcpi,avx2,zen3,0.2\n", "missing column(s) limited_by"),
        (
            "kernel,inner_path,uarch,bound_per_cycle,limited_by\nmcpi,avx2,zen3,0.2,x\nmcpi,avx2,zen3,0.3,y\n",
            "duplicate bound for ('mcpi', 'avx2', 'zen3')",
        ),
        ("kernel,inner_path,uarch,bound_per_cycle,limited_by\nmcpi,avx2,zen3,-1,x\n", "positive number"),
    ],
)
def test_malformed_bounds_file_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "bounds.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"bounds\.csv: ") as err:
        load_bounds(path)
    assert message in str(err.value)
    assert load_bounds(SIMD_BOUNDS) is not None


def test_report_has_the_section_and_says_why_it_is_empty(rendered):
    _truth, result, _plots, written = rendered
    text = (result.out_dir / "report.md").read_text()
    assert TITLE in text
    assert "No record carries a measured core clock" in text
    assert (result.out_dir / "efficiency.csv").is_file()


def test_the_report_states_the_clock_each_path_ran_at_and_a_licence_drop():
    from analysis.outputs.report.sections.efficiency import clock_sentence
    from analysis.stats.efficiency import clock_by_path

    table = pd.DataFrame(
        {
            "uarch": ["intel-avx512"] * 3 + ["zen5"] * 2,
            "inner_path": ["scalar", "avx2", "avx512", "scalar", "avx512"],
            "clock_ghz": [3.1, 3.05, 2.5, 4.3, 4.29],
        }
    )
    clocks = clock_by_path(table).set_index(["uarch", "inner_path"])
    assert clocks.loc[("intel-avx512", "avx512"), "below_scalar_pct"] == pytest.approx(100 * (1 - 2.5 / 3.1))
    text = clock_sentence(clock_by_path(table))
    assert (
        "intel-avx512: avx2 3.05 GHz, avx512 2.50 GHz (19 % below the scalar loop's), scalar 3.10 GHz" in text
    )
    # within 2 %: no drop claimed
    assert "zen5: avx512 4.29 GHz, scalar 4.30 GHz" in text
    # no scalar cases on a core: the clock alone
    assert "below" not in clock_sentence(clock_by_path(table[table["inner_path"] != "scalar"]))
