"""The compiled reader of records.jsonl files (analysis/records/native_reader.py) against the Python path it
stands in for: where it takes a file, the records and counters tables are exactly the Python path's;
where a file is anything but ordinary, it refuses it and the Python path reads (and reports) it."""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from analysis.pipeline import Options, analyze
from analysis.records import load, native_library, native_reader
from jobs import probe_detail
from tests.synthetic_campaigns import (
    CaseSpec,
    NodeTypeSpec,
    make_record,
    plant_corrupt_files,
    standard_campaign,
)


def test_the_reader_is_built_for_the_suite():
    """`make test` builds it: a suite that silently tested only the Python path would prove nothing."""
    assert native_reader.library() is not None, f"{native_library.LIBRARY} missing: run make native"


def test_a_library_that_does_not_load_leaves_the_python_path(tmp_path, monkeypatch):
    """Built on another machine, or libsimdjson missing here: a warning, and the Python path reads."""
    broken = tmp_path / "libsb_native.so"
    broken.write_text("not a shared object")
    monkeypatch.setattr(native_library, "LIBRARY", broken)
    monkeypatch.setattr(native_library, "_loaded", None)
    with pytest.warns(UserWarning, match="not loadable"):
        assert native_library.load() is None
    keys = _case_with(tmp_path, ORDINARY["as the kernel writes it (older runners stored it so)"])
    native, rest = load.parse_native(tmp_path, keys, 2)
    assert native == [] and rest == keys


def test_a_library_of_other_sources_leaves_the_python_path(tmp_path, monkeypatch):
    monkeypatch.setattr(native_reader, "SLOTS", native_reader.SLOTS[:-1])
    with pytest.warns(UserWarning, match="make native"):
        assert native_reader.library() is None


def _base_record(case_id: str, rep: int, counters: bool = True) -> dict:
    spec = CaseSpec(
        "big",
        "mandelbrot",
        "c",
        "omp",
        4,
        schedule="dynamic,4",
        counter_group="L2CACHE" if counters else None,
    )
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


def _both(root, keys: dict):
    """(the Python path's Parsed, the reader's Parsed or None when it refused a file)."""
    python = load.parse_files(root, keys)
    native, rest = load.parse_native(root, keys, 2)
    return python, (native[0] if native and not rest else None)


def _assert_same(python, native) -> None:
    pd.testing.assert_frame_equal(python.records, native.records, check_exact=True)
    pd.testing.assert_frame_equal(python.counters, native.counters, check_exact=True)
    assert python.problems.empty


def _mutated(field_path: str, value):
    def mutate(record: dict) -> dict:
        record = copy.deepcopy(record)
        *parents, last = field_path.split(".")
        target = record
        for key in parents:
            target = target[key]
        if value is _DELETE:
            target.pop(last, None)
        else:
            target[last] = value
        return record

    return mutate


_DELETE = object()

