"""A Slurm submission by a non-root user (nobody, from its own clone: the `user_clone` fixture) to the
test cluster: the array tasks and the analysis job run as that user and every file they write belongs
to it."""

import json

import pytest

from tests.install.cluster_user import UID, as_user, owners

from .conftest import jobcomp, submissions, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def test_records_come_back_owned_by_the_submitting_user(slurm_cluster, user_clone):
    base, clone, _ = user_clone
    script = (
        "mkdir -p ../shared && ./scalebench --results-dir ../shared submit tests/slurm/tiny.toml "
        "--node-types tc-core --name by-user --throttle 2"
    )
    proc = as_user(script, base, clone, timeout=300, env={"SLURM_CONF": str(slurm_cluster.conf)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    campaign = base / "shared" / "by-user"
    analysis = [s for s in submissions(campaign) if s["kind"] == "analysis"][-1]
    finished = wait_for(
        lambda: next((j for j in jobcomp(slurm_cluster) if j.get("JobId") == analysis["job_id"]), None),
        240,
        f"analysis job {analysis['job_id']} of the user's campaign",
    )
    assert finished.get("JobState") == "COMPLETED", finished
    assert f"({UID})" in finished.get("UserId", ""), finished
    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    for case in cases:
        # counted as plain lines: the project's readers, run as root here, refuse another user's campaign
        rows = (campaign / "raw" / case["case_id"] / "reps.csv").read_text().splitlines()[1:]
        assert len(rows) == case["reps"], case["case_id"]
    assert (campaign / "analysis" / "report.md").is_file()
    assert owners(campaign) == {UID}
