"""The machine-state probe sees a competing process: a busy loop pinned to the kernel's CPU during
chosen repetitions makes exactly those repetitions flagged as disturbed by the analysis."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from analysis.records.derive import row as record_row
from analysis.stats.disturbance import ALU_REASON, PIPES_REASON, flag_disturbed
from jobs.campaign import create_campaign, load_cases
from jobs.runcase import Context, run_invocation
from tests.records import case_probe, case_record

EXPERIMENT = """
description = "probe under a competing process"
repetitions = 8
warmup = 1
[[sweep]]
binary = ["mcpi-c-serial"]
pin = ["compact"]
params = { samples = [3000000] }
"""
DISTURBED = {3, 4}
# Busy loops on one CPU, at a higher priority where allowed (root): on a machine that others load as
# well, the disturbance must stand out from the load that is normal there.
BUSY = (
    "import contextlib, os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "with contextlib.suppress(OSError):\n    os.setpriority(os.PRIO_PROCESS, 0, -10)\n"
    # Each busy loop leads its own session, hence its own scheduler autogroup, raised where allowed:
    # fair shares go to autogroups first, so a loop in the test's group would barely compete.
    "with contextlib.suppress(OSError):\n    open('/proc/self/autogroup', 'w').write('-10')\n"
    "print('spinning', flush=True)\nwhile True:\n    pass\n"
)


# On a machine already loaded beyond its CPUs every repetition waits, and nothing is "normal" to compare
# with; SB_FORCE_DISTURBANCE_TEST=1 runs the test anyway.
@pytest.mark.skipif(
    os.getloadavg()[0] > len(os.sched_getaffinity(0)) and not os.environ.get("SB_FORCE_DISTURBANCE_TEST"),
    reason="the machine is already overloaded: no repetition is undisturbed to compare with",
)
def test_exactly_the_disturbed_repetitions_are_flagged(tmp_path, bin_dir):
    # The host itself changes speed for minutes at a time (that is what the probe is for), so an extra
    # repetition may be flagged for a real reason: the disturbed ones must be flagged in every attempt,
    # and exactly those in one of at most five (a full CI run sees an extra slow probe in an attempt
    # about one time in three).
    attempts = []
    for attempt in range(5):
        flagged, detail = _measure(tmp_path / f"attempt-{attempt}")
        assert flagged >= DISTURBED, detail
        attempts.append(detail)
        if flagged == DISTURBED:
            return
    pytest.fail("extra repetitions flagged in every attempt:\n" + "\n".join(attempts))


def _measure(tmp_path) -> tuple[set, str]:
    tmp_path.mkdir()
    experiment = tmp_path / "probe.toml"
    experiment.write_text(EXPERIMENT)
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    [case] = load_cases(campaign)
    ctx = Context.for_campaign(campaign)
    rows = []
    for p in range(case["reps"]):
        busy = []
        if p in DISTURBED:  # two busy loops on the kernel's CPU for the whole invocation
            busy = [
                subprocess.Popen(
                    [sys.executable, "-c", BUSY, "0"],
                    stdout=subprocess.PIPE,
                    text=True,
                    start_new_session=True,
                )
                for _ in range(2)
            ]
            assert all(proc.stdout.readline() == "spinning\n" for proc in busy)
        try:
            result = run_invocation(ctx, case, p)
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
        assert result["outcome"] == "ok", result
        record = case_record(campaign, case["case_id"], p)
        assert record["probe"]["n_cpus"] == 1 and record["probe"]["runq_wait_s"] is not None
        assert case_probe(campaign, case["case_id"], p)["after"]["cpus"] == [0]
        rows.append(record_row(record))
    flagged = flag_disturbed(pd.DataFrame(rows))
    detail = flagged[
        ["rep", "wall_s", "probe_slowdown", "probe_tput_slowdown", "runq_wait_share", "disturbed_reason"]
    ]
    # The host's own phases (another tenant on the FP pipes or the integer ALUs) come and go regardless
    # of the busy loops: a repetition flagged only for those is not counted as competed for.
    host_phase = (
        flagged["disturbed_reason"]
        .astype(str)
        .map(lambda text: set(text.split(" + ")) <= {PIPES_REASON, ALU_REASON})
    )
    competed = flagged["disturbed"] & ~host_phase
    return set(flagged.loc[competed, "rep"]), detail.to_string()
