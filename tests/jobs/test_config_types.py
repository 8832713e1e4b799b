"""The declared configuration tables (jobs/config_types.py): a problem anywhere in a file is one line
naming the key path, the value and the bound, pattern or choice it breaks; an unknown key names the
closest allowed one; and the documentation lists every key the tables declare."""

import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.competing_load import LoadProfile
from jobs.config import load_experiment, load_node_types
from jobs.config_decode import Checker
from jobs.config_types import ExperimentFile, NodeTable, SweepTable
from jobs.programs.config import Figure, Program
from sbcore.errors import UsageError
from tests.jobs.conftest import run_cli

HEAD = 'description = "x"\n'
SWEEP = '[[sweep]]\nbinary = ["mcpi-c-omp"]\n'
NODE = '[node_types.n]\ndescription = "n"\ncounters = false\ndetect = true\n'


def _error(tmp_path, text: str) -> str:
    path = tmp_path / "e.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as err:
        load_experiment(path, load_node_types())
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    return message.removeprefix(f"{path}: ")


DEEP = [
    (SWEEP + SWEEP + 'threads = [1, "2*cores", 1.5]\n', "sweep[1].threads[2] = 1.5: must be an integer"),
    (SWEEP + SWEEP + 'ranks = [2, "cors"]\n', "sweep[1].ranks[1] = 'cors': not a count or expression"),
    (SWEEP + "params = { samples = [100, [1]] }\n", "sweep[0].params.samples[1] = [1]: option values must"),
    (SWEEP + "env.A = 'a'\nenv.B = 2\n", "sweep[0].env.B = 2: environment values must be strings"),
    (
        SWEEP + 'pin = ["compact", "spread"]\n',
        "sweep[0].pin[1] = 'spread': unknown pin strategy (known: none,",
    ),
    (
        "[load.hog]\ncpus = [0, -1]\n" + SWEEP,
        "load.hog.cpus[1] = -1: must be >= 0",
    ),
    (
        '[programs.p]\ncommand = ["/bin/true"]\nruntime = "serial"\nfigure = { regex = "(x)", unit = 3 }\n'
        + SWEEP,
        "programs.p.figure.unit = 3: the figure's unit",
    ),
    (
        SWEEP + '[[exclude]]\nbinary = "x"\n[[exclude]]\ncpus = [2, "al"]\n',
        "exclude[1].cpus[1] = 'al': not a count",
    ),
]


@pytest.mark.parametrize(("text", "expected"), DEEP, ids=[d[1][:30] for d in DEEP])
def test_a_wrong_value_deep_in_the_file_names_its_path(tmp_path, text, expected):
    assert _error(tmp_path, HEAD + text).startswith(expected)


UNKNOWN = [
    ("repetiions = 3\n" + SWEEP, "repetiions = 3: unknown key (did you mean repetitions? allowed: "),
    (SWEEP + "thread = [2]\n", "sweep[0].thread = [2]: unknown key (did you mean threads? allowed: "),
    ("[load.hog]\nintensty = 50\n" + SWEEP, "load.hog.intensty = 50: unknown key (did you mean intensity?"),
    (SWEEP + "[[exclude]]\nthread = 2\n", "exclude[0].thread = 2: unknown key (did you mean threads?"),
    (SWEEP + "zzzz = 1\n", "sweep[0].zzzz = 1: unknown key (allowed: "),
]


def test_an_unknown_node_key_names_the_closest_allowed_one(tmp_path):
    path = tmp_path / "nodes.toml"
    path.write_text(NODE + 'partiton = "p"\n')
    with pytest.raises(
        UsageError, match=r"node_types\.n\.partiton = 'p': unknown key \(did you mean partition\?"
    ):
        load_node_types(path)


BOUNDS = [
    ("repetitions = 2000000\n" + SWEEP, "repetitions = 2000000: must be <= 1000000"),
    (SWEEP + "warmup = -1\n", "sweep[0].warmup = -1: must be >= 0"),
    (SWEEP + "budget_s = 1e9\n", "sweep[0].budget_s = 1000000000.0: must be <= 604800"),
    ("[load.hog]\nnice = 30\n" + SWEEP, "load.hog.nice = 30: must be an integer -20..19"),
    ("[load.hog]\nintensity = 0\n" + SWEEP, "load.hog.intensity = 0: a percentage: 1..100"),
    ("target_ci = 1\n" + SWEEP, "target_ci = 1: must be a relative half-width in [0, 1)"),
    ('interleave = "pairs"\n' + SWEEP, "interleave = 'pairs': must be one of none, family"),
]


@pytest.mark.parametrize(("text", "expected"), UNKNOWN + BOUNDS, ids=[c[1][:30] for c in UNKNOWN + BOUNDS])
def test_an_unknown_key_names_the_closest_allowed_one_and_a_broken_bound_is_named(tmp_path, text, expected):
    assert _error(tmp_path, HEAD + text).startswith(expected)


