"""Campaigns as Slurm job arrays.

client (the Slurm commands), arrayspec (--array specs), scripts (sbatch scripts from templates/),
submissions (submissions.jsonl), queue (squeue states per case), checks (validation before any sbatch),
rounds (plan -> scripts -> sbatch -> log, shared by submit and resume), submit, resume, cli;
testcluster/ is a real one-host Slurm for tests and `make slurm-up`.
Nothing is imported here: `run-case` and the test cluster must stay cheap to start.
"""
