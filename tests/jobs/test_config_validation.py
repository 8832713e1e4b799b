"""Malformed experiments and node files: one error naming file, key and value each; nothing is written."""

import textwrap

import pytest

from jobs.campaign import create_campaign, plan_experiment
from jobs.config import load_node_types
from sbcore.errors import UsageError

OK_SWEEP = '[[sweep]]\nbinary = ["mcpi-c-omp"]\n'
HEAD = 'description = "x"\n'
SERIAL_SWEEP = '[[sweep]]\nbinary = ["mcpi-c-serial"]\n'
PTHREADS_SWEEP = '[[sweep]]\nbinary = ["mcpi-c-pthreads"]\n'
ON_TC_CORE = 'node_types = ["tc-core"]\n'

# (experiment text, fragment the error must contain after "<file>: ")
MALFORMED = [
    ('descripton = "x"\n' + OK_SWEEP, "descripton = 'x': unknown key"),
    (OK_SWEEP, "description: missing"),
    ("description = 3\n" + OK_SWEEP, "description = 3: must be a non-empty string"),
    (HEAD + "repetitions = 0\n" + OK_SWEEP, "repetitions = 0: must be >= 1"),
    (HEAD + 'repetitions = "3"\n' + OK_SWEEP, "repetitions = '3': must be an integer"),
    (HEAD + "warmup = -1\n" + OK_SWEEP, "warmup = -1: must be >= 0"),
    (HEAD + "timeout_s = 0\n" + OK_SWEEP, "timeout_s = 0: must be a finite number > 0"),
    (HEAD + "timeout_s = nan\n" + OK_SWEEP, "timeout_s = nan: must be a finite number > 0"),
    (HEAD + 'timeout_s = "long"\n' + OK_SWEEP, "timeout_s = 'long': must be a number"),
    (HEAD + "seed = -4\n" + OK_SWEEP, "seed = -4: must be >= 0"),
    (HEAD + "dump_image = 1\n" + OK_SWEEP, "dump_image = 1: must be true or false"),
    (HEAD + OK_SWEEP + "dump_image = true\n", "sweep[0].dump_image = true: mcpi-c-omp writes no image"),
    (
        HEAD + '[[sweep]]\nbinary = ["mandelbrot-c-omp"]\ndump_image = true\nparams.dump = ["x.pgm"]\n',
        "sweep[0].params.dump = 'x.pgm': give either params.dump or dump_image",
    ),
    (HEAD, "sweep: missing"),
    (HEAD + "sweep = [1]\n", "sweep[0] = 1: must be a table"),
    (HEAD + OK_SWEEP + "threds = [1]\n", "sweep[0].threds = [1]: unknown key"),
    (HEAD + "[[sweep]]\nthreads = [1]\n", "sweep[0].binary: missing"),
    (HEAD + "[[sweep]]\nbinary = []\n", "sweep[0].binary = []: empty axis"),
    (HEAD + OK_SWEEP + "threads = [0]\n", "sweep[0].threads[0] = 0: must be >= 1"),
    (HEAD + OK_SWEEP + "threads = [1.5]\n", "sweep[0].threads[0] = 1.5: must be an integer"),
    (HEAD + OK_SWEEP + 'threads = ["3*cors"]\n', "sweep[0].threads[0] = '3*cors': not a count or expression"),
    (HEAD + OK_SWEEP + "threads = []\n", "sweep[0].threads = []: empty axis"),
    (HEAD + OK_SWEEP + 'pin = ["spread"]\n', "sweep[0].pin[0] = 'spread': unknown pin strategy"),
    (HEAD + OK_SWEEP + 'counter_group = ["FLOPZ"]\n', "sweep[0].counter_group[0] = 'FLOPZ': unknown likwid"),
    (
        HEAD + '[[sweep]]\nbinary = ["mandelbrot-c-cuda"]\n',
        "binary[0] = 'mandelbrot-c-cuda': no such",
    ),
    (HEAD + '[[sweep]]\nbinary = ["mandelbrot"]\n', "sweep[0].binary[0] = 'mandelbrot': binary names are"),
    (HEAD + OK_SWEEP + "params.width = [64]\n", "sweep[0].params.width = [64]: mcpi-c-omp takes no option"),
    (HEAD + OK_SWEEP + "params.samples = [true]\n", "sweep[0].params.samples[0] = true: option values must"),
    (HEAD + OK_SWEEP + "params.samples = []\n", "sweep[0].params.samples = []: empty axis"),
    (HEAD + OK_SWEEP + "params.threads = [2]\n", "sweep[0].params.threads = [2]: set by the harness"),
    (
        HEAD + "env.OMP_NUM_THREADS = 2\n" + OK_SWEEP,
        "env.OMP_NUM_THREADS = 2: environment values must",
    ),
    (HEAD + 'env."1X" = "a"\n' + OK_SWEEP, "env.1X = 'a': not a valid environment variable name"),
    (HEAD + 'node_types = ["cray"]\n' + OK_SWEEP, "node_types[0] = 'cray': unknown node type"),
    (HEAD + OK_SWEEP + '[[exclude]]\ncolour = "red"\n', "exclude[0].colour = 'red': unknown key"),
    (HEAD + OK_SWEEP + '[[exclude]]\nthreads = ["lots"]\n', "exclude[0].threads[0] = 'lots': not a count"),
    (
        HEAD + '[[sweep]]\nbinary = ["mcpi-c-serial"]\nthreads = [1, 2]\n',
        "sweep[0].threads = 2: mcpi-c-serial is serial",
    ),
    (HEAD + OK_SWEEP + "ranks = [2]\n", "sweep[0].ranks = 2: mcpi-c-omp is not an MPI binary"),
    (HEAD + OK_SWEEP + 'ranks = ["all"]\n', "sweep[0].ranks[0] = 'all': not a count or expression"),
    (
        HEAD + '[[sweep]]\nbinary = ["mcpi-c-mpi"]\nranks = ["cores-9"]\n',
        "sweep[0].ranks = 'cores-9': resolves to",
    ),
    (
        HEAD + 'node_types = ["tc-core"]\n' + OK_SWEEP + 'pin = ["smt-siblings"]\n',
        "node type tc-core has no SMT",
    ),
    (
        HEAD + 'node_types = ["tc-core"]\n' + OK_SWEEP + 'threads = ["cores-2"]\n',
        "resolves to 0 on node type tc-core",
    ),
    (
        HEAD + '[[sweep]]\nbinary = ["mandelbrot-c-serial"]\npin = ["compact"]\nparams.preset = ["a b"]\n',
        "sweep[0].params = 'a b': likwid-pin splits its command line on whitespace",
    ),
    (HEAD + "[[sweep\n", "not valid TOML"),
    (
        HEAD + '[[sweep]]\nbinary = ["mcpi-c-mpi"]\nranks = [2]\ncounter_group = ["CLOCK"]\n',
        "sweep[0].counter_group = 'CLOCK': counters are measured per process",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_malformed_experiment_names_file_key_and_value(tmp_path, bin_dir, text, expected):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    results = tmp_path / "results"
    with pytest.raises(UsageError) as err:
        create_campaign(path, results_dir=results)
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message
    assert "\n" not in message
    assert not results.exists() or not any(results.iterdir()), "a rejected experiment must write nothing"


def test_the_table_is_big_enough():
    assert len(MALFORMED) >= 20


NODE_A = '[node_types.a]\ndescription = "a"\n'
NODE_MALFORMED = [
    ("", "node_types: missing"),
    ('[node_types.a]\ndescription = "a"\ncounters = "no"\ndetect = true\n', "node_types.a.counters = 'no'"),
    (
        '[node_types.a]\ndescription = "a"\ncounters = false\npartition = "p"\n',
        "node_types.a.sockets: missing",
    ),
    (
        '[node_types.a]\ndescription = "a"\ncounters = false\ndetect = true\ncolor = 1\n',
        "node_types.a.color = 1",
    ),
    (
        '[node_types.a]\ndescription = "a"\ncounters = false\nsockets = 1\ncores_per_socket = 2\n'
        "threads_per_core = 1\n",
        "needs a partition and/or constraint",
    ),
    (
        '[node_types.a]\ndescription = "a"\ncounters = false\npartition = "p"\nsockets = 0\n'
        "cores_per_socket = 2\nthreads_per_core = 1\n",
        "node_types.a.sockets = 0: must be >= 1",
    ),
]


@pytest.mark.parametrize(("text", "expected"), NODE_MALFORMED, ids=[m[1][:30] for m in NODE_MALFORMED])
def test_malformed_node_file(tmp_path, text, expected):
    path = tmp_path / "nodes.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as err:
        load_node_types(path)
    assert str(err.value).startswith(f"{path}: ") and expected in str(err.value), str(err.value)


def test_repository_configs_are_valid(repo_root, bin_dir):
    nodes = load_node_types()
    assert {"workstation", "tc-core", "tc-smt"} <= set(nodes)
    assert (nodes["tc-core"].partition, nodes["tc-core"].constraint) == ("core", "nosmt")
    assert (nodes["tc-smt"].cores_per_socket, nodes["tc-smt"].threads_per_core) == (1, 2)
    assert not any(n.counters for n in nodes.values())
    for path in sorted((repo_root / "config" / "experiments").glob("*.toml")):
        _, cases = plan_experiment(path)
        assert cases, path


def test_valid_minimal_experiment_gets_documented_defaults(tmp_path, bin_dir):
    path = tmp_path / "mini.toml"
    path.write_text(textwrap.dedent(HEAD + OK_SWEEP))
    exp, cases = plan_experiment(path)
    assert exp.node_types == ["workstation"]
    [case] = cases
    assert (case["reps"], case["warmup"], case["timeout_s"]) == (3, 1, 300)
    assert (case["threads"], case["ranks"], case["pin"], case["counter_group"]) == (1, 1, "none", None)


def test_pinned_pthreads_with_many_warmup_threads_are_planned(tmp_path, bin_dir):
    # The pthreads kernels keep one worker pool per process, so warm-ups create no extra threads and
    # likwid-pin needs no skip mask: no limit on warm-ups x threads.
    path = tmp_path / "many.toml"
    path.write_text(HEAD + "warmup = 5\n" + PTHREADS_SWEEP + 'threads = [20, 4096]\npin = ["compact"]\n')
    _, cases = plan_experiment(path)
    assert [(c["threads"], c["warmup"], c["pin"]) for c in cases] == [
        (20, 5, "compact"),
        (4096, 5, "compact"),
    ]
