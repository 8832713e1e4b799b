"""analysis.stats.disturbance on records with known probe values: the node's normal state is learnt from the
campaign, and only repetitions clearly worse than it are flagged."""

import numpy as np
import pandas as pd

from analysis.records.machine_state import probe_columns
from analysis.stats.disturbance import ALU_REASON, ALU_SLOW_RATIO, clean_summary, flag_disturbed


def probe(int_s, fp_s, wait, cpus=(0, 1), tput_s=0.0005, alu_s=None):
    n = len(cpus)
    sample = {"cpus": list(cpus), "int_mul_s": [int_s] * n, "fp_lat_s": [fp_s] * n, "fp_tput_s": [tput_s] * n}
    if alu_s is not None:  # kernels before the integer-ALU block wrote none
        sample["int_alu_s"] = [alu_s] * n
    return {
        "int_mul_iters": 1,
        "fp_lat_iters": 1,
        "fp_tput_iters": 1,
        "before": sample,
        "after": sample,
        "runq_wait_s": wait,
    }


def rows(
    host="n1",
    threads=2,
    n=20,
    slow=(),
    waited=(),
    case="c1",
    pipes=(),
    alus=(),
    alu_factor=1.3,
    pipes_slow=1.2,
):
    """A case's records; `pipes`: repetitions beside a slow FP-throughput block, whose kernel ran
    `pipes_slow` x as long (an FP kernel beside another thread on the pipes)."""
    out = []
    for k in range(n):
        int_s = 0.0004 * (1.8 if k in slow else 1.0 + 0.01 * (k % 3))
        wait = (0.5 if k in waited else 0.001) * 0.1 * threads
        # A core taken away slows every chain; pipes shared with another hardware thread only the block.
        tput_s = 0.0005 * (1.8 if k in slow or k in pipes else 1.0 + 0.01 * (k % 3))
        # ALUs shared with another hardware thread: only the integer-ALU block (None: an older kernel).
        alu_s = (
            None
            if alus is None
            else 0.0003 * (alu_factor if k in slow or k in alus else 1.0 + 0.01 * (k % 3))
        )
        out.append(
            {"case_id": case, "rep": k, "hostname": host, "setup_s": 0.0, "threads": threads}
            | {"wall_s": 0.1 * (pipes_slow if k in pipes else 1.0)}
            | probe_columns(probe(int_s, 0.0004, wait, tput_s=tput_s, alu_s=alu_s))
        )
    return out


def test_probe_columns():
    cols = probe_columns(probe(0.001, 0.002, 0.01, cpus=(3,)))
    assert cols["probe_int_mul_min_s"] == cols["probe_int_mul_max_s"] == 0.001
    assert (
        cols["probe_fp_lat_max_s"] == 0.002 and cols["probe_cpus"] == 1 and cols["probe_runq_wait_s"] == 0.01
    )
    assert cols["probe_fp_tput_min_s"] == cols["probe_fp_tput_max_s"] == 0.0005
    assert probe_columns(None)["probe_int_mul_max_s"] is None
    # Records from kernels built before the throughput block: no columns for it, nothing flagged.
    old = probe(0.001, 0.002, 0.01)
    for side in ("before", "after"):
        old[side].pop("fp_tput_s", None)  # before and after may be one dict
    assert probe_columns(old)["probe_fp_tput_max_s"] is None


def test_slow_probes_and_run_queue_waits_are_flagged_and_nothing_else():
    records = pd.DataFrame(rows(slow={4, 5}, waited={9}))
    flagged = flag_disturbed(records)
    assert set(flagged.loc[flagged["disturbed"], "rep"]) == {4, 5, 9}
    assert flagged.set_index("rep").loc[4, "disturbed_reason"] == "slow probe"
    assert flagged.set_index("rep").loc[9, "disturbed_reason"] == "run-queue wait"
    assert np.isclose(flagged.set_index("rep").loc[4, "probe_slowdown"], 1.8)


def test_a_wait_of_a_tenth_of_the_run_is_flagged_a_twentieth_is_not():
    """A repetition whose threads waited for a CPU 12 % of the run more than normal is slowed about as
    much (1.15x is what the probe judge calls slow); one that waited 5 % is within the host's jitter."""
    records = rows(threads=1)
    for k, share in ((3, 0.12), (6, 0.05)):
        records[k]["probe_runq_wait_s"] = share * records[k]["wall_s"]
    flagged = flag_disturbed(pd.DataFrame(records)).set_index("rep")
    assert set(flagged.index[flagged["disturbed"]]) == {3}
    assert flagged.loc[3, "disturbed_reason"] == "run-queue wait"


