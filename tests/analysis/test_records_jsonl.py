"""Records of format v1 (records.jsonl) as the analysis reads them (analysis/records/load.py): the
columns a record's structured fields become, the order of the rows, and what a damaged file gives."""

import json

import numpy as np
import pytest

from analysis.records import load
from tests.synthetic_campaigns import CaseSpec, NodeTypeSpec, make_record


def _base_record(case_id: str, rep: int) -> dict:
    spec = CaseSpec("big", "mandelbrot", "c", "omp", 4, schedule="dynamic,4", counter_group="L2CACHE")
    spec.runner_fields = True
    node = NodeTypeSpec("big", cores=8, counters=True)
    case = {
        "case_id": case_id,
        "index": 3,
        "params": {"width": 64, "height": 32, "schedule": "dynamic,4", "tol": 0.5, "name": 'é"x'},
        "argv": ["--threads", "4"],
    }
    rng = np.random.default_rng(rep)
    return make_record(spec, node, case, "camp", rep, 0.5 + 0.01 * rep, "fnv1a64:00", rng)


def _write_case(root, case_id: str, lines: list[str]) -> dict:
    directory = root / "raw" / case_id
    directory.mkdir(parents=True)
    data = "".join(line + "\n" for line in lines).encode()
    (directory / "records.jsonl").write_bytes(data)
    return {f"raw/{case_id}/records.jsonl#{len(data)}": None}


def test_the_result_is_in_the_table_as_json_text(tmp_path):
    """A record's own statistics (`result`) become result_json, compact JSON text with its keys in the
    record's order; records without one (runners of old) have no such column."""
    result = {"op": "spawn", "median_s": 1.5e-5, "ops": 100, "compares_with": {"z": 1, "a": 2}}
    records = [_base_record("c1", rep) for rep in range(3)]
    records[1]["result"] = result
    parsed = load.parse_files(tmp_path, _write_case(tmp_path, "c1", list(map(json.dumps, records))))
    texts = parsed.records["result_json"].astype(object).tolist()
    assert json.loads(texts[1]) == result and list(json.loads(texts[1])["compares_with"]) == ["z", "a"]
    assert json.loads(texts[0]) == _base_record("c1", 0)["result"]
    without = [{k: v for k, v in _base_record("c2", rep).items() if k != "result"} for rep in range(2)]
    parsed = load.parse_files(tmp_path, _write_case(tmp_path, "c2", list(map(json.dumps, without))))
    assert "result_json" not in parsed.records


def test_text_in_the_first_counted_record_is_read(tmp_path):
    records = [_base_record("c1", rep) for rep in range(3)]
    records[0]["counters"]["metrics"]["CPI"]["min"] = "lots"
    parsed = load.parse_files(tmp_path, _write_case(tmp_path, "c1", list(map(json.dumps, records))))
    assert parsed.records["ctr_cpi_min"].astype(object).tolist()[0] == "lots"


def test_metric_names_sharing_a_column_keep_the_later_entry_and_the_first_seen_order(tmp_path):
    """ "L2 miss ratio" and "L2-miss ratio" are both ctr_l2_miss_ratio_*: in a record with both, the
    later one counts; columns come in the order their first name was first seen; the per-hwthread
    table keeps both names."""
    lines = []
    for rep, renamed in enumerate([[], ["L2-miss ratio"], ["L2-miss ratio", "L2 miss ratio"], ["Extra"]]):
        record = _base_record("c1", rep)
        metrics = record["counters"]["metrics"]
        if renamed:
            metrics.pop("L2 miss ratio")
        for k, name in enumerate(renamed):
            metrics[name] = {**metrics["CPI"], "sum": 100.0 * rep + k}
        lines.append(json.dumps(record))
    parsed = load.parse_files(tmp_path, _write_case(tmp_path, "c1", lines))
    sums = [c for c in parsed.records.columns if c.endswith("_sum")]
    assert sums == ["ctr_cpi_sum", "ctr_l2_miss_ratio_sum", "ctr_extra_sum"]
    l2 = parsed.records["ctr_l2_miss_ratio_sum"].tolist()
    assert l2[1:3] == [100.0, 201.0] and np.isnan(l2[3])
    assert {"L2 miss ratio", "L2-miss ratio", "Extra"} <= set(parsed.counters["metric"])


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("truncated last line", lambda lines: "\n".join(lines)[:-20], "records.jsonl:3"),
        ("blank line", lambda lines: "\n".join([lines[0], "", *lines[1:]]) + "\n", None),
        ("not JSON", lambda lines: "\n".join([lines[0], "{nope", *lines[1:]]) + "\n", "records.jsonl:2"),
        ("a repetition twice", lambda lines: "\n".join([*lines, lines[0]]) + "\n", "records.jsonl:4"),
    ],
)
def test_damaged_lines_are_named_and_the_others_read(tmp_path, name, text, problem):
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    directory = tmp_path / "raw" / "c1"
    directory.mkdir(parents=True)
    data = text(lines).encode()
    (directory / "records.jsonl").write_bytes(data)
    parsed = load.parse_files(tmp_path, {f"raw/c1/records.jsonl#{len(data)}": None})
    if problem is None:
        assert parsed.problems.empty and len(parsed.records) == 3
    else:
        assert [f.removeprefix("raw/c1/") for f in parsed.problems["file"]] == [problem], name
        assert len(parsed.records) == (2 if "truncated" in name else 3)


def test_only_the_listed_bytes_are_read(tmp_path):
    """A writer appending while the campaign is listed: the line beyond the listed size is not read."""
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    keys = _write_case(tmp_path, "c1", lines[:2])
    with (tmp_path / "raw" / "c1" / "records.jsonl").open("a") as handle:
        handle.write(lines[2] + "\n")
    assert list(load.parse_files(tmp_path, keys).records["rep"]) == [0, 1]


def test_rows_by_repetition_and_line(tmp_path):
    lines = [json.dumps(_base_record("c1", rep)) for rep in (2, 0, 1)]
    parsed = load.parse_files(tmp_path, _write_case(tmp_path, "c1", lines))
    assert list(parsed.records["rep"]) == [0, 1, 2]
    assert list(parsed.records["record_line"]) == [2, 3, 1]


def test_a_per_thread_value_under_a_bad_key_is_dropped_alone_and_named():
    from analysis.records.derive import hwthread_values

    metrics = {
        "CPI": {"per_hwthread": {"0": 1.0, "x": 2.0, "1": "-", "2": 3.0}},
        "Odd": {"per_hwthread": [1]},
    }
    values, problems = hwthread_values({"counters": {"status": "ok", "metrics": metrics}})
    assert [(m, t) for m, t, _ in values] == [("CPI", 0), ("CPI", 1), ("CPI", 2)]  # before and after "x"
    assert values[0][2] == 1.0 and np.isnan(values[1][2]) and values[2][2] == 3.0
    assert (
        len(problems) == 2 and "CPI: invalid literal" in problems[0] and "Odd: not an object" in problems[1]
    )


def test_a_probe_time_that_is_a_boolean_is_no_time():
    from analysis.records.machine_state import probe_columns

    side = {"cpus": [0, 1], "int_mul_s": [True, 2e-4]}
    row = probe_columns({"before": side, "after": side, "min_s": {"int_mul": False}})
    assert row["probe_int_mul_min_s"] == row["probe_int_mul_max_s"] == 2e-4
