"""Planning: cross products, union of blocks, excludes, thread expressions, stable case ids, the campaign
directory (campaign.toml, cases.jsonl, manifest.json, results/latest)."""

import json
import tomllib
from pathlib import Path

import pytest

from jobs import toml_write
from jobs.campaign import create_campaign, load_cases, plan_experiment
from jobs.plan import case_id
from sbcore.atomic import write_new
from sbcore.errors import ScalebenchError, UsageError
from sbcore.layout import resolve_campaign

EXPERIMENT = """
description = "plan test"
node_types = ["workstation", "tc-smt"]
repetitions = 2
seed = 5
[env]
OMP_PROC_BIND = "false"

[[sweep]]
binary = ["mcpi-c-omp", "mcpi-c-pthreads"]
threads = [1, "cores", "2*hwthreads"]
pin = ["none", "compact"]
params = { samples = [1000] }

[[sweep]]   # overlaps the first block: the union keeps one copy of each case
binary = ["mcpi-c-omp"]
threads = [1]
pin = ["none"]
params = { samples = [1000] }

[[exclude]]
binary = "mcpi-c-pthreads"
pin = ["compact"]

[[exclude]]
node_type = "tc-smt"
threads = ["2*hwthreads"]
"""


def sysfs_shape() -> tuple[int, int]:
    """(physical cores, hardware threads) of this host straight from sysfs, independent of likwid."""
    cores, hwthreads = set(), 0
    for cpu in Path("/sys/devices/system/cpu").glob("cpu[0-9]*"):
        if (cpu / "topology").is_dir():
            hwthreads += 1
            package = (cpu / "topology" / "physical_package_id").read_text().strip()
            cores.add((package, (cpu / "topology" / "core_id").read_text().strip()))
    return len(cores), hwthreads


@pytest.fixture
def experiment(tmp_path, bin_dir) -> Path:
    path = tmp_path / "plantest.toml"
    path.write_text(EXPERIMENT)
    return path


def test_cross_product_union_and_excludes(experiment):
    _, cases = plan_experiment(experiment)
    cores, hwthreads = sysfs_shape()
    work = {
        (c["node_type"], c["binary"], c["threads"], c["pin"])
        for c in cases
        if c["node_type"] == "workstation"
    }
    expected = {
        ("workstation", b, t, p)
        for b in ("mcpi-c-omp", "mcpi-c-pthreads")
        for t in (1, cores, 2 * hwthreads)
        for p in ("none", "compact")
        if not (b == "mcpi-c-pthreads" and p == "compact")
    }
    assert work == expected
    smt = {(c["binary"], c["threads"], c["pin"]) for c in cases if c["node_type"] == "tc-smt"}
    # tc-smt: 1 core x 2 threads, so "cores" = 1 (same as the literal 1) and 2*hwthreads = 4 is excluded.
    assert smt == {("mcpi-c-omp", 1, "none"), ("mcpi-c-omp", 1, "compact"), ("mcpi-c-pthreads", 1, "none")}
    assert [c["index"] for c in cases] == list(range(len(cases)))
    assert len({c["case_id"] for c in cases}) == len(cases)


def test_case_fields_and_argv(experiment):
    _, cases = plan_experiment(experiment)
    case = next(c for c in cases if c["binary"] == "mcpi-c-pthreads" and c["threads"] == 1)
    assert case["argv"] == ["--threads", "1", "--samples", "1000"]
    assert (case["kernel"], case["lang"], case["model"]) == ("mcpi", "c", "pthreads")
    assert case["env"] == {"OMP_PROC_BIND": "false"}
    assert case["counter_group"] is None and case["reps"] == 2 and case["experiment"] == "plantest"


def test_rank_axes_take_topology_expressions(tmp_path):
    path = tmp_path / "ranks.toml"
    path.write_text(
        'description = "ranks"\nnode_types = ["tc-core", "tc-smt"]\n'
        '[[sweep]]\nbinary = ["mcpi-c-mpi"]\nranks = [1, "cores", "2*hwthreads"]\n'
        "params = { samples = [1000] }\n"
        '[[exclude]]\nnode_type = "tc-core"\nranks = ["2*hwthreads"]\n'
    )
    _, cases = plan_experiment(path)
    ranks = {(c["node_type"], c["ranks"]) for c in cases}
    # tc-core: 2 cores x 1 thread (4 = 2*hwthreads excluded); tc-smt: 1 core x 2 threads
    assert ranks == {("tc-core", 1), ("tc-core", 2), ("tc-smt", 1), ("tc-smt", 4)}


def test_replanning_gives_identical_cases(experiment):
    assert plan_experiment(experiment)[1] == plan_experiment(experiment)[1]


