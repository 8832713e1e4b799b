"""A user's program measured as a campaign: its argument vector reaches it byte for byte (never a
shell), its threads are placed and checked, and a program that fails, hangs or prints no figure fails
its case with one line and keeps its output while the campaign goes on."""

import json

import pytest

from tests.jobs.conftest import run_cli
from tests.programs.conftest import analyze, one_program, records, run_campaign, write_experiment

HOSTILE = [
    "$(touch pwned)",
    "`id`",
    "a b",
    "'q'",
    '"d"',
    ";",
    "&&",
    "|",
    ">x",
    "*",
    "~",
    "-",
    "\\",
    "é",
    "x\ny",
]


def experiment(prog, params: str, extra: str = "", command_tail: str = "", sweep: str = "") -> str:
    return f"""
description = "a program"
node_types = ["workstation"]
repetitions = 2
warmup = 0

[programs.dump]
command = ["{prog}", "OMP_NUM_THREADS", "{{threads}}", {command_tail}"{{arg}}"]
runtime = "threads"
workers_env = "OMP_NUM_THREADS"
figure = {{ regex = 'elapsed: ([0-9.]+) s', unit = "s" }}
{extra}

[[sweep]]
program = "dump"
threads = [1, 2]
pin = ["cores"]
params = {{ arg = {params} }}
{sweep}
"""


def test_the_argument_vector_reaches_the_program_verbatim_and_its_threads_are_placed(
    tmp_path, argv_dumper, lock_env
):
    exp = write_experiment(
        tmp_path / "exp.toml", experiment(argv_dumper, json.dumps(HOSTILE, ensure_ascii=False))
    )
    campaign = run_campaign(tmp_path, exp, lock_env)
    found = records(campaign)
    assert len(found) == 2 * 2 * len(HOSTILE)
    for record in found:
        assert record["wall_s"] == pytest.approx(0.125) and record["process_wall_s"] > 0
        assert record["lang"] == "program" and record["kernel"] == "dump" and record["status"] == "ok"
        assert record["result"]["argv"][1:] == [
            "OMP_NUM_THREADS",
            str(record["threads"]),
            record["params"]["arg"],
        ]
        assert record["probe"]["min_s"]["int_mul"] > 0  # its per-CPU times in probes.jsonl beside it
        # the cache-line round trip between the case's CPUs, timed by the probe's own two threads
        xfer = record["probe"]["min_s"]["xfer"]
        assert (xfer > 0) if record["threads"] == 2 else (xfer is None), record["probe"]
        assert record["pin"]["violations"] == [] and record["result"]["place"] == "mask"
    seen = [json.loads(p.read_text()) for p in campaign.glob("raw/*/seen-*.json")]
    assert len(seen) == len(found)
    assert sorted(s["argv"][2] for s in seen) == sorted(HOSTILE * 4)  # each value, byte for byte
    for s in seen:
        threads = int(s["argv"][1])
        assert s["env"] == {"OMP_NUM_THREADS": str(threads)}
        assert s["affinity"] == list(range(threads))  # confined to the planned CPUs (pin cores)
    assert not any(tmp_path.rglob("pwned")) and not (campaign.parent / "pwned").exists()


FAILING = """#!/bin/sh
case "$1" in
  fail) echo "solver: matrix is singular" >&2; exit 3 ;;
  hang) sleep 600 ;;
  nofigure) echo "no figure here" ;;
  *) echo "elapsed: 0.01 s" ;;
esac
"""


