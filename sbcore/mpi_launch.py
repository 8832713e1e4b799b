"""How an MPI job is started: the one launcher prefix for the kernels' MPI cases (jobs/runcase.py) and
a user program's MPI runs (kernels/programs/run_program.py). Inside a Slurm job srun places the ranks
(PMIx); elsewhere Open MPI's mpirun, with --oversubscribe when the ranks' threads outnumber the CPUs."""

import os

from sbcore.case_shape import oversubscribed, workers


def mpi_launcher(ranks: int, threads: int, cpus: int, env=os.environ) -> list[str]:
    if "SLURM_JOB_ID" in env:
        return ["srun", "--mpi=pmix", "-n", str(ranks), "-c", str(threads)]
    launcher = ["mpirun", "-np", str(ranks)]
    if oversubscribed(workers(threads, ranks), cpus):
        launcher.append("--oversubscribe")
    return launcher


def root_env() -> dict[str, str]:
    """What Open MPI needs to start as root (a container or a test VM), else nothing."""
    if os.geteuid() == 0:
        return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return {}
