"""Environment variables the C harness reads (kernels/common/), declared once for the runner
(jobs/pinning.py), the probes and the wrapped standard tools (kernels/tools/)."""

# The CPU list the harness pins its workers to: main thread before set-up, worker g to entry g mod n
# (kernels/common/sb_pin.c).
PIN_CPUS = "SB_PIN_CPUS"