def test_failing_hanging_and_figureless_runs_fail_their_case_with_one_line_and_keep_the_output(
    tmp_path, lock_env
):
    prog = tmp_path / "solver.sh"
    prog.write_text(FAILING)
    prog.chmod(0o755)
    text = f"""
description = "programs that fail"
node_types = ["workstation"]
repetitions = 1
warmup = 0
timeout_s = 5

[programs.solver]
command = ["{prog}", "{{mode}}"]
runtime = "serial"
figure = {{ regex = 'elapsed: ([0-9.]+) s', unit = "s" }}

[[sweep]]
program = "solver"
params = {{ mode = ["fail", "hang", "nofigure", "ok"] }}
"""
    exp = write_experiment(tmp_path / "exp.toml", text)
    results = tmp_path / "results"
    done = run_cli("run", exp, "--results-dir", results, "--no-progress", env=lock_env, timeout=300)
    assert done.returncode != 0  # failed cases: documented in docs/exit-codes.md
    (campaign,) = [p for p in results.iterdir() if not p.is_symlink()]
    ok = records(campaign)
    assert [r["params"]["mode"] for r in ok] == ["ok"]
    reasons = {}
    for failed in campaign.glob("raw/*/rep-*.failed-*.json"):
        attempt = json.loads(failed.read_text())
        reasons[json.loads(_spec(attempt))["params"]["mode"]] = attempt["reason"]
    assert set(reasons) == {"fail", "hang", "nofigure"}
    assert "exit status 3" in reasons["fail"] and "program-output-" in reasons["fail"]
    assert "still running after" in reasons["hang"] and "timeout_s (5 s" in reasons["hang"]
    assert "matches nothing" in reasons["nofigure"] and "elapsed" in reasons["nofigure"]
    assert all("\n" not in why for why in reasons.values())
    kept = list(campaign.glob("raw/*/program-output-*.txt"))
    assert any("matrix is singular" in p.read_text() for p in kept)
    assert any("no figure here" in p.read_text() for p in kept)


def _spec(attempt: dict) -> str:
    argv = attempt["command"]
    return argv[argv.index("--spec") + 1]


def test_a_result_that_differs_between_variants_is_a_checksum_finding(tmp_path, argv_dumper, lock_env):
    # the dumper prints its argv, which holds the thread count: the declared result differs by variant
    exp = write_experiment(
        tmp_path / "exp.toml", experiment(argv_dumper, '["x"]', extra='result = { json = "argv[1]" }')
    )
    campaign = run_campaign(tmp_path, exp, lock_env)
    done = analyze(campaign, lock_env)
    assert done.returncode == 1, done.stderr  # --fail-on checksum is the default
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("fail-on checksum: 1 cases") and "dump-program-threads x2 (case " in line, line
    assert ": mismatch)" in line
    same = write_experiment(
        tmp_path / "same.toml", experiment(argv_dumper, '["x"]', extra='result = { json = "argv[2]" }')
    )
    campaign = run_campaign(tmp_path / "s", same, lock_env)
    assert analyze(campaign, lock_env).returncode == 0


def test_openmp_threads_are_bound_one_per_planned_cpu_and_checked_per_thread(tmp_path, imbalanced, lock_env):
    program = f"""command = ["{imbalanced}", "40", "20000"]
runtime = "openmp"
figure = {{ regex = 'region_s ([0-9.]+)', unit = "s" }}"""
    text = one_program("imb", program)
    campaign = run_campaign(tmp_path, write_experiment(tmp_path / "exp.toml", text), lock_env)
    for record in [r for r in records(campaign) if r["threads"] == 2]:
        assert record["result"]["place"] == "openmp"
        assert record["placement_seen"] == [[0], [1]] and record["pin"]["violations"] == []
        bound = [t["bound_to"] for t in record["result"]["tasks"]]
        assert bound == [0, 1]  # the runtime bound each thread to its place (OMP_PLACES from the pin list)
        assert 0 < record["worker_useful_mean_s"] <= record["worker_useful_max_s"] <= record["process_wall_s"]
        assert record["pop_method"] == "task-cpu"


def test_weak_scaling_reports_the_scaled_speedup_and_says_so(tmp_path, argv_dumper, lock_env):
    # the dumper's figure is always 0.125 s: a perfect weak-scaling series (T(p) = T(1) as n grows with p)
    text = experiment(argv_dumper, "[1000]", sweep='weak_scaling = ["arg"]')
    campaign = run_campaign(tmp_path, write_experiment(tmp_path / "exp.toml", text), lock_env)
    assert sorted(r["result"]["argv"][3] for r in records(campaign)) == ["1000", "1000", "2000", "2000"]
    assert analyze(campaign, lock_env).returncode == 0
    import csv

    with open(campaign / "analysis" / "speedup.csv", newline="") as fh:
        rows = {r["workers"]: r for r in csv.DictReader(fh)}
    assert rows["2"]["scaling"] == "weak" and float(rows["2"]["speedup"]) == pytest.approx(2.0)
    assert float(rows["2"]["efficiency"]) == pytest.approx(1.0)
    report = (campaign / "analysis" / "report.md").read_text()
    assert "Weak scaling (`dump-program-threads`)" in report
