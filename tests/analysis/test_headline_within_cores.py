"""The best variant of a kernel is chosen at up to one worker per core: an oversubscribed point answers
whether oversubscription hurts, not which variant scales best on the node. Only a kernel measured
solely oversubscribed has its best chosen there, and the headline says so."""

import pytest

from analysis.checks import headline
from analysis.outputs.report.sections.findings import headline_lines, section
from analysis.pipeline import Options, analyze
from tests.analysis.conftest import TEST_RESAMPLES
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, write_campaign

CORES = 2


def speedup_of(kernel, model, threads, speedup, **kw):
    """A case of the 2-core node whose true speedup against the serial case (t1 = 1 s) is `speedup`:
    Amdahl without a serial fraction gives 1/min(threads, cores) s, no oversubscription cost (below),
    and `slowdown` brings it to 1/speedup s."""
    return CaseSpec(
        "vm2",
        kernel,
        "c",
        model,
        threads,
        reps=12,
        t1=1.0,
        serial_fraction=0.0,
        sigma=0.003,
        slowdown=min(threads, CORES) / speedup,
        **kw,
    )


@pytest.fixture(scope="module")
def oversubscribed_best(tmp_path_factory):
    """Mandelbrot: 1.90 at 2 threads, 1.97 at 4 (the highest CI lower bound, oversubscribed).
    Monte-Carlo pi: measured at 4 threads only."""
    node = NodeTypeSpec("vm2", cores=CORES, oversub=0.0)
    specs = [
        CaseSpec("vm2", "mandelbrot", "c", "serial", 1, reps=12, t1=1.0, sigma=0.003),
        speedup_of("mandelbrot", "pthreads", 2, 1.90, schedule="cyclic,1"),
        speedup_of("mandelbrot", "pthreads", 4, 1.97, schedule="cyclic,1"),
        CaseSpec("vm2", "mcpi", "c", "serial", 1, reps=12, t1=1.0, sigma=0.003),
        speedup_of("mcpi", "pthreads", 4, 1.90, schedule="block"),
    ]
    results = tmp_path_factory.mktemp("results")
    truth = write_campaign(results, "oversub-20261127T000000Z", specs, [node], seed=5)
    ids = [c["case_id"] for c in truth.cases]
    return ids, analyze(truth.campaign_dir, Options(n_resamples=TEST_RESAMPLES, seed=4))


def test_best_is_chosen_at_up_to_one_worker_per_core(oversubscribed_best):
    ids, result = oversubscribed_best
    sp = result.speedup.set_index("case_id")
    # What was planted: the oversubscribed point has the highest CI lower bound, and is plausible.
    assert sp.loc[ids[2], "speedup_ci_low"] > sp.loc[ids[1], "speedup_ci_high"]
    assert sp.loc[ids[2], "plausibility"] == "ok" and sp.loc[ids[2], "workers"] > CORES
    best = headline(result.speedup).set_index("kernel").loc["mandelbrot"]
    assert best["case_id"] == ids[1] and best["workers"] == CORES
    assert "oversubscribed" not in best["caveats"]
    (line,) = [x for x in headline_lines(result) if x.startswith("mandelbrot")]
    assert " at 2 threads: speedup 1.9" in line and "oversubscribed" not in line


def test_only_oversubscribed_cases_give_a_best_marked_so(oversubscribed_best):
    ids, result = oversubscribed_best
    best = headline(result.speedup).set_index("kernel").loc["mcpi"]
    assert best["case_id"] == ids[4]
    assert best["caveats"].startswith(f"oversubscribed: 4 workers on {CORES} cores")
    (line,) = [x for x in headline_lines(result) if x.startswith("mcpi")]
    assert " at 4 threads: " in line and f"oversubscribed: 4 workers on {CORES} cores" in line


def test_the_findings_explain_the_rule(oversubscribed_best):
    _, result = oversubscribed_best
    rule = section(result, [])[0].value
    assert "at most one worker per core" in rule and "oversubscribed: N workers on C cores" in rule


def test_best_configuration_of_the_node_type_follows_the_same_rule(oversubscribed_best):
    """The lowest median time is the oversubscribed point (1.97x); the best configuration is the 2-worker
    case."""
    ids, result = oversubscribed_best
    times = result.summary.set_index("case_id")["median_s"]
    assert times.loc[ids[2]] < times.loc[ids[1]]
    best = result.node_types_best.set_index("kernel").loc["mandelbrot"]
    assert best["case_id"] == ids[1] and best["threads"] == CORES
