"""Command construction (likwid-pin, likwid-perfctr, mpirun/srun), Slurm ids and counters in records."""

import json
import os
import shutil
from pathlib import Path

import pytest

from jobs.campaign import create_campaign, load_cases
from jobs.counter_record import counters_from_csv
from jobs.runcase import Context, build_command, run_case
from jobs.topology import parse_likwid_topology
from tests.records import case_record

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "likwid"
TOPO = parse_likwid_topology((FIXTURES / "topology-2s-4c-smt2.txt").read_text()).to_json()


def context(tmp_path, counters: bool) -> Context:
    host = {"topology": TOPO, "counters": {"available": counters, "reason": "test verdict"}}
    return Context(tmp_path, "camp", host, "node17")


def case(**overrides) -> dict:
    base = {
        "case_id": "0123456789ab",
        "index": 0,
        "node_type": "tc-core",
        "binary": "mcpi-c-omp",
        "model": "omp",
        "threads": 4,
        "ranks": 1,
        "pin": "scatter",
        "counter_group": None,
        "reps": 1,
        "warmup": 2,
        "timeout_s": 10,
        "env": {"A": "b"},
        "argv": ["--threads", "4", "--samples", "10"],
    }
    return base | overrides


def test_pinned_command_through_likwid_pin(tmp_path):
    cmd = build_command(context(tmp_path, False), case(pin_tool="likwid-pin"), 0, env={})
    assert cmd.argv[:4] == ["likwid-pin", "-q", "-c", "0,4,1,5"]
    assert cmd.argv[4].endswith("/mcpi-c-omp")
    assert cmd.argv[5:] == ["--threads", "4", "--samples", "10", "--reps", "1", "--warmup", "2"]
    assert cmd.pin == {
        "strategy": "scatter",
        "cpus": [0, 4, 1, 5],
        "command": cmd.argv[:4],
        "violations": [],
        "tool": "likwid-pin",
    }
    assert cmd.env["A"] == "b" and cmd.env["OMP_NUM_THREADS"] == "4"
    assert cmd.counters == {"status": "off", "group": None} and cmd.affinity is None
    assert "LD_PRELOAD" not in cmd.env


def test_pinned_command_through_likwid_environment(tmp_path, monkeypatch):
    ctx = context(tmp_path, False)
    ctx.host["pin_library"] = "/tmp/elsewhere/evil.so"  # a campaign file's path is never preloaded
    monkeypatch.setattr("jobs.runcase.find_pin_library", lambda: "/opt/likwid/lib/liblikwidpin.so.5")
    cmd = build_command(ctx, case(pin_tool="preload"), 0, env={"LD_PRELOAD": "/x/other.so"}, nreps=5)
    assert cmd.argv[0].endswith("/mcpi-c-omp") and "likwid-pin" not in cmd.argv
    assert cmd.argv[1:] == ["--threads", "4", "--samples", "10", "--reps", "5", "--warmup", "2"]
    assert cmd.pin["tool"] == "preload" and cmd.pin["command"] is None and cmd.pin["cpus"] == [0, 4, 1, 5]
    # What likwid-pin -q -c 0,4,1,5 would export: the list rotated (its first CPU last), the library first.
    assert cmd.env["LIKWID_PIN"] == "4,1,5,0" and cmd.env["LIKWID_HWTHREADS"] == "0,4,1,5"
    assert cmd.env["LD_PRELOAD"] == "/opt/likwid/lib/liblikwidpin.so.5:/x/other.so"
    assert cmd.env["LD_LIBRARY_PATH"] == "/opt/likwid/lib"
    assert cmd.env["LIKWID_SILENT"] == "true" and cmd.env["KMP_AFFINITY"] == "disabled"
    assert cmd.env["OMP_NUM_THREADS"] == "4" and cmd.env["A"] == "b"
    assert cmd.affinity == [0]
    single = build_command(ctx, case(threads=1, argv=["--threads", "1"], pin_tool="preload"), 0, env={})
    # One CPU: likwid-pin pins the process itself and preloads nothing; so does the runner.
    assert single.affinity == [0] and "LD_PRELOAD" not in single.env and single.env["LIKWID_PIN"] == "0"


