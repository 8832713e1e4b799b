"""analysis.disturbance on records with known probe values: the node's normal state is learnt from the
campaign, and only repetitions clearly worse than it are flagged."""

import numpy as np
import pandas as pd

from analysis.disturbance import clean_summary, flag_disturbed, probe_columns


def probe(int_s, fp_s, wait, cpus=(0, 1)):
    sample = {"cpus": list(cpus), "int_mul_s": [int_s] * len(cpus), "fp_lat_s": [fp_s] * len(cpus)}
    return {"int_mul_iters": 1, "fp_lat_iters": 1, "before": sample, "after": sample, "runq_wait_s": wait}


def rows(host="n1", threads=2, n=20, slow=(), waited=(), case="c1"):
    out = []
    for k in range(n):
        int_s = 0.0004 * (1.8 if k in slow else 1.0 + 0.01 * (k % 3))
        wait = (0.5 if k in waited else 0.001) * 0.1 * threads
        out.append(
            {"case_id": case, "rep": k, "hostname": host, "wall_s": 0.1, "setup_s": 0.0, "threads": threads}
            | probe_columns(probe(int_s, 0.0004, wait))
        )
    return out


def test_probe_columns():
    cols = probe_columns(probe(0.001, 0.002, 0.01, cpus=(3,)))
    assert cols["probe_int_mul_min_s"] == cols["probe_int_mul_max_s"] == 0.001
    assert (
        cols["probe_fp_lat_max_s"] == 0.002 and cols["probe_cpus"] == 1 and cols["probe_runq_wait_s"] == 0.01
    )
    assert probe_columns(None)["probe_int_mul_max_s"] is None


def test_slow_probes_and_run_queue_waits_are_flagged_and_nothing_else():
    records = pd.DataFrame(rows(slow={4, 5}, waited={9}))
    flagged = flag_disturbed(records)
    assert set(flagged.loc[flagged["disturbed"], "rep"]) == {4, 5, 9}
    assert flagged.set_index("rep").loc[4, "disturbed_reason"] == "slow probe"
    assert flagged.set_index("rep").loc[9, "disturbed_reason"] == "run-queue wait"
    assert np.isclose(flagged.set_index("rep").loc[4, "probe_slowdown"], 1.8)


def test_normal_is_learnt_per_host():
    # Node n2 is 1.8x slower all the time: that is its normal state, not a disturbance.
    n2 = [
        r
        | {
            "probe_int_mul_min_s": r["probe_int_mul_min_s"] * 1.8,
            "probe_int_mul_max_s": r["probe_int_mul_max_s"] * 1.8,
        }
        for r in rows(host="n2", case="c2")
    ]
    flagged = flag_disturbed(pd.DataFrame(rows() + n2))
    assert not flagged["disturbed"].any()


def test_oversubscribed_cases_wait_by_design():
    records = pd.DataFrame(rows(threads=4, waited=set(range(20))) + rows(case="c2"))
    assert not flag_disturbed(records)["disturbed"].any()


def test_microbenchmarks_wait_by_design():
    """A one-CPU ping-pong's partner waits for the CPU in every repetition; a scaling kernel that
    waits in one repetition is still flagged."""
    micro = [r | {"kernel": "osbench"} for r in rows(threads=1, waited=set(range(20)), case="m")]
    scaling = [r | {"kernel": "mandelbrot"} for r in rows(waited={3})]
    flagged = flag_disturbed(pd.DataFrame(micro + scaling))
    assert not flagged.loc[flagged["case_id"] == "m", "disturbed"].any()
    assert set(flagged.loc[flagged["disturbed"], "rep"]) == {3}


def test_summary_without_the_flagged_repetitions():
    records = pd.DataFrame(rows(slow={0, 1, 2}))
    records.loc[records["rep"] < 3, "wall_s"] = 0.2  # the disturbed ones were slower
    summary = clean_summary(flag_disturbed(records)).set_index("case_id")
    assert summary.loc["c1", "n_disturbed"] == 3 and summary.loc["c1", "n_clean"] == 17
    assert summary.loc["c1", "median_clean_s"] == 0.1 and summary.loc["c1", "ci_high_clean_s"] == 0.1


def test_report_says_when_a_node_was_shared_throughout():
    from types import SimpleNamespace

    from analysis.report_disturbance import disturbance_section

    busy = pd.DataFrame([r | {"probe_runq_wait_s": 0.6 * 0.1 * 2} for r in rows()])
    quiet = pd.DataFrame(rows(slow={3}))
    for records, shared in ((busy, True), (quiet, False)):
        flagged = flag_disturbed(records)
        summary = clean_summary(flagged).assign(binary="b", threads=2, n=20, median_s=0.1)
        text = " ".join(
            str(v)
            for _, v in disturbance_section(
                SimpleNamespace(stats=SimpleNamespace(records=flagged), summary=summary)
            )
        )
        assert ("shared throughout" in text) == shared
        assert "1 of 20 repetitions" in text or shared
