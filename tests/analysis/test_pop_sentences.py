"""The report's POP sentences name the largest loss, say whether an imbalance was in the work (the
schedule) or only in the time (the host), and name the schedule that removes it; the plot is drawn."""

import pandas as pd

from analysis.outputs.plots.pop_metrics import pop_plots
from analysis.outputs.report.sections.pop_metrics import sentence


def case(schedule, sync="none", *, work, load, sync_eff=0.99, comp=0.99, workers=2) -> dict:
    row = {
        "node_type": "n",
        "binary": "mandelbrot-c-omp",
        "schedule": schedule,
        "sync": sync,
        "workers": workers,
        "work_balance": work,
        "load_balance": load,
        "sync_efficiency": sync_eff,
        "computation_scaling": comp,
        "efficiency": load * sync_eff * comp,
    }
    for name in ("work_balance", "load_balance", "sync_efficiency", "computation_scaling", "efficiency"):
        row[f"{name}_lo"], row[f"{name}_hi"] = row[name] - 0.01, row[name] + 0.01
    losses = {k: row[k] for k in ("load_balance", "sync_efficiency", "computation_scaling")}
    row["largest_loss"] = min(losses, key=losses.get)
    return row


def test_a_work_imbalance_is_blamed_on_the_schedule_and_the_balanced_schedule_is_named():
    family = pd.DataFrame([case("static", work=0.62, load=0.62), case("static,1", work=0.99, load=0.98)])
    text = sentence(family.iloc[0], family)
    assert "loses 38% to load imbalance" in text
    assert "the schedule dealt the work unevenly" in text
    assert "`static,1` scheduling removes it" in text
    assert "loses almost nothing" in sentence(family.iloc[1], family)


def test_an_even_work_share_with_uneven_times_is_blamed_on_the_host():
    family = pd.DataFrame([case("static", work=1.0, load=0.7)])
    text = sentence(family.iloc[0], family)
    assert "loses 30% to load imbalance" in text and "the host, not the schedule" in text
    assert "removes it" not in text  # no balanced alternative in the family


def test_lock_contention_is_a_synchronisation_loss_not_an_imbalance():
    family = pd.DataFrame([case("block", "coarse", work=1.0, load=0.97, sync_eff=0.4)])
    text = sentence(family.iloc[0], family)
    assert "loses 60% to synchronisation and scheduling" in text and "imbalance" not in text


def test_the_factor_plot_is_drawn_per_binary(tmp_path):
    rows = [case("static", work=0.62, load=0.62, workers=w) for w in (1, 2)]
    rows += [case("static,1", work=1, load=0.98, workers=w) for w in (1, 2)]
    (plot,) = pop_plots(pd.DataFrame(rows), tmp_path)
    assert plot.skipped is None and plot.png.stat().st_size > 0
    assert pop_plots(pd.DataFrame(), tmp_path) == []


def test_the_mpi_plot_draws_serialisation_and_transfer(tmp_path, monkeypatch):
    import analysis.outputs.plots.pop_metrics as module

    labels = []

    def keep_labels(fig, *args):
        labels.extend(t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts())
        return save(fig, *args)

    save = module.save
    monkeypatch.setattr(module, "save", keep_labels)
    rows = [
        case("master", work=0.5, load=0.5, workers=w)
        | {"binary": "mandelbrot-c-mpi", "serialisation_efficiency": s, "transfer_efficiency": t}
        for w, s, t in ((1, 1.0, 1.0), (2, 0.9, 0.95), (4, 0.8, 0.9))
    ]
    (plot,) = pop_plots(pd.DataFrame(rows), tmp_path)
    assert plot.skipped is None and plot.png.stat().st_size > 0
    assert "serialisation (MPI)" in labels and "transfer (MPI)" in labels
    labels.clear()
    pop_plots(pd.DataFrame([case("static", work=0.6, load=0.6, workers=w) for w in (1, 2)]), tmp_path)
    assert labels and "transfer (MPI)" not in labels


def test_headline_cases_stay_within_one_worker_per_core():
    """On 2 cores, 4 workers share cores: their loss is oversubscription, so the sentence names the
    2-worker case; a node whose core count is unknown keeps every row."""
    from analysis.outputs.report.sections.pop_metrics import within_cores

    table = pd.DataFrame({"node_type": ["ws", "ws", "ws", "other"], "workers": [2, 3, 4, 8]})
    kept = within_cores(table, {"ws": (2, "likwid-topology")})
    assert kept["workers"].tolist() == [2, 8]
    assert within_cores(table, {})["workers"].tolist() == [2, 3, 4, 8]