def test_a_slow_throughput_block_beside_normal_latency_chains_is_flagged_as_shared_pipes():
    """The host phases in which another hardware thread shares the core's FP pipes: the latency chains
    run at their normal speed, only the throughput block is slower; a core taken away (every chain
    slow) stays a slow probe."""
    flagged = flag_disturbed(pd.DataFrame(rows(slow={4}, pipes={7, 8}, waited={8}))).set_index("rep")
    assert set(flagged.index[flagged["disturbed"]]) == {4, 7, 8}
    assert flagged.loc[7, "disturbed_reason"] == "shared FP pipes"
    assert flagged.loc[8, "disturbed_reason"] == "shared FP pipes + run-queue wait"
    assert flagged.loc[4, "disturbed_reason"] == "slow probe"
    assert np.isclose(flagged.loc[7, "probe_tput_slowdown"], 1.8) and flagged.loc[7, "probe_slowdown"] < 1.1


def test_a_slow_integer_alu_block_beside_normal_latency_chains_is_flagged_as_shared_alus():
    """Another hardware thread takes slots of the core's integer ALUs: only the ALU block is slower
    (what slows the scalar π loop); with the FP pipes shared too both reasons are named; a core taken
    away stays a slow probe; a block within its normal spread is not flagged."""
    flagged = flag_disturbed(pd.DataFrame(rows(slow={4}, alus={6, 7}, pipes={7}))).set_index("rep")
    assert set(flagged.index[flagged["disturbed"]]) == {4, 6, 7}
    assert flagged.loc[6, "disturbed_reason"] == ALU_REASON == "shared integer ALUs"
    assert flagged.loc[7, "disturbed_reason"] == "shared FP pipes + shared integer ALUs"
    assert flagged.loc[4, "disturbed_reason"] == "slow probe"
    assert np.isclose(flagged.loc[6, "probe_alu_slowdown"], 1.3) and flagged.loc[6, "probe_slowdown"] < 1.1
    # Just under the ratio: not flagged; just over it: flagged.
    for factor, expected in ((ALU_SLOW_RATIO - 0.02, set()), (ALU_SLOW_RATIO + 0.02, {6})):
        flagged = flag_disturbed(pd.DataFrame(rows(alus={6}, alu_factor=factor)))
        assert set(flagged.loc[flagged["disturbed"], "rep"]) == expected, factor


def test_records_without_the_integer_alu_block_are_judged_by_the_other_chains():
    flagged = flag_disturbed(pd.DataFrame(rows(alus=None, pipes={3}))).set_index("rep")
    assert set(flagged.index[flagged["disturbed"]]) == {3}
    assert flagged["probe_alu_slowdown"].isna().all()


def test_a_slow_throughput_block_that_did_not_slow_its_case_is_not_shared_pipes():
    """A core design whose FP-throughput block has two speeds of its own (a Zen 5 guest: 1.34x its
    fastest in most repetitions of a quiet host, the AVX-512 kernel beside it 0.9 % faster): the block
    alone says nothing; only a case slowed beside it is flagged."""
    for slowed, expected in ((0.991, set()), (1.01, set()), (1.05, {5, 6, 7})):
        flagged = flag_disturbed(pd.DataFrame(rows(pipes={5, 6, 7}, pipes_slow=slowed)))
        assert set(flagged.loc[flagged["disturbed"], "rep"]) == expected, slowed
        assert np.isclose(flagged.set_index("rep").loc[5, "probe_tput_slowdown"], 1.8)


def test_shared_pipes_are_judged_against_the_fast_phase_even_when_it_is_rare():
    """On a host whose pipes are shared most of the time, the few fast repetitions are the core's own
    speed: the slow majority is flagged, not taken as normal."""
    n = 50
    records = pd.DataFrame(rows(n=n, pipes=set(range(3, n))))
    flagged = flag_disturbed(records)
    assert set(flagged.loc[flagged["disturbed"], "rep"]) == set(range(3, n))


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

    from analysis.outputs.report.sections.machine_state import disturbance_section

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