# Records the reader must take, and read as the Python path does: the shapes real campaigns hold.
ORDINARY = {
    "as the kernel writes it (older runners stored it so)": lambda r: r,
    "probe times in probes.jsonl (as the runner stores it)": lambda r: probe_detail.split(r)[0],
    "no CPU probed": lambda r: _mutated("probe.n_cpus", None)(probe_detail.split(r)[0]),
    "int where others are floats": _mutated("cpu_sys_s", 0),
    "null optional number": _mutated("setup_s", None),
    "missing optional fields": lambda r: {k: v for k, v in r.items() if k not in ("host", "slurm", "uarch")},
    "no schedule field (from params)": _mutated("schedule", _DELETE),
    "no probe": _mutated("probe", None),
    "cache-line transfer timed": lambda r: _mutated("probe.max_s.xfer", 2e-7)(
        _mutated("probe.min_s.xfer", 6e-8)(r)
    ),
    "cache-line transfer null (one CPU)": lambda r: _mutated("probe.max_s.xfer", None)(
        _mutated("probe.min_s.xfer", None)(r)
    ),
    "no integer-ALU block (kernels before it)": lambda r: _mutated("probe.max_s.int_alu", _DELETE)(
        _mutated("probe.min_s.int_alu", _DELETE)(r)
    ),
    "integer-ALU block null (no CPU measured)": lambda r: _mutated("probe.max_s.int_alu", None)(
        _mutated("probe.min_s.int_alu", None)(r)
    ),
    "counters off": _mutated("counters", {"status": "off", "group": None}),
    "counter value unmeasured": _mutated(
        "counters.metrics.CPI.per_hwthread", {"0": "-", "1": None, "2": 1.5}
    ),
    "counter values absent": _mutated("counters.metrics.CPI.per_hwthread", None),
    "mpi rank times": _mutated("rank_wall_s", [0.5, 0.25, 1]),
    "clock without readings": _mutated("clock", {"method": "none"}),
    "clock reading as int": _mutated("clock.after_ghz", 4),
    "warmup true": _mutated("warmup", True),
    "warmup as number": _mutated("warmup", 0),
    "pin null": _mutated("pin", None),
    "text with escapes": _mutated("hostname", 'a\\"b\u00e9\t\u2603'),
    "float params": _mutated("params", {"width": 64.0, "height": 1e300, "x": [1, 2.5, {"y": None}]}),
    "negative zero": _mutated("setup_s", -0.0),
    "big int": _mutated("work", 2**62),
    "sampling stop": _mutated("sampling.stop", "ci reached"),
    "slurm": _mutated("slurm", {"job_id": 17, "array_task_id": 3}),
    "probe extremes as ints": _mutated("probe.min_s.int_mul", 1),
    "probe without cpus": _mutated("probe.before.cpus", None),
    "unknown field": _mutated("something_new", {"a": [1, 2]}),
    "microbenchmark result": _mutated(
        "result", {"op": "spawn", "median_s": 1.5e-5, "ops": 100, "p99_s": 2e-5}
    ),
    "tool result": _mutated(
        "result",
        {"compares_with": {"kernel": "osbench", "params": {"op": "x"}, "stat": "mean_s"}, "mean_s": 0.25},
    ),
    "result null": _mutated("result", None),
}

# Records whose shape the reader leaves to the Python path (which then reads or reports them).
UNUSUAL = {
    "CPU count as text": lambda r: _mutated("probe.n_cpus", "3")(probe_detail.split(r)[0]),
    "CPU count zero": lambda r: _mutated("probe.n_cpus", 0)(probe_detail.split(r)[0]),
    "bad type of a required field": _mutated("threads", "four"),
    "threads zero": _mutated("threads", 0),
    "wall_s zero": _mutated("wall_s", 0),
    "wrong schema": _mutated("schema", "other/1"),
    "missing wall_s": _mutated("wall_s", _DELETE),
    "params not an object": _mutated("params", [1, 2]),
    "int beyond 64 bits": _mutated("work", 2**70),
    "object in a copied field": _mutated("host", {"name": "x"}),
    "text and numbers in one column": _mutated("setup_s", "fast"),
    "probe without extremes": _mutated("probe.min_s", _DELETE),
    "probe extreme null": _mutated("probe.max_s.fp_lat", None),
    "probe side not an object": _mutated("probe.before", [1]),
    "counter values empty": _mutated("counters.metrics.CPI.per_hwthread", {}),
    "counter values odd": _mutated("counters.metrics.CPI.per_hwthread", {"x": 1}),
    "counter value true": _mutated("counters.metrics.CPI.per_hwthread", {"0": True}),
    "counter stat text": _mutated("counters.metrics.CPI.sum", "lots"),
    "metric not an object": _mutated("counters.metrics.CPI", 3),
    "pin a list": _mutated("pin", [1]),
    "violations text": _mutated("pin.violations", "none"),
    "warmup times a number": _mutated("warmup_wall_s", 3),
    "rank times text": _mutated("rank_wall_s", "fast"),
    "rank times with text": _mutated("rank_wall_s", [1, "x"]),
    "clock reading true": _mutated("clock.before_ghz", True),
    "a competing load": _mutated("load", {"profile": {"name": "cpu"}, "cpu_s": 1.0}),
    "case of another directory": _mutated("case_id", "elsewhere"),
    "bool and null in a column": _mutated("cpu_sys_s", True),
}


