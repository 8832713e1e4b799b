"""A program's argument vector never enters a generated job script: a Slurm array task runs
`scalebench run-case CAMPAIGN INDEX`, and the program's arguments travel inside cases.jsonl to
build/bin/program-run as one JSON argument. Fuzzed: hostile arguments plan to a spec that gives them
back exactly, and the array script stays its one exec line with none of their text in it."""

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.config_decode import Checker
from jobs.programs.config import check_programs, resolve
from jobs.slurm.scripts import ArrayJob, render_array_script
from sbcore.errors import UsageError
from tests.slurm.test_script_injection import HOSTILE, _assert_intact, _node

argument = st.lists(st.sampled_from(HOSTILE) | st.text(min_size=1, max_size=6), min_size=1, max_size=4).map(
    "".join
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(args=st.lists(argument, min_size=1, max_size=5))
def test_hostile_arguments_are_refused_in_one_line_or_reach_the_spec_exactly(args):
    table = {"p": {"command": ["/opt/solver", *args], "runtime": "serial"}}
    try:
        programs = check_programs(Checker(Path("exp.toml")), table)
    except UsageError as err:
        assert "\n" not in str(err) and str(err).startswith("exp.toml: programs.p."), str(err)
        return
    values = {"threads": 1, "ranks": 1, "workers": 1}
    try:
        spec = resolve(programs["p"], "p", values, [], 1)
    except ValueError:  # a placeholder without a value: plan refuses it (tests/programs/test_program_plan.py)
        return
    wire = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    expected = [a.replace("{{", "{").replace("}}", "}") for a in args]
    assert json.loads(wire)["argv"] == ["/opt/solver", *expected]
    campaign = Path("/tmp/r/own")
    job = ArrayJob(_node("nodes"), (0, 1), 2, campaign / "jobs" / "array.sbatch")
    script = render_array_script(campaign, job, "0-1", "submit", "2026-01-01T00:00:00Z")
    _assert_intact(script, [])
    assert script == REFERENCE_SCRIPT  # nothing of the program's arguments in it


REFERENCE_SCRIPT = render_array_script(
    Path("/tmp/r/own"),
    ArrayJob(_node("nodes"), (0, 1), 2, Path("/tmp/r/own/jobs/array.sbatch")),
    "0-1",
    "submit",
    "2026-01-01T00:00:00Z",
)
