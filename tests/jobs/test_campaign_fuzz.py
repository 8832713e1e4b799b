"""Fuzzing a campaign's files (docs/trust.md): whatever cases.jsonl, manifest.json or a records line
holds, `run --resume`, `status` and `analyze` end with a documented exit status, never execute anything
the campaign names and never write outside the campaign directory."""

import contextlib
import io
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.entry import main
from tests.jobs.conftest import run_cli

EXPERIMENT = """\
description = "fuzz: two tiny cases"
repetitions = 2
warmup = 0
timeout_s = 30
seed = 3

[[sweep]]
binary = ["mcpi-c-serial"]
params = { samples = [1000, 2000], seed = [7] }
"""
CANARY = '#!/bin/sh\ntouch "$(dirname "$0")/EXECUTED"\n'


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A sandbox: results/c (a campaign run once), canary.sh (a program that leaves EXECUTED beside it
    if anything ever runs it) and victim.txt."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "canary.sh").write_text(CANARY)
    (root / "canary.sh").chmod(0o755)
    (root / "victim.txt").write_text("precious\n")
    exp = root / "fuzz.toml"
    exp.write_text(EXPERIMENT)
    env = {"SCALEBENCH_MEASURE_LOCK": str(root.parent / "fuzz.lock")}
    done = run_cli("--results-dir", root / "results", "run", exp, "--name", "c", "--no-progress", env=env)
    assert done.returncode == 0, done.stderr
    return root


def hostile_text(sandbox: str) -> st.SearchStrategy:
    return st.sampled_from(
        [
            f"{sandbox}/canary.sh",
            "../../../canary.sh",
            "../" * 12 + sandbox.lstrip("/") + "/canary.sh",
            f"{sandbox}/victim.txt",
            "../../../victim.txt",
            "mcpi-c-omp",
            "",
            "a\x00b",
            "\ufeff",
            "latest",
        ]
    ) | st.text(max_size=30)


def values(sandbox: str) -> st.SearchStrategy:
    scalar = (
        hostile_text(sandbox)
        | st.integers(min_value=-(10**20), max_value=10**20)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.none()
        | st.booleans()
    )
    return st.recursive(
        scalar,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
        max_leaves=6,
    )


CASE_KEYS = ["binary", "case_id", "index", "env", "argv", "reps", "timeout_s", "warmup", "threads",
             "ranks", "pin", "params", "kernel", "model", "dump_image", "sampling", "load", "cpus",
             "pin_tool"]  # fmt: skip
RECORD_KEYS = ["rep", "wall_s", "case_id", "campaign", "params", "status", "threads", "schema", "checksum"]


@st.composite
def mutations(draw, sandbox: str):
    """(file, how) with how a function of the pristine file's bytes."""
    target = draw(st.sampled_from(["cases.jsonl", "manifest.json", "records"]))
    kind = draw(st.sampled_from(["set", "drop", "bytes"]))
    key = draw(st.sampled_from(RECORD_KEYS if target == "records" else CASE_KEYS))
    value = draw(values(sandbox))
    junk = draw(st.binary(max_size=40))
    line = draw(st.integers(min_value=0, max_value=3))
    if target == "manifest.json":
        key = draw(st.sampled_from(["loader_env", "unavailable", "topology", "hostname"]))
        value = draw(values(sandbox) | st.just({"kernels": {"mcpi-c-serial": "gone"}}))
    return target, kind, key, value, junk, line


def mutate(data: bytes, kind: str, key: str, value, junk: bytes, line: int, append: bool) -> bytes:
    lines = data.splitlines()
    if kind == "bytes":
        new = junk
    else:
        try:
            obj = json.loads(lines[line % len(lines)])
        except ValueError:
            obj = {}
        if kind == "set":
            obj[key] = value
        else:
            obj.pop(key, None)
        new = json.dumps(obj).encode()
    if append:
        return data + new + b"\n"
    lines[line % len(lines)] = new
    return b"\n".join(lines) + b"\n"


def tree(path: Path, leave_out: Path) -> dict[str, tuple]:
    found = {}
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if Path(root, d) != leave_out]
        for name in dirs + files:
            full = Path(root, name)
            found[str(full)] = (full.lstat().st_size, full.lstat().st_mtime_ns, full.lstat().st_mode)
    return found


def quietly(argv: list[str]) -> int:
    """main(argv) in this process, its output kept, the signal handlers it sets undone."""
    out = io.StringIO()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = main(argv)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert "Traceback" not in out.getvalue(), out.getvalue()
    return status


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_campaign_files_run_and_write_nothing_outside(pristine, monkeypatch, data):
    sandbox = Path(tempfile.mkdtemp(dir=pristine.parent))
    try:
        for name in ("canary.sh", "victim.txt"):
            shutil.copy2(pristine / name, sandbox / name)
        shutil.copytree(pristine / "results", sandbox / "results", symlinks=True)
        campaign = sandbox / "results" / "c"
        target, kind, key, value, junk, line = data.draw(mutations(str(sandbox)))
        stored = sorted([*campaign.glob("raw/*/facts.jsonl"), *campaign.glob("raw/*/reps.csv")])
        path = stored[line % len(stored)] if target == "records" else campaign / target
        path.write_bytes(mutate(path.read_bytes(), kind, key, value, junk, line, append=target == "records"))
        monkeypatch.setenv("SCALEBENCH_MEASURE_LOCK", str(pristine.parent / "fuzz.lock"))
        monkeypatch.setenv("SCALEBENCH_RESULTS_DIR", str(sandbox / "results"))  # main sets it; undone after
        before = tree(sandbox, campaign)
        records_before = {
            p: p.read_bytes() for p in campaign.glob("raw/*/*") if p.suffix in (".csv", ".jsonl")
        }
        results = ["--results-dir", str(sandbox / "results")]

        resumed = quietly([*results, "run", "--resume", "c", "--no-progress"])
        status = quietly([*results, "status", "c"])
        assert resumed in (0, 1, 2, 3) and status in (0, 1, 2, 3)
        if (
            target == "cases.jsonl"
            and path.read_bytes() != (pristine / "results" / "c" / target).read_bytes()
        ):
            assert resumed in (2, 3)  # an edited plan runs nothing
            assert {
                p: p.read_bytes() for p in campaign.glob("raw/*/*") if p.suffix in (".csv", ".jsonl")
            } == records_before
        if target == "records":
            assert quietly([*results, "analyze", "c", "--format", "csv"]) in (0, 1, 2, 3)
        assert not (sandbox / "EXECUTED").exists()
        assert (sandbox / "victim.txt").read_text() == "precious\n"
        assert tree(sandbox, campaign) == before
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