def _case_with(root, mutate) -> dict:
    """A case of three records, the middle one changed by `mutate`; its listed keys."""
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    lines[1] = json.dumps(mutate(json.loads(lines[1])))
    return _write_case(root, "c1", lines)


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_records_are_taken_and_read_as_python_reads_them(tmp_path, name):
    python, native = _both(tmp_path, _case_with(tmp_path, ORDINARY[name]))
    assert native is not None, f"{name}: refused"
    _assert_same(python, native)


@pytest.mark.parametrize("name", sorted(UNUSUAL))
def test_unusual_records_are_left_to_the_python_path(tmp_path, name):
    keys = _case_with(tmp_path, UNUSUAL[name])
    python, native = _both(tmp_path, keys)
    assert native is None, f"{name}: taken"
    # the campaign as a whole still reads exactly as the Python path reads it
    mixed = load.parse_parallel(tmp_path, keys, 2)
    assert len(mixed) == 1
    pd.testing.assert_frame_equal(python.records, mixed[0].records, check_exact=True)
    pd.testing.assert_frame_equal(python.problems, mixed[0].problems)


def test_the_result_is_in_the_table_as_json_text(tmp_path):
    """A record's own statistics (`result`: a kernel's iterations, a microbenchmark's per-operation
    times) become result_json, compact JSON text with its keys in the record's order, from both
    readers; records without one (runners of old) have no such column."""
    result = {"op": "spawn", "median_s": 1.5e-5, "ops": 100, "compares_with": {"z": 1, "a": 2}}
    python, native = _both(tmp_path, _case_with(tmp_path, _mutated("result", result)))
    assert native is not None
    _assert_same(python, native)
    texts = python.records["result_json"].astype(object).tolist()
    assert json.loads(texts[1]) == result and list(json.loads(texts[1])["compares_with"]) == ["z", "a"]
    assert json.loads(texts[0]) == _base_record("c1", 0)["result"]
    without = _mutated("result", _DELETE)
    lines = [json.dumps(without(_base_record("c2", rep))) for rep in range(2)]
    python, native = _both(tmp_path, _write_case(tmp_path, "c2", lines))
    assert "result_json" not in python.records and "result_json" not in native.records


def test_text_in_the_first_counted_record_is_read(tmp_path):
    """A counter statistic given as text in the first record that has counters: the Python path types
    the column (it used to stop on it), and the reader leaves the file to it."""
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    lines[0] = json.dumps(_mutated("counters.metrics.CPI.min", "lots")(json.loads(lines[0])))
    python, native = _both(tmp_path, _write_case(tmp_path, "c1", lines))
    assert native is None
    assert python.records["ctr_cpi_min"].astype(object).tolist()[0] == "lots"


def _metric_twice(line: str) -> str:
    name, value = next(iter(json.loads(line)["counters"]["metrics"].items()))
    return line.replace('"metrics": {', f'"metrics": {{"{name}": {json.dumps(value)}, ', 1)


def test_metric_names_sharing_a_column_keep_the_later_entry_and_the_first_seen_order(tmp_path):
    """ "L2 miss ratio" and "L2-miss ratio" are both ctr_l2_miss_ratio_*: in a record with both, the
    later one counts; columns come in the order their first name was first seen (a metric seen only in
    a later record comes after the others); the per-hwthread table keeps both names."""
    lines = []
    for rep, renamed in enumerate([[], ["L2-miss ratio"], ["L2-miss ratio", "L2 miss ratio"], ["Extra"]]):
        record = _base_record("c1", rep)
        metrics = record["counters"]["metrics"]
        if renamed:
            metrics.pop("L2 miss ratio")
        for k, name in enumerate(renamed):
            metrics[name] = {**metrics["CPI"], "sum": 100.0 * rep + k}
        lines.append(json.dumps(record))
    python, native = _both(tmp_path, _write_case(tmp_path, "c1", lines))
    assert native is not None, "refused"
    _assert_same(python, native)
    sums = [c for c in native.records.columns if c.endswith("_sum")]
    assert sums == ["ctr_cpi_sum", "ctr_l2_miss_ratio_sum", "ctr_extra_sum"]
    l2 = native.records["ctr_l2_miss_ratio_sum"].tolist()
    assert l2[1:3] == [100.0, 201.0] and np.isnan(l2[3])  # (the record with both: the later one)
    assert {"L2 miss ratio", "L2-miss ratio", "Extra"} <= set(native.counters["metric"])


