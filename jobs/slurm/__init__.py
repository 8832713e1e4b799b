"""Campaigns as Slurm job arrays.

client (the Slurm commands), limits (MaxArraySize, MaxJobCount, MaxSubmitJobs of the live controller),
arrayspec (--array specs and the split into arrays below MaxArraySize), site (account, qos, time limit,
mem, reservation, extra sbatch options), timelimit (default --time from the cases), scripts (sbatch
scripts from templates/), submissions (submissions.jsonl), queue (squeue states per case), checks
(validation before any sbatch), rounds (plan -> scripts -> sbatch -> log, shared by submit and resume),
submit, resume, discover (node types from scontrol/sinfo), cli; testcluster/ is a real one-host Slurm for
tests and `make slurm-up`. Nothing is imported here: `run-case` and the test cluster must stay cheap.
"""
