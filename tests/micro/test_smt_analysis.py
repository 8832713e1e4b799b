"""SMT gain and sibling detection by timing, checked against a topology's sibling groups."""

import pytest

from analysis.stats.smt import compare_with_topology, siblings_by_timing, smt_gain


def test_smt_gain_matches_the_thesis_definition():
    assert smt_gain(1.0, 2.0) == pytest.approx(0.0)  # the pair needs exactly double: no gain
    assert smt_gain(1.0, 1.77) == pytest.approx(0.13, abs=0.01)  # the thesis's "almost 13 %"
    assert smt_gain(1.0, 1.0) == pytest.approx(1.0)  # two full cores


def test_siblings_found_by_timing_and_compared_with_topology():
    alone = {0: 1.0, 1: 1.0, 2: 1.02, 3: 0.99}
    pairs = {(0, 2): 1.8, (1, 3): 1.75, (0, 1): 1.03, (2, 3): 1.05, (0, 3): 1.0, (1, 2): 1.01}
    found = siblings_by_timing(alone, pairs)
    assert found == [(0, 2), (1, 3)]
    verdict = compare_with_topology(found, [[0, 2], [1, 3]])
    assert verdict == {"agree": [(0, 2), (1, 3)], "missed": [], "invented": []}
    wrong = compare_with_topology(found, [[0, 1], [2, 3]])
    assert wrong["missed"] == [(0, 1), (2, 3)] and wrong["invented"] == [(0, 2), (1, 3)]


def test_reference_table_matches_params_and_skips_self_pinned_smt_cases(tmp_path):
    import pandas as pd

    from analysis.stats.micro import reference_table

    osb = {"node_type": "w", "kernel": "osbench", "threads": 1, "param_cpus": "same", "param_bytes": "1024",
           "param_batch": "1000"}  # fmt: skip
    smt = {"node_type": "w", "kernel": "smt", "param_load": "32", "param_nices": ""}
    table = pd.DataFrame(
        [
            {**osb, "param_op": "thread-create", "mean_s": 10e-6, "median_s": 5e-6},
            {**smt, "threads": 1, "param_variant": "mcpi", "param_cpus": "", "median_s": 1.0},
            {**smt, "threads": 2, "param_variant": "mcpi", "param_cpus": "", "median_s": 1.6},
            {**smt, "threads": 2, "param_variant": "mcpi", "param_cpus": "0,0", "median_s": 9.0},
        ]
    )
    ref = reference_table(table, smt=True).set_index("what")
    thread = ref.loc["thread create + join, n = 1000"]
    assert thread["ours"] == pytest.approx(10.0) and "median 5 us" in thread["how"]
    assert ref.loc["M4 int_dbl (Monte-Carlo pi), HT speed-up (exec time)", "ours"] == pytest.approx(
        2 * 1.0 / 1.6
    )


def test_siblings_table_reads_self_pinned_records_and_the_hosts_topology(tmp_path):
    import json

    from analysis.campaign import read_hosts
    from analysis.stats.micro import siblings_table

    hw = [{"hwthread": i, "thread": i // 2, "core": i % 2, "die": 0, "socket": 0} for i in range(4)]
    (tmp_path / "hosts").mkdir()
    (tmp_path / "hosts" / "n1.json").write_text(
        json.dumps({"topology": {"sockets": 1, "cores": 2, "threads_per_core": 2, "hwthreads": hw}})
    )

    def rec(cpus, threads, t):
        params = {"cpus": cpus, "nices": ""}
        return {"kernel": "smt", "host": "n1", "threads": threads, "params": params,
                "result": {"median_s": t, "max_s": t}}  # fmt: skip

    records = [rec("0", 1, 1.0), rec("1", 1, 1.0), rec("2", 1, 1.0), rec("0,2", 2, 1.8), rec("0,1", 2, 1.02)]
    (row,) = siblings_table(read_hosts(tmp_path), records).to_dict("records")
    assert row["siblings_by_timing"] == "0,2"
    assert row["siblings_by_likwid"] == "0,2 1,3"
    assert row["agree"]  # (1,3) was not timed, so it is not counted as missed
