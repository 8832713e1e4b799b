"""pop_metrics: the POP factors of each case from its records' per-worker measurements, against a
ground truth planted in synthetic tables, and the identity efficiency = product of the factors."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats.pop_metrics import pop_metrics

SERIAL_S = 0.9


def summary(cases: dict[str, tuple[str, int]]) -> pd.DataFrame:
    """case_id -> (model, workers); one scaling series per model, a serial case for the baseline."""
    rows = []
    for i, (cid, (model, workers)) in enumerate(cases.items()):
        rows.append(
            {
                "row": i,
                "case_id": cid,
                "valid": True,
                "workers": workers,
                "threads": workers,
                "ranks": 1,
                "node_type": "n",
                "binary": f"mandelbrot-c-{model}",
                "params_json": "{}",
                "pin": "none",
                "counter_group": "",
                "kernel": "mandelbrot",
                "problem": "p",
                "lang": "c",
                "inner": "scalar",
                "model": model,
                "schedule": "static",
                "sync": "none",
                "median_s": np.nan,
            }
        )
    return pd.DataFrame(rows)


def records(planted: dict[str, dict], reps: int = 12, noise: float = 0.02, seed: int = 0) -> pd.DataFrame:
    """Repetitions around each case's planted (wall, useful mean, useful max, work mean, work max, clock)."""
    rng = np.random.default_rng(seed)
    rows = []
    for cid, p in planted.items():
        for _ in range(reps):
            scale = 1 + noise * rng.standard_normal()
            rows.append(
                {
                    "case_id": cid,
                    "wall_s": p["wall"] * scale,
                    "worker_useful_mean_s": p["useful"] * scale,
                    "worker_useful_max_s": p["useful_max"] * scale,
                    "worker_work_mean": p["work"],
                    "worker_work_max": p["work_max"],
                    "clock_ghz": p["clock"],
                }
            )
    return pd.DataFrame(rows)


PLANTED = {
    # one worker: 2 % of the region is the harness's
    "one": {"wall": 1.0, "useful": 0.98, "useful_max": 0.98, "work": 100, "work_max": 100, "clock": 3.0},
    # two workers: the slow one does 75 % of the work (static on the asymmetric image)
    "two": {"wall": 0.76, "useful": 0.5, "useful_max": 0.75, "work": 50, "work_max": 75, "clock": 2.9},
    "serial": {
        "wall": SERIAL_S,
        "useful": np.nan,
        "useful_max": np.nan,
        "work": 0,
        "work_max": 0,
        "clock": 3.0,
    },
}


def analysed() -> pd.DataFrame:
    s = summary({"one": ("omp", 1), "two": ("omp", 2), "serial": ("serial", 1)})
    r = records(PLANTED)
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    return pop_metrics(s, r, seed=1).set_index("case_id")


def test_factors_are_the_planted_ones():
    t = analysed()
    assert "serial" not in t.index  # no per-worker measurements: no factors
    two = t.loc["two"]
    assert two["work_balance"] == pytest.approx(50 / 75)
    assert two["load_balance"] == pytest.approx(0.5 / 0.75, rel=1e-9)  # same scale per repetition
    assert two["sync_efficiency"] == pytest.approx(0.75 / 0.76, rel=1e-9)
    assert two["computation_scaling"] == pytest.approx(0.98 / (2 * 0.5), rel=0.03)
    assert two["frequency_scaling"] == pytest.approx(2.9 / 3.0)
    assert two["one_worker_parallel_efficiency"] == pytest.approx(0.98, rel=1e-9)
    assert two["efficiency"] == pytest.approx(1.0 / (2 * 0.76), rel=0.03)
    assert two["largest_loss"] == "load_balance"
    assert two["serial_cost"] == pytest.approx(SERIAL_S / 1.0, rel=0.03)
    assert t.loc["one", "efficiency"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(5))
def test_the_factors_multiply_to_the_measured_efficiency_within_its_ci_on_every_case(seed):
    s = summary({"one": ("omp", 1), "two": ("omp", 2), "serial": ("serial", 1)})
    r = records(PLANTED, noise=0.05, seed=seed)
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    t = pop_metrics(s, r, seed=seed)
    assert len(t) == 2
    product = (
        t["load_balance"]
        * t["sync_efficiency"]
        * t["computation_scaling"]
        / t["one_worker_parallel_efficiency"]
    )
    assert np.allclose(product, t["efficiency"], rtol=1e-12)
    assert ((t["efficiency_lo"] <= product) & (product <= t["efficiency_hi"])).all()
    assert np.allclose(t["parallel_efficiency"], t["load_balance"] * t["sync_efficiency"], rtol=1e-12)
    assert np.allclose(t["efficiency_vs_serial"], t["efficiency"] * t["serial_cost"])
    for name in ("load_balance", "sync_efficiency", "computation_scaling", "efficiency"):
        assert (t[f"{name}_lo"] <= t[name]).all() and (t[name] <= t[f"{name}_hi"]).all()
    # noisy repetitions give a CI of non-zero width
    assert (t.loc[t["workers"] == 2, "efficiency_hi"] > t.loc[t["workers"] == 2, "efficiency_lo"]).all()


