"""scalebench as a user on a cluster login node (tests/install/cluster_user.py): not root, no dpkg or
apt, no likwid, stress-ng or chromium. (a) a fresh clone is set up (`make setup`), built and runs and
analyses a small campaign; (b) `pip install` of that clone into a fresh venv runs a campaign from another
directory. The Slurm submission by the same user is tests/slurm/test_cluster_user_submit.py."""

import json

import pytest

from .cluster_user import as_user, can_be_the_user, owners

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(can_be_the_user() is not None, reason=str(can_be_the_user())),
]

SMALL = """
description = "as a cluster user"
repetitions = 2
warmup = 0
[[sweep]]
binary = ["mcpi-c-omp", "mcpi-f-omp"]
threads = [1, 2]
pin = ["compact"]
params = { samples = [200000] }
"""


@pytest.fixture(scope="module")
def small(user_clone):
    base, _, _ = user_clone
    (base / "small.toml").write_text(SMALL)
    return base / "small.toml"


def test_setup_names_the_missing_optional_tools_and_goes_on(user_clone):
    _, clone, stderr = user_clone
    optional = [line for line in stderr.splitlines() if line.startswith("setup: optional: ")]
    for tool in ("likwid", "stress-ng"):
        assert sum(f"no {tool}" in line for line in optional) == 1, stderr
    assert not any(line.startswith("setup: missing") for line in stderr.splitlines()), stderr
    assert (clone / ".venv" / "bin" / "python").exists()
    assert (clone / "build" / "bin" / "mcpi-f-omp").is_file()


def test_a_fresh_clone_runs_and_analyses_a_small_campaign(user_clone, small):
    base, clone, _ = user_clone
    proc = as_user(
        "./scalebench run ../small.toml --no-progress && ./scalebench analyze latest",
        base,
        clone,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    campaign = (clone / "results" / "latest").resolve()
    assert (campaign / "analysis" / "report.html").is_file()
    manifest = json.loads((campaign / "manifest.json").read_text())
    assert manifest["topology"]["source"] == "sysfs"  # likwid-topology hidden
    assert owners(clone / "results") == {65534}


def test_pip_install_into_a_fresh_venv_runs_from_another_directory(user_clone, small):
    base, clone, _ = user_clone
    script = (
        "python3 -m venv ../venv && ../venv/bin/pip install -q ../clone && mkdir -p ../elsewhere && "
        "cd ../elsewhere && ../venv/bin/scalebench --version && ../venv/bin/scalebench build && "
        "../venv/bin/scalebench run ../small.toml --no-progress && ../venv/bin/scalebench analyze latest"
    )
    proc = as_user(script, base, clone, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.startswith("scalebench 0.") and f"source {clone}" in proc.stdout.splitlines()[0]
    campaign = (base / "elsewhere" / "results" / "latest").resolve()
    assert (campaign / "analysis" / "report.md").is_file()
    assert f"kernels in {clone}/build/bin" in proc.stdout  # `scalebench build`: the clone's kernels
    assert owners(base / "elsewhere") == {65534}
