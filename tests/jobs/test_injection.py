"""Config strings reach the kernel as argument vectors and environment values, never through a shell."""

import json
import uuid

import pytest

from jobs.campaign import create_campaign, load_cases
from jobs.runcase import Context, build_command, run_case
from jobs.toml_write import value as toml_string
from sbcore.errors import UsageError


@pytest.mark.parametrize("pin", ["none", "compact"])
def test_hostile_strings_stay_data(tmp_path, bin_dir, pin, monkeypatch):
    marker = tmp_path / f"INJECTED-{uuid.uuid4().hex[:8]}"
    monkeypatch.chdir(tmp_path)
    # Shell syntax that would create the marker file (in a working directory) if any shell saw it.
    # likwid-pin splits its command on whitespace, so the pinned variant uses the syntax without spaces.
    if pin == "none":
        name = f"$(touch {marker.name}); rm -rf keep; 'q\"\n`touch {marker.name}`.pgm"
    else:
        name = f"$(touch${{IFS}}{marker.name});rm${{IFS}}-rf${{IFS}}keep;'q\"`touch${{IFS}}{marker.name}`.pgm"
    env_value = f"$(touch {marker.name})\n; rm -rf keep 'x\" `touch {marker.name}`"
    (tmp_path / "keep").mkdir()
    experiment = tmp_path / "inject.toml"

    def write(dump: str) -> None:
        experiment.write_text(
            'description = "injection"\nrepetitions = 1\nwarmup = 0\n'
            f"[env]\nHOSTILE = {toml_string(env_value)}\n"
            f'[[sweep]]\nbinary = ["mandelbrot-c-serial"]\npin = ["{pin}"]\n'
            f"params = {{ width = [8], height = [8], max_iter = [10], dump = [{toml_string(dump)}] }}\n"
        )

    # A kernel output takes a file name, written in the case's directory: a path (hostile or not) is refused.
    write(str(tmp_path / name))
    with pytest.raises(UsageError, match=r"params\.dump\[0\] = .*a file name, not a path"):
        create_campaign(experiment, results_dir=tmp_path / "res")
    write("image.pgm")
    campaign = create_campaign(experiment, results_dir=tmp_path / "res")
    [case] = load_cases(campaign)
    assert case["env"]["HOSTILE"] == env_value
    assert case["argv"][case["argv"].index("--dump") + 1] == "image.pgm"

    command = build_command(Context.for_campaign(campaign), case, 0)
    assert command.env["HOSTILE"] == env_value

    [result] = run_case(campaign, 0)
    assert result["outcome"] == "ok", json.dumps(result, default=str)
    dump = campaign / "raw" / case["case_id"] / "image.pgm"  # in the case's directory, its working directory
    assert dump.is_file() and dump.read_bytes().startswith(b"P5")
    assert not marker.exists() and (tmp_path / "keep").is_dir()
    # The kernels run in their case directory: no shell may have touched a marker there either.
    assert not [p for p in tmp_path.rglob("INJECTED*")]
