"""Names and option values that could break a generated sbatch script are refused with one line, or
quoted so that every #SBATCH line stays intact and the script runs nothing but its one command.

Property-based (hypothesis): 10,000 generated names and values in-process, a few hundred more through
`bash -n` and a run with a stand-in for the scalebench entry script.
"""

import os
import shlex
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.config import NodeType, load_node_types
from jobs.config_decode import Checker
from jobs.site_options import check_site
from jobs.slurm import scripts
from jobs.slurm.scripts import ArrayJob, render_analysis_script, render_array_script
from sbcore.errors import UsageError
from sbcore.names import check_name

HOSTILE = [
    "\n", "\r", "\x00", "\t", "'", '"', "$(touch pwned)", "`touch pwned`", ";", "&&", "|", "#", " ", "\\",
    "$HOME", "${x}", "..", "/", "../../escape", "é", "名前", "\u2028", "\x7f", "*", "?", "[a]", "~", "-",
    "%A", "=", "--comment=x", "x" * 300,
]  # fmt: skip
fragments = st.sampled_from(HOSTILE) | st.text(min_size=1, max_size=8)
hostile_text = st.lists(fragments, min_size=1, max_size=6).map("".join)
names = hostile_text | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,20}", fullmatch=True)
results_dirs = st.sampled_from(
    ["/tmp/r", "/tmp/with space/r", "/tmp/é/r", "/tmp/q'uote/r"]
) | hostile_text.map(lambda t: "/tmp/" + t.replace("\x00", ""))
SITE_KEYS = ["account", "qos", "time_limit", "mem", "reservation"]
TEMPLATE_SBATCH = ["job-name", "nodes", "ntasks", "exclusive", "output", "array"]


def _one_line(err: UsageError) -> None:
    assert "\n" not in str(err) and "\r" not in str(err), repr(str(err))


def _node(name: str, site=None, partition="core") -> NodeType:
    return NodeType(
        name=name, description="d", counters=False, partition=partition, **({"site": site} if site else {})
    )


def _render(campaign_dir: Path, node: NodeType, time_limit=None) -> str:
    job = ArrayJob(node, (0, 1), 2, campaign_dir / "jobs" / "array.sbatch", time_limit=time_limit)
    return render_array_script(campaign_dir, job, "0-1", "submit", "2026-01-01T00:00:00Z")


def _assert_intact(text: str, extra: list[str]) -> None:
    """Only comments before `set -euo pipefail`, the expected #SBATCH options in order, one exec line."""
    lines = text.split("\n")
    assert lines[0] == "#!/bin/bash"
    body = [line for line in lines[1:] if line]
    code = [line for line in body if not line.startswith("#")]
    assert code[0] == "set -euo pipefail" and len(code) == 2 and code[1].startswith("exec "), code
    sbatch = [line[len("#SBATCH ") :] for line in body if line.startswith("#SBATCH ")]
    options = [line.split("=", 1)[0].lstrip("-") for line in sbatch]
    assert options == ["job-name", "partition", *extra, "nodes", "ntasks", "exclusive", "output", "array"]
    for line in sbatch:  # each value is one shell word (sbatch reads it as bash would)
        assert len(shlex.split(line)) == 1, line


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=names, node_name=names, results=results_dirs)
def test_names_are_refused_or_stay_in_their_lines(name, node_name, results):
    try:
        check_name("--name", name)
        check_name("node type", node_name)
        text = _render(Path(results) / name, _node(node_name))
    except UsageError as err:
        _one_line(err)
        return
    _assert_intact(text, [])
    exec_line = [line for line in text.split("\n") if line.startswith("exec ")][0]
    words = shlex.split(exec_line)
    assert words[2:] == ["run-case", str(Path(results) / name), "${SLURM_ARRAY_TASK_ID}"], exec_line


