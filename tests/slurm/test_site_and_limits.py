"""Array splitting, limits, time limits, site options and node discovery: rules without a queue, then
the same readers against the live test cluster (no jobs submitted)."""

import random
import subprocess
import tomllib

import pytest

from jobs.config import load_node_types
from jobs.site_options import SiteOptions
from jobs.slurm.arrayspec import split_indices
from jobs.slurm.discover import node_configs, parse_nodes, render_blocks
from jobs.slurm.limits import limits_from_config, parse_config, parse_max_submit, read_limits
from jobs.slurm.rounds import take_batch
from jobs.slurm.site import site_lines
from jobs.slurm.timelimit import default_time_limit
from sbcore.errors import ScalebenchError, UsageError

from .conftest import HERE, scalebench


def test_2500_indices_split_below_1001_with_offsets():
    parts = split_indices(range(2500), 1001)
    assert [(offset, chunk[0], chunk[-1]) for offset, chunk in parts] == [
        (0, 0, 1000),
        (1001, 1001, 2001),
        (2002, 2002, 2499),
    ]


def test_split_keeps_every_task_id_below_the_limit_on_random_sets():
    rng = random.Random(11)
    for _ in range(300):
        size, tasks = rng.randint(1, 40), rng.choice([None, rng.randint(1, 40)])
        indices = sorted(rng.sample(range(300), rng.randint(1, 120)))
        parts = split_indices(indices, size, tasks)
        assert [i for _, chunk in parts for i in chunk] == indices
        for offset, chunk in parts:
            assert all(0 <= i - offset < size for i in chunk)
            assert len(chunk) <= (tasks or size)
        # Small campaigns keep task id = case index.
        if indices[-1] < size and (tasks is None or len(indices) <= tasks):
            assert parts == [(0, indices)]


def test_limits_from_scontrol_show_config():
    text = (
        "Configuration data as of 2026-11-23T10:00:00\nMaxArraySize            = 4001\n"
        "MaxJobCount             = 50000\nSchedulerParameters     = bf_interval=30,max_array_tasks=1000\n"
    )
    limits = limits_from_config(parse_config(text))
    assert (limits.max_array_size, limits.max_array_tasks, limits.max_job_count) == (4001, 1000, 50000)
    with pytest.raises(ScalebenchError, match="MaxArraySize = 0: job arrays are disabled"):
        limits_from_config({"MaxArraySize": "0"})


def test_max_submit_from_sacctmgr_output():
    assert parse_max_submit("\n500\n200|\n") == 200
    assert parse_max_submit("|\n\n") is None


def test_batch_leaves_room_for_the_analysis_job():
    assert take_batch([5, 1, 3], None) == ([1, 3, 5], [])
    assert take_batch(list(range(10)), 4) == ([0, 1, 2], list(range(3, 10)))
    assert take_batch(list(range(10)), 1) == ([], list(range(10)))
    assert take_batch([1, 2], 3) == ([1, 2], [])


def test_default_time_limit_is_the_largest_case_with_margin():
    cases = [{"reps": 3, "timeout_s": 300, "warmup": 1}, {"reps": 10, "timeout_s": 60}]
    # max(900, 600) s x 1.25 + 120 s = 1245 s -> 21 min
    assert default_time_limit(cases) == "00:21:00"
    assert default_time_limit([{"reps": 100, "timeout_s": 1000}]) == "1-10:46:00"  # 125,120 s -> 2,086 min


