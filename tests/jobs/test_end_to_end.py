"""The smoke campaign for real: real kernels, real likwid-pin, through the CLI."""

import json
import shutil
from collections import defaultdict

import pandas as pd
import pytest

from analysis.records import load
from sbcore import layout, record_store, stored_records
from tests.records import case_probe, case_record, case_records

from .conftest import ROOT, run_cli


def fnv1a64_u32(values) -> int:
    """FNV-1a 64 over the values as little-endian uint32, as kernels/README.md defines the image checksum."""
    h = 0xCBF29CE484222325
    for byte in b"".join(v.to_bytes(4, "little") for v in values):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.mark.slow
def test_smoke_campaign(tmp_path, bin_dir):
    results = tmp_path / "res"
    run = run_cli(
        "run", ROOT / "config" / "experiments" / "smoke.toml", "--results-dir", results, "--name", "s"
    )
    assert run.returncode == 0, run.stderr
    campaign = results / "s"
    assert f"campaign directory: {campaign}" in run.stdout
    assert f"./scalebench analyze {campaign}" in run.stdout
    assert "12/12" in run.stderr and ("run/s" in run.stderr or "s/run" in run.stderr)  # tqdm: rate, ETA

    cases = [json.loads(line) for line in (campaign / "cases.jsonl").read_text().splitlines()]
    assert len(cases) == 6
    checksums = defaultdict(set)
    for case in cases:
        for k in range(case["reps"]):
            record = case_record(campaign, case["case_id"], k)
            assert record["status"] == "ok" and record["rep"] == k and record["warmup"] is False
            assert record["threads"] == case["threads"] and record["case_index"] == case["index"]
            assert record["pin"]["strategy"] == "compact"
            assert record["pin"]["cpus"] == list(range(case["threads"]))  # one socket: compact = 0, 1, ...
            # Pinned by the harness itself, without the likwid-pin front end.
            assert record["pin"]["tool"] == "harness" and record["pin"]["command"] is None
            assert record["command"][0].endswith(case["binary"])
            assert record["invocation"] == k and record["in_process_rep"] == 0
            probe = case_probe(campaign, case["case_id"], k)  # the per-CPU times beside the record
            assert (
                set(probe["after"]["cpus"]) == set(record["pin"]["cpus"]) and "after" not in record["probe"]
            )
            assert record["probe"]["n_cpus"] == len(record["pin"]["cpus"])
            assert record["pin"]["violations"] == [], record["placement"]
            assert len(record["warmup_wall_s"]) == case["warmup"]
            assert record["counters"]["status"] == "off" and record["slurm"] is None
            checksums[case["kernel"]].add(record["checksum"])
    # Same input, any model and thread count: one checksum per kernel.
    assert {k: len(v) for k, v in checksums.items()} == {"mandelbrot": 1, "mcpi": 1}

    # dump_image: each repetition of the serial Mandelbrot case left its own image, and the image is
    # what the record's checksum was computed over.
    (dumping,) = [c for c in cases if c.get("dump_image")]
    for k in range(dumping["reps"]):
        image = (campaign / "raw" / dumping["case_id"] / f"rep-{k}.pgm").read_bytes()
        header = b"P5\n128 128\n65535\n"
        assert image.startswith(header) and len(image) == len(header) + 128 * 128 * 2
        counts = [int.from_bytes(image[i : i + 2], "big") for i in range(len(header), len(image), 2)]
        assert f"fnv1a64:{fnv1a64_u32(counts):016x}" in checksums["mandelbrot"]

    status = run_cli("status", campaign)
    assert status.returncode == 0
    assert status.stdout.splitlines()[2].split() == ["workstation", "6", "0", "0", "0", "12/12"]
    assert "violated" not in status.stdout

    again = run_cli("run", "--resume", campaign, "--no-progress")
    assert again.returncode == 0 and "0 repetitions ran" in again.stdout

    # The runner stores scalebench.run/2 (facts.jsonl, reps.csv). The same records of real kernels
    # written as records.jsonl (format v1) are read as the analysis reads the stored ones.
    keys = layout.raw_files(campaign)
    assert keys and not [k for k in keys if layout.RECORDS_FILE in k]
    stored = load.parse_files(campaign, keys)
    older = tmp_path / "v1"
    shutil.copytree(campaign, older)
    for directory in (older / "raw").iterdir():
        records = case_records(older, directory.name)
        for path in directory.iterdir():  # facts.jsonl, reps.csv and its long tables
            if stored_records.is_v2_file(path.name):
                path.unlink()
        (directory / layout.RECORDS_FILE).write_bytes(b"".join(map(record_store.encode, records)))
    keys = layout.raw_files(older)
    assert [k for k in keys if layout.RECORDS_FILE in k]
    python = load.parse_files(older, keys)
    assert (stored.records["record_line"] == python.records["record_line"] + 1).all()  # below the header
    where = [load.RECORD_FILE, "record_line"]
    pd.testing.assert_frame_equal(
        stored.records.drop(columns=where), python.records.drop(columns=where), check_exact=True
    )