@pytest.mark.parametrize(
    "twice",
    [
        lambda line: line.replace('{"schema"', '{"wall_s": 9.5, "schema"', 1),  # a field given twice
        _metric_twice,
        lambda line: line.replace('"sum": ', '"sum": 1.5, "sum": ', 1),  # a metric's statistic
        lambda line: line.replace('"per_hwthread": ', '"per_hwthread": null, "per_hwthread": ', 1),
    ],
    ids=["a field twice", "a metric twice", "a statistic twice", "per-hwthread values twice"],
)
def test_a_name_given_twice_is_left_to_the_python_path(tmp_path, twice):
    """Which of two values a decoder keeps is its own business: the reader does not guess."""
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    lines[1] = twice(lines[1])
    assert lines[1] != json.dumps(_base_record("c1", 1))
    keys = _write_case(tmp_path, "c1", lines)
    python, native = _both(tmp_path, keys)
    assert native is None
    mixed = load.parse_parallel(tmp_path, keys, 2)
    pd.testing.assert_frame_equal(python.records, mixed[0].records, check_exact=True)


@pytest.mark.parametrize(
    "name, text",
    [
        ("truncated last line", lambda lines: "\n".join(lines)[:-20]),
        (
            "blank line (skipped by the Python path)",
            lambda lines: "\n".join([lines[0], "", *lines[1:]]) + "\n",
        ),
        ("not JSON", lambda lines: "\n".join([lines[0], "{nope", *lines[1:]]) + "\n"),
        ("two values on a line", lambda lines: "\n".join([lines[0] + " 1", *lines[1:]]) + "\n"),
        ("a repetition twice", lambda lines: "\n".join([*lines, lines[0]]) + "\n"),
        (
            "invalid UTF-8",
            lambda lines: "\n".join([lines[0].replace("mandelbrot", "mandel\udcffbrot"), *lines[1:]]) + "\n",
        ),
    ],
)
def test_damaged_files_are_refused(tmp_path, name, text):
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    directory = tmp_path / "raw" / "c1"
    directory.mkdir(parents=True)
    data = text(lines).encode("utf-8", "surrogateescape")
    (directory / "records.jsonl").write_bytes(data)
    keys = {f"raw/c1/records.jsonl#{len(data)}": None}
    python, native = _both(tmp_path, keys)
    assert native is None
    if "skipped" in name:
        assert python.problems.empty and len(python.records) == 3
    else:
        assert not python.problems.empty  # the Python path names the problem


def test_only_the_listed_bytes_are_read(tmp_path):
    """A writer appending while the campaign is listed: the line beyond the listed size is not read."""
    lines = [json.dumps(_base_record("c1", rep)) for rep in range(3)]
    keys = _write_case(tmp_path, "c1", lines[:2])
    with (tmp_path / "raw" / "c1" / "records.jsonl").open("a") as handle:
        handle.write(lines[2] + "\n")
    python, native = _both(tmp_path, keys)
    assert list(native.records["rep"]) == [0, 1]
    _assert_same(python, native)


def test_rows_by_repetition_and_line(tmp_path):
    lines = [json.dumps(_base_record("c1", rep)) for rep in (2, 0, 1)]
    python, native = _both(tmp_path, _write_case(tmp_path, "c1", lines))
    assert list(native.records["rep"]) == [0, 1, 2]
    assert list(native.records["record_line"]) == [2, 3, 1]
    _assert_same(python, native)


# Pairs of values that parse to runs of the same length but are not the same JSON value: the reader
# writes a line's params, pinned CPUs, placement and scheduling out only when they differ from the
# previous line's, so a difference it missed would show the previous line's value.
NEAR_MISSES = [
    ([[0, 1], [2]], [[0], [1, 2]]),
    ([1, [2]], [[1], 2]),
    ("ab", "ba"),
    ("a", "b"),
    ("ab", "abc"),
    ({"k": "ab", "l": "c"}, {"k": "ab", "l": "d"}),
    (1, 1.0),
    (-0.0, 0.0),
    (1, 2),
    ({"a": 1}, {"b": 1}),
    ({"x": {"y": 1}}, {"x": {"z": 1}}),
    ({"x": {"y": 1}, "z": []}, {"x": {"y": 1, "z": []}}),
    (True, False),
    (None, True),
    ([], {}),
]