def test_pinned_command_by_the_harness(tmp_path):
    """The default: the kernel gets the planned list and pins its workers itself; nothing is preloaded,
    no wrapper runs, and a caller's own SB_PIN_CPUS never reaches an unpinned case."""
    ctx = context(tmp_path, False)
    cmd = build_command(ctx, case(), 0, env={"LD_PRELOAD": "/x/other.so"}, nreps=5)
    assert cmd.argv[0].endswith("/mcpi-c-omp") and cmd.pin["tool"] == "harness" and cmd.pin["command"] is None
    assert cmd.env["SB_PIN_CPUS"] == "0,4,1,5" and cmd.env["LD_PRELOAD"] == "/x/other.so"
    assert "LIKWID_PIN" not in cmd.env and cmd.affinity is None
    unpinned = build_command(ctx, case(pin="none"), 0, env={"SB_PIN_CPUS": "3"})
    assert "SB_PIN_CPUS" not in unpinned.env


def test_counted_command_when_counters_work(tmp_path):
    cmd = build_command(context(tmp_path, True), case(counter_group="FLOPS_DP"), 3, env={})
    assert cmd.argv[:3] == ["likwid-perfctr", "-C", "0,4,1,5"]
    assert cmd.argv[3:8] == ["-g", "FLOPS_DP", "-m", "-O", "-o"]
    assert cmd.csv_path is not None and cmd.argv[8] == str(cmd.csv_path)
    unpinned = build_command(context(tmp_path, True), case(counter_group="CLOCK", pin="none"), 0, env={})
    assert unpinned.argv[:3] == ["likwid-perfctr", "-c", ",".join(str(i) for i in range(16))]


def test_uncounted_when_counters_do_not_work(tmp_path):
    cmd = build_command(context(tmp_path, False), case(counter_group="FLOPS_DP"), 0, env={})
    assert cmd.argv[0].endswith("/mcpi-c-omp") and cmd.env["SB_PIN_CPUS"] and cmd.csv_path is None
    assert cmd.counters == {"status": "unavailable", "group": "FLOPS_DP", "reason": "test verdict"}


def test_counter_csv_is_merged_into_the_record(tmp_path):
    csv = tmp_path / "out.csv"
    shutil.copy(FIXTURES / "perfctr-marker-2threads-FLOPS_DP.csv", csv)
    counters = counters_from_csv(csv, {"group": "FLOPS_DP", "cpus": [0, 1]})
    assert counters["status"] == "ok" and counters["region"] == "compute"
    assert counters["metrics"]["CPI"]["per_hwthread"] == {"0": 0.6, "1": 0.7}
    assert not csv.exists()
    broken = tmp_path / "broken.csv"
    shutil.copy(FIXTURES / "perfctr-marker-2threads-truncated.csv", broken)
    lost = counters_from_csv(broken, {"group": "FLOPS_DP", "cpus": [0, 1]})
    assert lost["status"] == "unavailable" and "truncated" in lost["reason"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, ["mpirun", "-np", "2"]),
        ({"SLURM_JOB_ID": "7"}, ["srun", "--mpi=pmix", "-n", "2", "-c", "4"]),
    ],
    ids=["local", "slurm"],
)
def test_mpi_launchers(tmp_path, env, expected):
    mpi = case(binary="mcpi-c-mpi", model="mpi", ranks=2, pin="none")
    cmd = build_command(context(tmp_path, False), mpi, 0, env=env)
    assert cmd.argv[: len(expected)] == expected
    assert cmd.argv[len(expected)].endswith("/mcpi-c-mpi")


def test_mpirun_oversubscribes_beyond_the_cpus(tmp_path):
    mpi = case(binary="mcpi-c-mpi", model="mpi", ranks=4, threads=8, pin="none")
    assert build_command(context(tmp_path, False), mpi, 0, env={}).argv[:4] == [
        "mpirun",
        "-np",
        "4",
        "--oversubscribe",
    ]


EXPERIMENT = """
description = "counters and Slurm ids"
repetitions = 2
warmup = 1
[[sweep]]
binary = ["mcpi-c-serial"]
counter_group = ["CLOCK"]
params = { samples = [1000] }
"""


