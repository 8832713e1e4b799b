"""Performance-reference files (analysis/performance_references.py): round trip, and bad files
rejected with one line naming the file, entry, key and value."""

import pandas as pd
import pytest

from analysis.performance_references import read_references, write_references
from sbcore.errors import UsageError

CASES = pd.DataFrame(
    {
        "node_type": ["n4", "n4"],
        "binary": ["mcpi-c-omp", "mcpi-c-omp"],
        "threads": [2, 4],
        "ranks": [1, 1],
        "pin": ["compact", "compact"],
        "counter_group": [None, "FLOPS_DP"],
        "params_json": ['{"samples":1000,"schedule":"static"}', '{"samples":1000,"schedule":"dynamic"}'],
        "median_s": [0.5, 0.25],
    }
)


def test_round_trip(tmp_path):
    path = tmp_path / "refs.toml"
    assert write_references(path, CASES, "c1", 0.05, 0.1) == 2
    back = read_references(path)
    assert back["expected"].tolist() == [0.5, 0.25] and set(back["metric"]) == {"median_s"}
    assert back["lower"].tolist() == [0.05, 0.05] and back["upper"].tolist() == [0.1, 0.1]
    assert back["counter_group"].tolist() == ["", "FLOPS_DP"]
    assert back["params_json"].tolist() == CASES["params_json"].tolist()
    with pytest.raises(UsageError, match="not overwritten"):
        write_references(path, CASES, "c2", 0.05, 0.1)


GOOD = """format = "scalebench-performance-references"
version = 1
[[case]]
node_type = "n4"
binary = "mcpi-c-omp"
threads = 2
params = { samples = 1000 }
median_s = 0.5
lower = 0.1
upper = 0.1
"""


@pytest.mark.parametrize(
    "change, message",
    [
        (("version = 1", "version = 7"), "version = 7"),
        (("threads = 2", 'threads = "two"'), "[[case]] number 1: threads = 'two': expected an integer"),
        (("median_s = 0.5", "median_s = -1.0"), "median_s = -1.0"),
        (("lower = 0.1", "lower = 1.5"), "lower = 1.5"),
        (("median_s = 0.5", "median_s = 0.5\nmedain = 1"), "unknown key 'medain'"),
        (('binary = "mcpi-c-omp"\n', ""), "binary is missing"),
        (("[[case]]", "[[case"), "not a readable TOML file"),
        (("median_s = 0.5", "median_s = 0.5\nspeedup = 2.0"), "exactly one of median_s and speedup, found 2"),
        (("median_s = 0.5", "speedup = 0.0"), "speedup = 0.0: expected a finite value > 0"),
    ],
)
def test_bad_files_are_named(tmp_path, change, message):
    path = tmp_path / "refs.toml"
    path.write_text(GOOD)
    assert len(read_references(path)) == 1  # the file before the change is good
    path.write_text(GOOD.replace(*change))
    with pytest.raises(UsageError) as err:
        read_references(path)
    assert str(path) in str(err.value) and message in str(err.value) and "\n" not in str(err.value)