def test_values_differing_from_the_previous_line_are_read_as_they_are(tmp_path):
    """Each value twice in a row (the second is the previous line's), then its near miss."""
    lines = []
    for first, second in NEAR_MISSES:
        for value in (first, first, second):
            record = _base_record("c1", len(lines))
            record["params"]["v"] = value
            record["pin"]["cpus"] = [0, value] if isinstance(value, int) else [0, 1]
            record["placement"] = [[0, 0], [1, value]]
            record["sched"]["applied"] = [["other", 0, value]]
            lines.append(json.dumps(record))
    python, native = _both(tmp_path, _write_case(tmp_path, "c1", lines))
    assert native is not None, "refused"
    _assert_same(python, native)
    assert native.records["params_json"].nunique() > len(NEAR_MISSES)  # the near misses are told apart


def test_a_synthetic_campaign_analyses_as_with_the_python_path(tmp_path, monkeypatch):
    """The standard campaign with its records as campaigns before scalebench.run/2 hold them (the
    reader's input: records.jsonl; rep-<k>.json cases, failed attempts, corrupt files): every table of
    the analysis is the same with and without the reader."""
    truth = standard_campaign(tmp_path, seed=5, records_format="v1")
    plant_corrupt_files(truth)
    options = Options(n_resamples=50, seed=1, use_cache=False)
    with_reader = analyze(truth.campaign_dir, options)
    keys = layout_keys(truth.campaign_dir)
    native, rest = load.parse_native(truth.campaign_dir, keys, 2)
    assert native and len(native[0].records) > 0.8 * len(with_reader.loaded.records)  # it did the work
    monkeypatch.setenv("SCALEBENCH_NATIVE", "0")
    without = analyze(truth.campaign_dir, options)
    for table in ("records", "counters", "problems", "failed"):
        pd.testing.assert_frame_equal(
            getattr(with_reader.loaded, table), getattr(without.loaded, table), check_exact=True
        )
    pd.testing.assert_frame_equal(with_reader.summary, without.summary, check_exact=True)


def layout_keys(campaign_dir) -> dict:
    from sbcore import layout

    return layout.raw_files(campaign_dir)


def test_the_compiled_lister_lists_as_the_layout_does(tmp_path, monkeypatch):
    """Directories holding records.jsonl alone (or with probes.jsonl) are listed by the compiled
    lister; any other name sends the directory to sbcore.layout's rules: the same listing either way."""
    raw = tmp_path / "raw"
    contents = {
        "only-records": {"records.jsonl": "{}\n"},
        "with-probes": {"records.jsonl": "{}\n{}\n", "probes.jsonl": "{}\n"},
        "probes-only": {"probes.jsonl": "{}\n"},
        "empty": {},
        "older-layout": {"rep-0.json": "{}", "rep-1.json": "{}", "records.jsonl": "{}\n"},
        "failed": {"rep-2.failed-20261122T000000Z-1.json": "{}", "records.jsonl": ""},
        "image": {"rep-0.pgm": "P5", "records.jsonl": "{}\n"},
    }
    for case, files in contents.items():
        (raw / case).mkdir(parents=True)
        for name, text in files.items():
            (raw / case / name).write_text(text)
    (raw / "records-is-a-directory" / "records.jsonl").mkdir(parents=True)
    case_ids = [*sorted(contents), "records-is-a-directory", "vanished"]
    native = load.case_files(tmp_path, case_ids)
    listed = native_reader.listing(str(raw), case_ids, 2)
    assert listed is not None and sum(listed[1]) == 4  # the first four kinds above, by the lister
    monkeypatch.setenv("SCALEBENCH_NATIVE", "0")
    monkeypatch.setattr(native_library, "_loaded", None)
    assert native_reader.library() is None
    python = load.case_files(tmp_path, case_ids)
    assert list(native) == list(python)
    assert "raw/with-probes/records.jsonl#6" in python and "raw/failed/records.jsonl#0" in python
