"""Every record of the Fortran and MPI binaries validates against kernels/record.schema.json
(the C harness's schema: strict fixed fields, `rank_wall_s` for MPI)."""

import pytest

from ..kernel_records import run_records
from .conftest import MANDELBROT_ARGS, PI_ARGS
from .mpi_run import mpirun_records


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
def test_fortran_records_validate(kernel, record_validator, binary, extra):
    for rec in run_records(kernel(binary), *args_for(binary), *extra, "--warmup", "1"):
        record_validator.validate(rec)


@pytest.mark.mpi
@pytest.mark.usefixtures("need_mpirun")
@pytest.mark.parametrize("binary", ["mandelbrot-c-mpi", "mcpi-c-mpi"])
def test_mpi_records_validate(kernel, record_validator, binary):
    for rec in mpirun_records(2, kernel(binary), *args_for(binary), "--threads", "2", "--warmup", "1"):
        record_validator.validate(rec)
        assert "rank_wall_s" in rec
