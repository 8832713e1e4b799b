"""Tables, plots and the report as files; the HTML report rendered in headless Chromium."""

import re
import shutil
import subprocess

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from analysis.outputs.plots.variants import mpi_plot
from analysis.stats.disturbance_effect import COLUMNS as DISTURBANCE_EFFECT_COLUMNS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def test_tables_are_written_with_their_key_columns(rendered):
    truth, result, _, _ = rendered
    out = result.out_dir
    assert not (out / "records.csv").exists() and not (out / "counters.csv").exists()  # on request only
    records = pd.read_parquet(out / "records.parquet")
    assert len(records) == truth.n_records  # every measured record, one row each
    assert {
        "ctr_cpi_avg",
        "ctr_l2_miss_ratio_max",
        "param_width",
        "param_samples",
        "threads",
        "wall_s",
    } <= set(records)
    summary = pd.read_csv(out / "summary.csv")
    assert {"n", "median_s", "min_s", "ci_low_s", "ci_high_s", "cv", "n_outliers", "n_warmup_dropped"} <= set(
        summary
    )
    speedup = pd.read_csv(out / "speedup.csv")
    named = speedup.dropna(subset=["speedup"])
    assert named["baseline_case_id"].notna().all() and (named["baseline_median_s"] > 0).all()
    for name in ("models.csv", "comparisons.csv"):
        assert len(pd.read_csv(out / name)) > 0, name
    assert len(pd.read_parquet(out / "counters.parquet")) > 0
    # no probe in these records: no flag, no cost of one, but the table and its columns are there
    assert (out / "disturbance_effect.csv").read_text().split("\n")[0].split(",") == [
        f'"{c}"' for c in DISTURBANCE_EFFECT_COLUMNS
    ]
    assert not list(out.glob(".*.tmp"))


def test_every_plot_exists_and_is_not_blank(rendered):
    _, _, plots, _ = rendered
    sections = {p.section for p in plots if not p.skipped}
    assert sections == {
        "scaling",
        "schedules",
        "sync",
        "languages",
        "mpi",
        "counters",
        "image",
        "node_types",
        "pop-metrics",
    }
    for plot in plots:
        assert plot.png.stat().st_size > 10_000 and plot.svg.stat().st_size > 10_000
        pixels = matplotlib.image.imread(plot.png)
        assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels[..., :3].std() > 0.05, plot.name


def test_plot_without_data_is_skipped_with_a_reason(standard):
    _, result = standard
    no_mpi = result.summary[result.summary["model"] != "mpi"]
    (plot,) = mpi_plot(no_mpi, result.out_dir / "unused")
    assert plot.skipped and plot.png is None


def test_report_markdown_puts_findings_first_and_provenance_last(rendered):
    truth, _, _, written = rendered
    text = written["md"].read_text()
    order = [
        text.index(h)
        for h in (
            "## Findings",
            "## Scaling",
            "## Variants",
            "## Validity details",
            "## Method",
            "## Provenance",
        )
    ]
    assert order == sorted(order)
    assert truth.wrong_checksum[0] in text and truth.failed[0] in text
    assert "| repetitions within one process |" in text
    for image in re.findall(r"!\[[^]]*\]\(([^)]+)\)", text):
        assert (written["md"].parent / image).is_file()


@pytest.mark.slow
def test_html_report_renders_offline_in_headless_chromium(rendered, tmp_path):
    _, _, plots, written = rendered
    html_file = written["html"]
    html = html_file.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained
    n_images = sum(1 for p in plots if not p.skipped)
    assert html.count("<img ") == n_images
    common = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,4000",
    ]
    dom = subprocess.run(
        [
            *common,
            f"--user-data-dir={tmp_path / 'profile-dom'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            html_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f'data-images="{n_images}"' in dom.stdout, dom.stderr[-2000:]
    assert 'data-images-ok="yes"' in dom.stdout
    shot = tmp_path / "report.png"
    subprocess.run(
        [*common, f"--user-data-dir={tmp_path / 'profile-shot'}", f"--screenshot={shot}", html_file.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (4000, 1280)
    assert np.var(pixels[..., :3]) > 0.005  # text, tables and plots, not a blank page


def test_image_plot_from_a_real_kernel_dump(bin_dir, tmp_path):
    """`mandelbrot-c-serial --dump` PGM: decoded as the kernel definition says, and plotted."""
    import subprocess as sp

    from analysis.outputs.plots.mandelbrot import mandelbrot_plot, read_pgm
    from tests.synthetic_campaigns import mandelbrot_pgm

    binary = bin_dir / "mandelbrot-c-serial"
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    dump = campaign / "dump.pgm"
    args = ["--width", "96", "--height", "64", "--max-iter", "100", "--reps", "1", "--warmup", "0"]
    sp.run([binary, *args, "--dump", dump], check=True, capture_output=True, timeout=60)
    reference = tmp_path / "reference.pgm"
    reference.write_bytes(mandelbrot_pgm(96, 64, 100))
    assert np.array_equal(read_pgm(dump), read_pgm(reference))
    (plot,) = mandelbrot_plot(campaign, tmp_path / "plots")
    assert plot.skipped is None and matplotlib.image.imread(plot.png)[..., :3].std() > 0.05


def test_the_records_and_counters_in_parquet_hold_what_their_csv_holds(standard, tmp_path):
    """--format records-csv writes records.csv and counters.csv beside the Parquet files: the Parquet
    files, read back and written as CSV by the same writer, are those CSV files byte for byte."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from analysis.pipeline import write_tables

    _, result = standard
    written = write_tables(result, big_csv=True)
    out = result.out_dir
    assert {out / "records.csv", out / "counters.csv", out / "records.parquet"} <= set(written)
    for name in ("records", "counters"):
        pacsv.write_csv(pq.read_table(out / f"{name}.parquet"), tmp_path / f"{name}.csv")
        csv = (out / f"{name}.csv").read_bytes()
        assert csv.count(b"\n") > 10 and (tmp_path / f"{name}.csv").read_bytes() == csv, name
        assert (out / f"{name}.parquet").stat().st_size < len(csv)
    write_tables(result)  # (as the other tests find it)
    for name in ("records", "counters"):
        (out / f"{name}.csv").unlink()


def test_csv_tables_round_trip_and_failed_writes_leave_nothing(tmp_path):
    from analysis.outputs.tables import write_table
    from sbcore.atomic import write_atomic_by

    frame = pd.DataFrame(
        {
            "case_id": pd.Categorical(["b", "a", None]),
            "wall_s": [0.1234567891, None, 2.0],
            "valid": [True, False, True],
            "mixed": [1, "x", None],
        }
    )
    write_table(frame, tmp_path / "out" / "t.csv")
    back = pd.read_csv(tmp_path / "out" / "t.csv")
    assert list(back.columns) == ["case_id", "wall_s", "valid", "mixed"]
    assert back["case_id"].isna().tolist() == [False, False, True] and back["case_id"][0] == "b"
    assert back["wall_s"][0] == 0.1234567891 and np.isnan(back["wall_s"][1])
    assert back["valid"].tolist() == [True, False, True]

    def half_then_fail(tmp):
        tmp.write_text("case_id\n")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic_by(tmp_path / "out" / "t.csv", half_then_fail)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["t.csv"]  # old file kept, no temp
    assert pd.read_csv(tmp_path / "out" / "t.csv").shape == (3, 4)