option_values = hostile_text | st.sampled_from(["proj", "normal", "4G", "10", "1-00:00:00", "64G"])
sbatch_options = (
    st.builds(lambda n, v: f"--{n}={v}", st.sampled_from(["comment", "gres", "nice"]), option_values)
    | hostile_text
)


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(SITE_KEYS), value=option_values, option=sbatch_options, partition=option_values)
def test_site_values_are_refused_or_stay_in_their_lines(key, value, option, partition):
    table = {key: value, "sbatch_options": [option]}
    try:
        site = check_site(Checker(Path("nodes.toml")), table, "node_types.x")
        text = _render(Path("/tmp/r/c"), _node("x", site, partition), site.time_limit)
    except UsageError as err:
        _one_line(err)
        return
    _assert_intact(text, [site_key_flag(key), option.split("=", 1)[0][2:]])


def site_key_flag(key: str) -> str:
    return "time" if key == "time_limit" else key


STUB = """#!/bin/bash
printf '%s\\0' "$@" > "$SB_ARGV_FILE"
"""


@pytest.fixture(scope="module")
def stub_entry():
    """A stand-in for ./scalebench that records its argument vector (NUL-separated) and does nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        stub = Path(tmp) / "scalebench-stub"
        stub.write_text(STUB)
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
        yield stub


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=names, value=option_values, results=results_dirs)
def test_scripts_pass_bash_n_and_run_only_their_command(stub_entry, name, value, results):
    try:
        check_name("--name", name)
        site = check_site(Checker(Path("nodes.toml")), {"sbatch_options": [f"--comment={value}"]}, "n")
        campaign = Path(results) / name
        saved, scripts.SCALEBENCH = scripts.SCALEBENCH, stub_entry
        try:
            texts = [_render(campaign, _node("x", site)), render_analysis_script(
                campaign, _node("x", site), campaign / "a.sbatch", "submit", "2026-01-01T00:00:00Z"
            )]  # fmt: skip
        finally:
            scripts.SCALEBENCH = saved
    except UsageError as err:
        _one_line(err)
        return
    with tempfile.TemporaryDirectory() as work:
        for text, expected in zip(
            texts, (["run-case", str(campaign), "3"], ["analyze", str(campaign)]), strict=True
        ):
            script = Path(work) / "job.sbatch"
            script.write_text(text)
            assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0, text
            argv_file = Path(work) / "argv"
            env = {"PATH": os.environ["PATH"], "SLURM_ARRAY_TASK_ID": "3", "SB_ARGV_FILE": str(argv_file)}
            proc = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True)
            assert proc.returncode == 0, proc.stderr
            assert argv_file.read_bytes().split(b"\0")[:-1] == [a.encode() for a in expected]
            argv_file.unlink()
            script.unlink()
            assert not os.listdir(work), os.listdir(work)  # the script created nothing else


# The cases the stress test found (S1-S3), each as a regression test.


@pytest.mark.parametrize("name", ["slinj\ntouch pwned-slurm-campname #", "x/../../escape", "..", "a\n"])
def test_s1_hostile_campaign_names_are_refused(name):
    with pytest.raises(UsageError, match="--name") as err:
        check_name("--name", name)
    _one_line(err.value)


@pytest.mark.parametrize("node", ["tc-inj\ntouch /tmp/pwned #", "x/../../../../escape"])
def test_s2_hostile_node_type_names_are_refused(tmp_path, node):
    nodes = tmp_path / "nodes.toml"
    quoted = node.replace("\n", "\\n")
    nodes.write_text(
        f'[node_types."{quoted}"]\ndescription = "d"\npartition = "p"\nsockets = 1\n'
        "cores_per_socket = 1\nthreads_per_core = 1\ncounters = false\n"
    )
    with pytest.raises(UsageError, match="node type name") as err:
        load_node_types(nodes)
    _one_line(err.value)
    assert str(nodes) in str(err.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [("account", "proj\n"), ("qos", "normal\n"), ("mem", "4G\n"), ("time_limit", "10\n"),
     ("sbatch_options", ["--comment=x\n"])],
)  # fmt: skip
def test_s3_trailing_newline_is_refused(key, value):
    with pytest.raises(UsageError, match=key) as err:
        check_site(Checker(Path("nodes.toml")), {key: value}, "node_types.x")
    _one_line(err.value)
