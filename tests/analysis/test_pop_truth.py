"""The POP factors against truth, on a fake kernel whose time is controlled: each worker computes the
rows of the asymmetric Mandelbrot image a schedule gives it, at a set speed (iterations per second),
so its useful time is exactly known. The measured time balance must be the one the image predicts
(within ±2 %) for static schedules; competing load on one worker's CPU leaves a static schedule's work
balance intact and lowers its time balance, while a dynamic schedule absorbs it (uneven work, even
times); the report's sentence says which of the two happened. Deterministic: the host's noise never
enters (the real kernels' work balance is checked exactly in tests/kernels/test_worker_measurements.py)."""

import heapq

import numpy as np
import pandas as pd
import pytest

from analysis.outputs.report.sections.pop_metrics import sentence
from analysis.stats.pop_metrics import pop_metrics
from tests.analysis.test_pop_metrics import summary
from tests.mandelbrot_reference import PRESETS, reference_counts

WIDTH, HEIGHT, MAX_ITER = 96, 90, 200
SPEED = 2e8  # iterations per second of an unloaded worker
REPS = 8


def image_rows() -> np.ndarray:
    """Iterations per row of the asymmetric image (the work of each unit)."""
    return reference_counts(WIDTH, HEIGHT, MAX_ITER, PRESETS["asymmetric"]).sum(axis=1).astype(float)


def static_owner(schedule: str, workers: int) -> np.ndarray:
    """Worker of each row: block = contiguous bands (the first height % workers one row longer, as
    libgomp's static and our block); cyclic,C = chunks of C rows dealt round-robin."""
    if schedule == "block":
        base, extra = divmod(HEIGHT, workers)
        return np.repeat(np.arange(workers), [base + (w < extra) for w in range(workers)])
    chunk = int(schedule.split(",")[1]) if "," in schedule else 1
    return (np.arange(HEIGHT) // chunk) % workers


def dynamic_owner(rows: np.ndarray, speeds: np.ndarray) -> np.ndarray:
    """A work queue handing one row at a time to the worker that is free first."""
    free = [(0.0, w) for w in range(len(speeds))]
    owner = np.empty(len(rows), dtype=int)
    for j, work in enumerate(rows):
        at, w = heapq.heappop(free)
        owner[j] = w
        heapq.heappush(free, (at + work / (SPEED * speeds[w]), w))
    return owner


def fake_records(case_id: str, schedule: str, speeds: np.ndarray, seed: int) -> list[dict]:
    """Repetitions of the fake kernel: per worker, work = its rows' iterations, useful time = work at
    its speed (with 0.1 % jitter per repetition), wall = the slowest worker plus 1 ms of harness."""
    rows = image_rows()
    workers = len(speeds)
    owner = dynamic_owner(rows, speeds) if schedule == "dynamic" else static_owner(schedule, workers)
    work = np.bincount(owner, weights=rows, minlength=workers)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(REPS):
        useful = work / (SPEED * speeds) * (1 + 0.001 * rng.standard_normal(workers))
        out.append(
            {
                "case_id": case_id,
                "wall_s": useful.max() + 1e-3,
                "worker_useful_mean_s": useful.mean(),
                "worker_useful_max_s": useful.max(),
                "worker_work_mean": work.mean(),
                "worker_work_max": work.max(),
                "clock_ghz": 3.0,
            }
        )
    return out


def analysed(schedule: str, speeds: list[float]) -> pd.Series:
    """The POP factors of the fake kernel on len(speeds) workers against its 1-worker case."""
    s = summary({"one": ("omp", 1), "many": ("omp", len(speeds))})
    s["schedule"] = schedule
    r = pd.DataFrame(
        fake_records("one", schedule, np.array([1.0]), seed=1)
        + fake_records("many", schedule, np.array(speeds), seed=2)
    )
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    return pop_metrics(s, r, seed=3).set_index("case_id").loc["many"]


def predicted_balance(schedule: str, workers: int) -> float:
    work = np.bincount(static_owner(schedule, workers), weights=image_rows(), minlength=workers)
    return work.mean() / work.max()


@pytest.mark.parametrize("schedule", ["block", "cyclic,1", "cyclic,4"])
@pytest.mark.parametrize("workers", [2, 3])
def test_time_balance_of_a_static_schedule_is_the_one_the_image_predicts(schedule, workers):
    row = analysed(schedule, [1.0] * workers)
    truth = predicted_balance(schedule, workers)
    assert row["work_balance"] == pytest.approx(truth, rel=1e-12)
    assert row["load_balance"] == pytest.approx(truth, rel=0.02)
    assert row["load_balance_lo"] <= truth * 1.02 and row["load_balance_hi"] >= truth * 0.98
    if schedule == "block":  # the image is asymmetric indeed: the check is not 1 == 1
        assert truth < 0.9


def test_competing_load_lowers_a_static_schedules_time_balance_not_its_work_balance():
    quiet, loaded = analysed("cyclic,1", [1.0, 1.0]), analysed("cyclic,1", [1.0, 0.5])
    assert loaded["work_balance"] == quiet["work_balance"] == pytest.approx(predicted_balance("cyclic,1", 2))
    assert loaded["load_balance"] < 0.8 < 0.95 < quiet["load_balance"]
    text = sentence(loaded, pd.DataFrame([loaded]))
    # the loaded worker's longer useful time lowers computation scaling too, which may come first
    assert "loses 34% to computation scaling" in text and "host's doing, not the schedule's" in text
    assert "absorbed" not in text


def test_a_dynamic_schedule_absorbs_competing_load_and_the_sentence_says_so():
    row = analysed("dynamic", [1.0, 0.5])
    assert row["load_balance"] > 0.95  # times stay even ...
    assert row["work_balance"] < 0.8  # ... because the loaded worker took about half the work
    text = sentence(row, pd.DataFrame([row]))
    # the loaded worker's iterations took longer: more useful time in all, a computation scaling loss
    assert "absorbed a slower worker" in text and "to load imbalance" not in text