def test_frequency_scaling_takes_every_workers_clock_where_records_carry_it():
    """The first thread ran at 3.0 GHz in both cases, but the second worker of "two" at 2.4 GHz:
    the workers' mean clock (2.7) gives the frequency scaling; a record without it falls back to the
    first thread's clock."""
    s = summary({"one": ("omp", 1), "two": ("omp", 2)})
    r = records({k: {**PLANTED[k], "clock": 3.0} for k in ("one", "two")})
    r["worker_clock_ghz_mean"] = np.where(r["case_id"] == "two", 2.7, 3.0)
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    two = pop_metrics(s, r, seed=1).set_index("case_id").loc["two"]
    assert two["frequency_scaling"] == pytest.approx(0.9)
    assert two["frequency_scaling_lo"] == pytest.approx(0.9) and two["frequency_scaling_hi"] == pytest.approx(
        0.9
    )
    assert two["other_scaling"] == pytest.approx(two["computation_scaling"] / 0.9)
    r.loc[r["case_id"] == "one", "worker_clock_ghz_mean"] = np.nan  # older records: the first thread's
    two = pop_metrics(s, r, seed=1).set_index("case_id").loc["two"]
    assert two["frequency_scaling"] == pytest.approx(2.7 / 3.0)
    without = pop_metrics(s, r.drop(columns="worker_clock_ghz_mean"), seed=1).set_index("case_id")
    assert without.loc["two", "frequency_scaling"] == pytest.approx(1.0)


def test_clock_columns_loaded_as_categoricals_give_the_same_factors():
    """The records loader types a column of few distinct values as a categorical (a million records,
    a handful of clocks): the clocks are read as the numbers they stand for."""
    s = summary({"one": ("omp", 1), "two": ("omp", 2)})
    r = records({k: {**PLANTED[k], "clock": 3.0} for k in ("one", "two")})
    r["worker_clock_ghz_mean"] = np.where(r["case_id"] == "two", 2.7, np.nan)
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    floats = pop_metrics(s, r, seed=1)
    typed = r.astype({"clock_ghz": "category", "worker_clock_ghz_mean": "category"})
    pd.testing.assert_frame_equal(pop_metrics(s, typed, seed=1), floats)
    assert floats.set_index("case_id").loc["two", "frequency_scaling"] == pytest.approx(0.9)


def test_no_one_worker_case_means_no_factors():
    s = summary({"two": ("omp", 2)})
    r = records({"two": PLANTED["two"]})
    s["median_s"] = 0.76
    assert pop_metrics(s, r).empty


def test_records_without_worker_fields_give_an_empty_table():
    s = summary({"one": ("omp", 1)})
    s["median_s"] = 1.0
    assert pop_metrics(s, pd.DataFrame({"case_id": ["one"], "wall_s": [1.0]})).empty


def test_the_standard_campaign_shows_its_planted_balances_and_the_identity_on_every_case(standard):
    """End to end through the pipeline: the synthetic records carry the planted per-worker fields
    (tests/synthetic_campaigns.py worker_fields)."""
    from tests.synthetic_campaigns import PLANTED_STATIC_BALANCE, PLANTED_USEFUL_SHARE

    _, result = standard
    t = result.pop_metrics
    assert len(t) > 0 and set(t["model"]) <= {"omp", "pthreads"}
    product = (
        t["load_balance"]
        * t["sync_efficiency"]
        * t["computation_scaling"]
        / t["one_worker_parallel_efficiency"]
    )
    assert ((t["efficiency_lo"] <= product) & (product <= t["efficiency_hi"])).all()
    uneven = (t["kernel"] == "mandelbrot") & (t["schedule"] == "static") & (t["workers"] > 1)
    assert uneven.any() and (~uneven).any()
    assert np.allclose(t.loc[uneven, "work_balance"], PLANTED_STATIC_BALANCE)
    assert np.allclose(t.loc[uneven, "load_balance"], PLANTED_STATIC_BALANCE)
    assert np.allclose(t.loc[~uneven, "load_balance"], 1.0)
    assert np.allclose(t["sync_efficiency"], PLANTED_USEFUL_SHARE)
    # the 2-worker static Mandelbrot loses most to its planted imbalance (at more workers the planted
    # serial fraction, i.e. computation scaling, may take over)
    two = uneven & (t["workers"] == 2)
    assert two.any() and (t.loc[two, "largest_loss"] == "load_balance").all()


def test_mpi_splits_sync_efficiency_into_serialisation_and_transfer():
    """Critical path: useful 0.75 s, waiting in MPI 0.1 s, 0.05 s neither (transfer) in a 0.9 s region."""
    planted = {
        "one": PLANTED["one"],
        "two": {**PLANTED["two"], "wall": 0.9},
    }
    s = summary({"one": ("mpi", 1), "two": ("mpi", 2), "omp1": ("omp", 1), "omp2": ("omp", 2)})
    r = records(planted)
    r["worker_wait_at_useful_max_s"] = r["case_id"].map({"one": 0.0, "two": 0.1})
    r = pd.concat(
        [r, records({"omp1": PLANTED["one"], "omp2": PLANTED["two"]}).assign(worker_wait_at_useful_max_s=0.0)]
    )
    s["median_s"] = s["case_id"].map(r.groupby("case_id")["wall_s"].median())
    t = pop_metrics(s, r, seed=2).set_index("case_id")
    two = t.loc["two"]
    assert two["serialisation_efficiency"] == pytest.approx(0.75 / 0.85, rel=0.02)
    assert two["transfer_efficiency"] == pytest.approx(0.85 / 0.9, rel=0.02)
    assert two["serialisation_efficiency"] * two["transfer_efficiency"] == pytest.approx(
        two["sync_efficiency"], rel=1e-12
    )
    assert (
        two["serialisation_efficiency_lo"]
        <= two["serialisation_efficiency"]
        <= two["serialisation_efficiency_hi"]
    )
    # threads share memory: POP's split does not apply, the columns stay empty
    assert np.isnan(t.loc["omp2", "serialisation_efficiency"]) and np.isnan(
        t.loc["omp2", "transfer_efficiency"]
    )
