"""Line labels of the scaling small multiples: a variant parameter names the lines where it differs."""

import pandas as pd

from analysis.outputs.plots.scaling import scaling_panels


def rows(inners, schedules=("dynamic,1",)):
    return pd.DataFrame(
        [
            {
                "binary": "mandelbrot-c-omp",
                "model": "omp",
                "schedule": s,
                "sync": "none",
                "inner": i,
                "pin": "compact",
                "ranks": 1,
                "workers": w,
            }
            for s in schedules
            for i in inners
            for w in (1, 2)
        ]
    )


def labels(frame):
    return [[label for label, _ in series] for _, series in scaling_panels(frame)]


def test_scalar_and_simd_lines_are_told_apart():
    assert labels(rows(["scalar", "simd"])) == [["dynamic,1 scalar", "dynamic,1 simd"]]


def test_the_inner_loop_is_not_named_when_every_line_shares_it():
    assert labels(rows(["scalar"], schedules=("static", "guided"))) == [["guided", "static"]]