def test_a_plain_value_is_an_axis_of_one_and_its_errors_name_index_zero(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(HEAD + '[[sweep]]\nbinary = "mcpi-c-omp"\nthreads = 2\nparams.samples = 1000\n')
    [sweep] = load_experiment(path, load_node_types()).sweeps
    assert (sweep.axes["binary"], sweep.axes["threads"], sweep.params) == (
        ["mcpi-c-omp"],
        [2],
        {"samples": [1000]},
    )
    assert _error(tmp_path, HEAD + SWEEP + "threads = 0\n").startswith(
        "sweep[0].threads[0] = 0: must be >= 1"
    )


def test_a_key_that_is_not_a_name_is_quoted_on_the_one_line(tmp_path):
    message = _error(tmp_path, HEAD + 'env."A\\nB" = "x"\n' + SWEEP)
    assert message.startswith("env.\"A\\nB\" = 'x': not a valid environment variable name"), message


def test_numbers_keep_the_type_they_were_written_with(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(HEAD + "timeout_s = 20\n" + SWEEP + "timeout_s = 2.5\n[load.h]\nsettle_s = 0\n")
    exp = load_experiment(path, load_node_types())
    assert [type(v) for v in (exp.run["timeout_s"], exp.sweeps[0].run["timeout_s"])] == [int, float]
    assert exp.loads["h"]["settle_s"] == 0 and isinstance(exp.loads["h"]["settle_s"], int)


def test_decoding_a_bad_file_leaves_the_interpreter_whole(tmp_path):
    # msgspec 0.22 aborts the interpreter for a union of a list and a string with a long pattern; axes
    # are therefore declared as lists only (jobs/config_fields.py axis). A run in a process of its own.
    code = (
        "from jobs.config_decode import Checker\nfrom jobs.config_types import ExperimentFile\n"
        "data = {'description': 'x', 'sweep': [{'binary': 'b', 'threads': ['cores', 0], 'cpus': 'all'}]}\n"
        "try:\n    Checker('e.toml').decode(data, ExperimentFile)\nexcept Exception as err:\n    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_root())
    assert done.returncode == 0, done.stderr
    assert done.stdout == "e.toml: sweep[0].threads[1] = 0: must be >= 1\n"


def _root():
    from sbcore.install import source_root

    return source_root()


def _keys_in_tables(text: str) -> set[str]:
    """Every `key` (or `[key]`, `[key.<name>]`, `[[key]]`) in the first column of a Markdown table."""
    found = set()
    for line in text.splitlines():
        if line.startswith("| "):
            first = line.split("|")[1]
            found |= {m for m in re.findall(r"`\[*([a-z_]+)(?:\.<name>)?\]*`", first)}
    return found


def _section(text: str, start: str) -> str:
    after = text[text.index(start) :]
    end = after.find("\n## ", 1)
    return after if end < 0 else after[:end]


def _fields(struct) -> set[str]:
    return {f.encode_name for f in msgspec.structs.fields(struct)}


def test_every_declared_key_is_in_the_documentation(repo_root):
    readme = (repo_root / "config" / "README.md").read_text()
    nodes = _keys_in_tables(_section(readme, "## `config/nodes.toml`"))
    assert _fields(NodeTable) <= nodes, sorted(_fields(NodeTable) - nodes)
    experiments = _keys_in_tables(_section(readme, "## `config/experiments/"))
    declared = _fields(ExperimentFile) | _fields(SweepTable)
    assert declared <= experiments, sorted(declared - experiments)
    load = readme[readme.index("**Competing load.**") :].split("\n\n")[0]
    assert all(f"`{key}`" in load for key in _fields(LoadProfile)), load
    programs = (repo_root / "docs" / "own-programs.md").read_text()
    assert _fields(Program) <= _keys_in_tables(programs), sorted(_fields(Program) - _keys_in_tables(programs))
    figure = programs[programs.index("| `figure` |") :].split("\n")[0]
    assert all(re.search(rf"\b{key} =", figure) for key in _fields(Figure)), figure


def test_the_documentation_check_can_fail():
    assert _keys_in_tables("| `a`, `[b]` | x |\n| `[[c]]` | `d` |\n| `[e.<name>]` | y |\nnot `f`") == {
        "a",
        "b",
        "c",
        "e",
    }


values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**7) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
sweep_keys = st.sampled_from(sorted(SweepTable.__struct_fields__) + ["thread", "x"])
top_keys = st.sampled_from(sorted(ExperimentFile.__struct_fields__) + ["descripton"])


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    top=st.dictionaries(top_keys, values, max_size=3), sweep=st.dictionaries(sweep_keys, values, max_size=3)
)
def test_any_value_at_any_key_is_decoded_or_one_line(top, sweep):
    data = {"description": "x", "sweep": [{"binary": ["mcpi-c-omp"]} | sweep]} | top
    data = _without_none(data)  # TOML has no null
    check = Checker(Path("e.toml"))
    try:
        check.decode(data, ExperimentFile)
    except UsageError as err:
        assert str(err).startswith("e.toml: ") and "\n" not in str(err), str(err)


def _without_none(value):
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value if v is not None]
    return value


def test_plan_exits_2_with_the_one_line(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(HEAD + SWEEP + SWEEP + 'threads = [1, "2*cores", 1.5]\n')
    done = run_cli("plan", path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and lines == [
        f"scalebench plan: error: {path}: sweep[1].threads[2] = 1.5: must be an integer"
    ], done.stderr