def transfer_rows(case, round_trip_s, slow=(), n=20, cpus=(0, 1), slowed=1.8):
    """Records of a case whose probe timed the cache-line round trip `round_trip_s` between its CPUs,
    up to 1.5x that in the normal state (its spread on our guests), 6.5x in the repetitions `slow`
    (the vCPUs placed apart: 55 against 360 ns); None: one CPU, nothing timed. The case's time is
    `slowed` times its normal 0.1 s in those (a contended atomic: 1.8x). Every single-CPU chain
    normal."""
    out = []
    for k in range(n):
        p = probe(0.0004, 0.0004, 0.0001, cpus=cpus)
        if round_trip_s is not None:
            t = round_trip_s * (6.5 if k in slow else 1.0 + 0.05 * (k % 11))
            p["before"] = p["after"] = p["after"] | {"xfer_s": [None] + [t] * (len(cpus) - 1)}
        out.append(
            {"case_id": case, "rep": k, "hostname": "n1", "setup_s": 0.0, "threads": len(cpus)}
            | {"wall_s": 0.1 * (1.0 + 0.001 * (k % 5)) * (slowed if k in slow else 1.0)}
            | probe_columns(p)
        )
    return out


def test_a_slow_cache_line_transfer_is_flagged_against_the_cases_own_normal():
    """A case on two near CPUs (55 ns, up to 1.5x that normally) in a phase where the host moved them
    apart (6.5x): flagged as a slow transfer, nothing else, and the near state's spread is not. A
    case whose pair lies far apart all the time (e.g. another socket, 400 ns) is its own normal and
    not flagged, and a one-CPU case has no transfer."""
    records = pd.DataFrame(
        transfer_rows("near", 55e-9, slow={3, 7, 8})
        + transfer_rows("far", 400e-9, cpus=(0, 9))
        + transfer_rows("serial", None, cpus=(0,))
    )
    flagged = flag_disturbed(records).set_index(["case_id", "rep"])
    assert set(flagged.index[flagged["disturbed"]]) == {("near", 3), ("near", 7), ("near", 8)}
    assert set(flagged.index[flagged["slow_transfer"]]) == {("near", 3), ("near", 7), ("near", 8)}
    assert flagged.loc[("near", 3), "disturbed_reason"] == "slow cache-line transfer"
    assert np.isclose(flagged.loc[("near", 7), "probe_xfer_slowdown"], 6.5, rtol=0.06)
    assert flagged.loc[("near", 10), "probe_xfer_slowdown"] > 1.3  # the near state's spread: not flagged
    assert flagged.loc["far", "probe_xfer_slowdown"].max() < 1.6
    assert np.isnan(flagged.loc[("serial", 0), "probe_xfer_slowdown"])


def test_a_slow_transfer_that_did_not_slow_a_case_does_not_disturb_it():
    """The same phase over a static schedule without shared writes: its round trips were slow too,
    but its repetitions in them took the same time (within 2 %), so none of them is disturbed; a
    contended case over the same repetitions is (1.8x)."""
    slow = {2, 5, 6, 11}
    records = pd.DataFrame(
        transfer_rows("static", 55e-9, slow=slow, slowed=1.01) + transfer_rows("atomic", 55e-9, slow=slow)
    )
    flagged = flag_disturbed(records).set_index(["case_id", "rep"])
    assert (flagged.loc["static", "probe_xfer_slowdown"] > 5).sum() == len(slow)
    assert not flagged.loc["static", "disturbed"].any() and not flagged.loc["static", "slow_transfer"].any()
    assert set(flagged.loc["atomic"].index[flagged.loc["atomic", "slow_transfer"]]) == slow


def test_probe_columns_of_the_transfer():
    p = probe(0.001, 0.002, 0.0, cpus=(0, 1, 2))
    p["before"] = p["before"] | {"xfer_s": [None, 7e-8, 2e-7]}
    p["after"] = p["after"] | {"xfer_s": [None, 6e-8, 9e-8]}
    cols = probe_columns(p)
    assert cols["probe_xfer_min_s"] == 6e-8 and cols["probe_xfer_max_s"] == 2e-7
    assert probe_columns(probe(0.001, 0.002, 0.0))["probe_xfer_max_s"] is None  # before the transfer