def test_real_run_records_slurm_ids_and_why_counters_are_off(tmp_path, bin_dir):
    experiment = tmp_path / "e.toml"
    experiment.write_text(EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    slurm = {
        "SLURM_JOB_ID": "101",
        "SLURM_ARRAY_JOB_ID": "100",
        "SLURM_ARRAY_TASK_ID": "0",
        "SLURM_JOB_PARTITION": "core",
        "SLURMD_NODENAME": "n-core",
    }
    results = run_case(campaign, 0, rep=1, env=slurm)
    assert [r["outcome"] for r in results] == ["ok"]
    record = case_record(campaign, load_cases(campaign)[0]["case_id"], 1)
    assert record["slurm"] == {
        "job_id": "101",
        "array_job_id": "100",
        "array_task_id": "0",
        "partition": "core",
        "node": "n-core",
    }
    assert record["rep"] == 1 and record["status"] == "ok" and len(record["warmup_wall_s"]) == 1
    host = json.loads(next((campaign / "hosts").glob("*.json")).read_text())
    if host["counters"]["available"]:
        pytest.skip("this host has working counters; the unavailable path is not reachable here")
    assert record["counters"]["status"] == "unavailable" and record["counters"]["group"] == "CLOCK"
    assert (
        record["counters"]["reason"] == host["counters"]["reason"]
        and "likwid-perfctr" in record["counters"]["reason"]
    )
    assert run_case(campaign, 0, rep=1) == [{"outcome": "done", "reps": [1], "path": results[0]["path"]}]


def test_callers_omp_num_threads_does_not_leak_into_the_case(tmp_path):
    cmd = build_command(context(tmp_path, False), case(), 0, env={"OMP_NUM_THREADS": "1", "KEEP": "x"})
    assert cmd.env["OMP_NUM_THREADS"] == "4" and cmd.env["KEEP"] == "x"
    explicit = build_command(context(tmp_path, False), case(env={"OMP_NUM_THREADS": "3"}), 0, env={})
    assert explicit.env["OMP_NUM_THREADS"] == "3"


MPI_EXPERIMENT = """
description = "mpi through mpirun"
repetitions = 1
warmup = 0
[[sweep]]
binary = ["mcpi-c-mpi"]
ranks = [2]
threads = [1]
params = { samples = [100000] }
"""


@pytest.mark.mpi
def test_mpi_case_runs_through_mpirun(tmp_path, bin_dir):
    experiment = tmp_path / "mpi.toml"
    experiment.write_text(MPI_EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    [result] = run_case(campaign, 0, env={k: v for k, v in os.environ.items() if not k.startswith("SLURM_")})
    assert result["outcome"] == "ok", result
    record = result["record"]
    oversubscribe = ["--oversubscribe"] if len(os.sched_getaffinity(0)) < 2 else []
    assert record["command"][: 3 + len(oversubscribe)] == ["mpirun", "-np", "2", *oversubscribe]
    assert record["ranks"] == 2 and len(record["placement"]) == 2 and len(record["rank_wall_s"]) == 2


def test_pthreads_are_pinned_like_openmp_without_a_skip_mask(tmp_path):
    # Both models keep one pool of threads-1 helpers per process: worker i -> list entry i mod n, warm-ups
    # or not, so likwid-pin gets the same plain list for both (no -s).
    pthreads = case(model="pthreads", binary="mcpi-c-pthreads", pin_tool="likwid-pin")
    cmd = build_command(context(tmp_path, False), pthreads, 0, env={})
    omp = build_command(context(tmp_path, False), case(pin_tool="likwid-pin"), 0, env={})
    assert cmd.argv[:4] == omp.argv[:4] == ["likwid-pin", "-q", "-c", "0,4,1,5"]
    assert cmd.argv[4].endswith("/mcpi-c-pthreads") and "-s" not in cmd.argv
    counted = build_command(context(tmp_path, True), pthreads | {"counter_group": "CLOCK"}, 0, env={})
    assert counted.argv[:3] == ["likwid-perfctr", "-C", "0,4,1,5"] and "-s" not in counted.argv


PTHREADS_EXPERIMENT = """
description = "pinned pthreads with warm-ups"
repetitions = 1
warmup = 3
[[sweep]]
binary = ["mandelbrot-c-pthreads"]
threads = [2, 3, 4]
pin = ["compact"]
params = { width = [32], height = [32], max_iter = [50] }
"""


@pytest.mark.slow
def test_pinned_pthreads_placement_holds_after_warmups(tmp_path, bin_dir):
    experiment = tmp_path / "pt.toml"
    experiment.write_text(PTHREADS_EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    # On this 2-CPU list, a kernel creating its helpers anew per repetition (unmasked) would shift the
    # measured repetition by 3 x (threads - 1) entries: odd for 2 and 4 threads, so those fail unless the
    # helpers are created once and reused.
    for index in (0, 1, 2):
        [result] = run_case(campaign, index)
        assert result["outcome"] == "ok", result
        record = result["record"]
        assert "-s" not in record["command"] and record["pin"]["cpus"], record["command"]
        assert record["pin"]["violations"] == [], record["placement"]
