"""The SMT experiment family, scaled down, on the test cluster's emulated SMT node type: every case
runs through Slurm, the smt-siblings placement holds, and the report carries the SMT section with the
caveat that these siblings are not real."""

import pandas as pd

from tests.records import campaign_records

from ..micro.scaled import scaled_experiment
from .conftest import jobcomp, scalebench, submissions, wait_for


def test_smt_family_runs_on_tc_smt(slurm_cluster, tmp_path):
    exp = scaled_experiment("seed-004-smt.toml", tmp_path)
    proc = scalebench("submit", exp, "--name", "smt", "--results-dir", tmp_path, "--throttle", "2")
    assert proc.returncode == 0, proc.stderr
    campaign = tmp_path / "smt"
    analysis = [s for s in submissions(campaign) if s["kind"] == "analysis"][-1]
    wait_for(
        lambda: next((j for j in jobcomp(slurm_cluster) if j.get("JobId") == analysis["job_id"]), None),
        240,
        "the SMT campaign's analysis job",
    )
    cases = (campaign / "cases.jsonl").read_text().splitlines()
    records = campaign_records(campaign)
    assert len(records) == len(cases)
    assert {r["node_type"] for r in records} == {"tc-smt", "tc-core"}
    for r in records:
        assert r["status"] == "ok", r.get("reason")
        assert not r["pin"].get("violations")
        if r["params"]["cpus"]:  # P3: the kernel pins itself
            assert [pair[0] for pair in r["placement"]] == [int(c) for c in r["params"]["cpus"].split(",")]
        else:
            assert r["pin"]["strategy"] == "compact"
            assert [pair[0] for pair in r["placement"]] == r["pin"]["cpus"][: r["threads"]]
    micro = pd.read_csv(campaign / "analysis" / "micro.csv")
    assert set(micro["kernel"]) == {"smt"}
    assert set(micro["node_type"]) == {"tc-smt", "tc-core"}
    ref = pd.read_csv(campaign / "analysis" / "micro_reference.csv")
    m4 = ref[ref["what"].str.startswith("M4") & (ref["node_type"] == "tc-smt")].iloc[0]
    assert m4["ours"] > 0  # 2 t(alone) / t(pair), from the 1- and 2-worker mcpi cases
    siblings = pd.read_csv(campaign / "analysis" / "micro_siblings.csv")
    assert list(siblings["pairs_timed"]) == ["0,1"] and list(siblings["siblings_by_likwid"]) == ["none"]
    report = (campaign / "analysis" / "report.md").read_text()
    assert "not real" in report or "are not SMT gains" in report