def test_case_id_is_hash_of_content_not_position(experiment):
    _, cases = plan_experiment(experiment)
    case = dict(cases[3])
    moved = case | {"index": 99, "experiment": "other"}
    assert case_id(moved) == case["case_id"]
    assert case_id(case | {"threads": case["threads"] + 1}) != case["case_id"]
    assert len(case["case_id"]) == 12 and int(case["case_id"], 16) >= 0


def test_campaign_directory(experiment, tmp_path):
    results = tmp_path / "results"
    first = create_campaign(experiment, name="c1", results_dir=results)
    assert first == results / "c1"
    assert sorted(p.name for p in first.iterdir()) == [
        "campaign.toml",
        "cases.jsonl",
        "experiment.toml",
        "hosts",
        "logs",
        "manifest.json",
        "raw",
    ]
    cases = load_cases(first)
    assert cases == plan_experiment(experiment)[1]
    config = tomllib.loads((first / "campaign.toml").read_text())
    assert config["campaign"]["name"] == "c1" and config["campaign"]["seed"] == 5
    assert config["repetitions"] == 2 and config["sweep"][0]["threads"] == [1, "cores", "2*hwthreads"]
    assert config["sweep"][1]["warmup"] == 1  # defaults filled in
    manifest = json.loads((first / "manifest.json").read_text())
    for key in (
        "git",
        "compilers",
        "flags",
        "tools",
        "topology",
        "load_average",
        "cpu_times",
        "kernel_binaries",
    ):
        assert key in manifest, key
    assert set(manifest["git"]) == {"commit", "dirty"}
    assert "steal" in manifest["cpu_times"]
    assert manifest["kernel_binaries"]["mcpi-c-omp"].startswith("sha256:")
    assert (results / "latest").resolve() == first.resolve()

    second = create_campaign(experiment, node_types=["tc-smt"], results_dir=results)
    assert second.name.startswith("plantest-") and (results / "latest").resolve() == second.resolve()
    assert {c["node_type"] for c in load_cases(second)} == {"tc-smt"}
    with pytest.raises(UsageError, match="already exists"):
        create_campaign(experiment, name="c1", results_dir=results)


def test_resolve_campaign(experiment, tmp_path, monkeypatch):
    results = tmp_path / "results"
    made = create_campaign(experiment, name="c2", results_dir=results)
    monkeypatch.setenv("SCALEBENCH_RESULTS_DIR", str(results))
    assert resolve_campaign(made) == made.resolve()
    assert resolve_campaign("c2") == made.resolve()
    assert resolve_campaign("latest") == made.resolve()
    with pytest.raises(UsageError, match="campaign 'nope': not a campaign directory"):
        resolve_campaign("nope")


def test_corrupt_cases_file_is_a_clear_error(tmp_path):
    (tmp_path / "cases.jsonl").write_text("{broken\n")
    with pytest.raises(ScalebenchError, match=r"cases.jsonl:1: not valid JSON"):
        load_cases(tmp_path)
    # A line that is JSON but not a planned case (fields, types, ranges, the case id's form) is named too.
    (tmp_path / "cases.jsonl").write_text('{"case_id": "a", "index": 0}\n')
    with pytest.raises(ScalebenchError, match=r"cases.jsonl:1: not a case: 'node_type' is missing"):
        load_cases(tmp_path)


def test_toml_writer_round_trips():
    data = {
        "s": 'quote " backslash \\ newline \n $(x)',
        "i": -3,
        "f": 0.1,
        "b": True,
        "l": [1, "two", 3.5],
        "key with space": 1,
        "t": {"inner": [], "env": {"A_B": "c"}},
        "arr": [{"x": 1, "sub": {"y": ["z"]}}, {"x": 2}],
    }
    assert tomllib.loads(toml_write.dumps(data)) == data


def test_toml_writer_round_trips_any_unicode():
    """An emoji (outside the Basic Multilingual Plane: a surrogate pair in JSON escapes, which TOML
    rejects), other scripts, control characters and a key that needs quoting read back as written."""
    text = "speed 🚀 — Größe 速度 \u0007 tab\t \U0001f9ea"
    data = {"description": text, "🔑 key": [text], "t": {"name": "naïve ✓"}, "arr": [{"x": "😀"}]}
    written = toml_write.dumps(data)
    assert "🚀" in written  # written as the character, not as an escape of its surrogate halves
    assert tomllib.loads(written) == data
    assert tomllib.loads(f"v = {toml_write.value(text)}") == {"v": text}


def test_write_new_never_replaces(tmp_path):
    path = tmp_path / "rep-0.json"
    assert write_new(path, "first")
    assert not write_new(path, "second")
    assert path.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["rep-0.json"]  # no temporary left behind
