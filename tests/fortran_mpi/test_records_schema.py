"""Every record of the Fortran and MPI binaries validates against kernels/record.schema.json
(the C harness's schema: strict fixed fields, `rank_wall_s` for MPI)."""

import json

import jsonschema
import pytest

from .conftest import MANDELBROT_ARGS, PI_ARGS
from .kernel_run import mpirun_records, run_records


@pytest.fixture(scope="module")
def validator(repo_root):
    schema = json.loads((repo_root / "kernels" / "record.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def args_for(binary: str) -> list:
    return MANDELBROT_ARGS if binary.startswith("mandelbrot") else PI_ARGS


@pytest.mark.parametrize(
    ("binary", "extra"),
    [
        ("mandelbrot-f-serial", []),
        ("mandelbrot-f-omp", ["--threads", "3", "--schedule", "guided,2"]),
        ("mcpi-f-serial", []),
        ("mcpi-f-omp", ["--threads", "2", "--sync", "critical"]),
    ],
)
def test_fortran_records_validate(kernel, validator, binary, extra):
    for rec in run_records(kernel(binary), *args_for(binary), *extra, "--warmup", "1"):
        validator.validate(rec)


@pytest.mark.mpi
@pytest.mark.usefixtures("need_mpirun")
@pytest.mark.parametrize("binary", ["mandelbrot-c-mpi", "mcpi-c-mpi"])
def test_mpi_records_validate(kernel, validator, binary):
    for rec in mpirun_records(2, kernel(binary), *args_for(binary), "--threads", "2", "--warmup", "1"):
        validator.validate(rec)
        assert "rank_wall_s" in rec
