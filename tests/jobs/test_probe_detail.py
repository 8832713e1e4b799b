"""The runner keeps a probe's extremes and CPU count in the record and its per-CPU times beside it."""

import copy

from analysis.records.machine_state import probe_columns
from jobs import probe_detail


def _record() -> dict:
    side = {"cpus": [2, 3], "int_mul_s": [1e-3, 2e-3], "fp_lat_s": [3e-3, 4e-3], "fp_tput_s": [5e-3, 6e-3]}
    after = {
        "cpus": [3, 4],
        "int_mul_s": [1.5e-3, 2.5e-3],
        "fp_lat_s": [3e-3, 9e-3],
        "fp_tput_s": [5e-3, 7e-3],
    }
    return {
        "case_id": "c1",
        "rep": 4,
        "probe": {
            "int_mul_iters": 400000,
            "before": side,
            "after": after,
            "runq_wait_s": 1e-4,
            "min_s": {"int_mul": 1e-3, "fp_lat": 3e-3, "fp_tput": 5e-3},
            "max_s": {"int_mul": 2.5e-3, "fp_lat": 9e-3, "fp_tput": 7e-3},
        },
        "sampling": {"n": 5},
    }


def test_the_record_keeps_what_the_analysis_reads():
    record = _record()
    stored, detail = probe_detail.split(copy.deepcopy(record))
    assert "before" not in stored["probe"] and "after" not in stored["probe"]
    assert stored["probe"]["n_cpus"] == 3  # CPUs 2, 3 and 4 over both sides
    assert list(stored) == list(record)  # the probe stays where the kernel put it
    assert detail == {
        "case_id": "c1",
        "rep": 4,
        "before": record["probe"]["before"],
        "after": record["probe"]["after"],
    }
    # The analysis reads the same columns from the stored record as from the kernel's.
    assert probe_columns(stored["probe"]) == probe_columns(record["probe"])


def test_probes_without_the_kernels_extremes_keep_their_times():
    record = _record()
    del record["probe"]["max_s"]
    assert probe_detail.split(record) == (record, None)
    for probe in (None, {"runq_wait_s": 1e-4}):
        assert probe_detail.split(record | {"probe": probe}) == (record | {"probe": probe}, None)


def test_no_cpu_probed_counts_none():
    record = _record()
    record["probe"]["before"]["cpus"] = record["probe"]["after"]["cpus"] = None
    stored, _ = probe_detail.split(record)
    assert stored["probe"]["n_cpus"] is None and probe_columns(stored["probe"])["probe_cpus"] is None
