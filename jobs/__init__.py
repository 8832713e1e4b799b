"""Campaign engine: config loading, planning, local runner, likwid and Slurm adapters, status/resume."""