def _nodes_toml(tmp_path, extra: str):
    path = tmp_path / "nodes.toml"
    path.write_text(
        '[node_types.x]\ndescription = "x"\npartition = "p"\nsockets = 1\ncores_per_socket = 2\n'
        f"threads_per_core = 1\ncounters = false\n{extra}\n"
    )
    return path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('mem = "4X"', "node_types.x.mem = '4X': must be memory per node"),
        ('time_limit = "90 min"', "node_types.x.time_limit = '90 min': must be a Slurm time"),
        ('account = "a b"', "node_types.x.account = 'a b': must be a Slurm account name"),
        ("qos = 3", "node_types.x.qos = 3: must be a QOS name"),
        ('sbatch_options = "--requeue"', "node_types.x.sbatch_options = '--requeue': must be a list"),
        (
            'sbatch_options = ["--array=1-3"]',
            "node_types.x.sbatch_options[0] = '--array=1-3': --array is set",
        ),
        (
            'sbatch_options = ["--gres gpu:1"]',
            "sbatch_options[0] = '--gres gpu:1': must be one long sbatch option",
        ),
    ],
)
def test_bad_site_options_name_file_key_value(tmp_path, extra, message):
    path = _nodes_toml(tmp_path, extra)
    with pytest.raises(UsageError) as err:
        load_node_types(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_site_options_load_and_quote(tmp_path):
    path = _nodes_toml(
        tmp_path,
        'account = "proj-1"\nqos = "long"\ntime_limit = "2-00:00:00"\nmem = "0"\nreservation = "r1"\n'
        'sbatch_options = ["--comment=it\'s mine", "--requeue"]',
    )
    site = load_node_types(path)["x"].site
    assert site_lines(site, site.time_limit) == [
        "--account=proj-1",
        "--qos=long",
        "--reservation=r1",
        "--mem=0",
        "--time=2-00:00:00",
        "--comment='it'\"'\"'s mine'",
        "--requeue",
    ]
    command_line = SiteOptions(qos="short", sbatch_options=("--hold",))
    merged = site.merged(command_line)
    assert (merged.qos, merged.account, merged.sbatch_options[-1]) == ("short", "proj-1", "--hold")


def test_bad_site_option_on_the_command_line_is_one_line(tmp_path):
    proc = scalebench("submit", HERE / "tiny.toml", "--dry-run", "--results-dir", tmp_path, "--mem", "4X")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "argument --mem: '4X': must be memory as Slurm reads it: 0, 4000, 64G" in lines[0]
    proc = scalebench("resume", tmp_path, "--sbatch-option=--dependency=afterok:1")
    assert proc.returncode == 2 and "--dependency is set by scalebench" in proc.stderr


SCONTROL = (
    "NodeName=a01 Arch=x86_64 CoresPerSocket=32 CPUTot=128 AvailableFeatures=zen3,ib OS=Linux 6.1 #1 SMP "
    "RealMemory=515000 Sockets=2 ThreadsPerCore=2 Partitions=cpu\n"
    "NodeName=a02 Arch=x86_64 CoresPerSocket=32 CPUTot=128 AvailableFeatures=zen3,ib RealMemory=515000 "
    "Sockets=2 ThreadsPerCore=2\n"
    "NodeName=b01 CoresPerSocket=18 AvailableFeatures=(null) RealMemory=192000 Sockets=2 ThreadsPerCore=1\n"
)


def test_discovered_blocks_group_nodes_and_load_as_node_types(tmp_path):
    configs = node_configs(
        parse_nodes(SCONTROL), {"a01": ["cpu"], "a02": ["cpu"], "b01": ["cpu", "old"]}, None
    )
    assert [names for names in configs.values()] == [["a01", "a02"], ["b01"], ["b01"]]
    text = render_blocks(configs)
    tables = tomllib.loads(text)["node_types"]
    assert tables["cpu"]["constraint"] == "zen3&ib" and tables["cpu"]["cores_per_socket"] == 32
    assert "constraint" not in tables["cpu-2x18x1"] and tables["old"]["partition"] == "old"
    assert "RealMemory 515000 MB" in text
    path = tmp_path / "nodes.toml"
    path.write_text(text)
    assert sorted(load_node_types(path)) == ["cpu", "cpu-2x18x1", "old"]
    only = render_blocks(node_configs(parse_nodes(SCONTROL), {"b01": ["old"]}, "old"))
    assert list(tomllib.loads(only)["node_types"]) == ["old"]


def test_live_limits_and_nodes_from_the_test_cluster(slurm_cluster):
    limits = read_limits()
    # No accounting database here: sacctmgr refuses, which means no association limit.
    assert (limits.max_array_size, limits.max_job_count, limits.max_submit_jobs) == (1001, 10000, None)
    with pytest.raises(ScalebenchError, match="--max-array-size 2000: the controller allows only"):
        read_limits(2000)
    assert read_limits(5).max_array_size == 5
    proc = scalebench("nodes", "--from-slurm")
    assert proc.returncode == 0, proc.stderr
    tables = tomllib.loads(proc.stdout)["node_types"]
    shapes = {
        t["partition"]: (t["constraint"], t["cores_per_socket"], t["threads_per_core"])
        for t in tables.values()
    }
    assert shapes == {"core": ("nosmt", 2, 1), "smt": ("smt", 1, 2)}
    proc = scalebench("nodes", "--from-slurm", "--partition", "smt")
    assert list(tomllib.loads(proc.stdout)["node_types"]) == ["smt"]
    proc = scalebench("nodes", "--from-slurm", "--partition", "nope")
    assert proc.returncode == 3 and "no nodes in partition 'nope'" in proc.stderr


def test_bash_runs_the_offset_line():
    """The task line of a split array gives run-case task id + offset."""
    line = 'echo "$((SLURM_ARRAY_TASK_ID + 2002))"'
    out = subprocess.run(
        ["bash", "-c", line], env={"SLURM_ARRAY_TASK_ID": "497"}, capture_output=True, text=True
    )
    assert out.stdout.strip() == "2499"


def test_test_cluster_keeps_slurms_default_array_size_unless_told():
    from jobs.slurm.testcluster.cluster import Cluster, render_conf

    cluster = Cluster.from_env({"SB_SLURM_DIR": "/tmp/sb-x", "SB_SLURM_PORT_BASE": "17500"})
    assert "\nMaxArraySize=1001\n" in render_conf(cluster, "h")
    small = Cluster.from_env({"SB_SLURM_DIR": "/tmp/sb-x", "SB_SLURM_MAX_ARRAY_SIZE": "5"})
    assert "\nMaxArraySize=5\n" in render_conf(small, "h")
    with pytest.raises(UsageError, match="SB_SLURM_MAX_ARRAY_SIZE='0': must be an integer in 1..4000001"):
        Cluster.from_env({"SB_SLURM_MAX_ARRAY_SIZE": "0"})
