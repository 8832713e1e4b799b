"""A real one-host Slurm test cluster (munge, slurmctld, one slurmd per emulated node type)."""

from jobs.slurm.testcluster.cluster import Cluster, down, status, up

__all__ = ["Cluster", "down", "status", "up"]
