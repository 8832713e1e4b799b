"""Plan-time check of kernel options: every distinct option set of a plan goes once through the kernel's
own `--check-args` (parse and validate, run nothing: exit 0, or 2 with its one-line reason), so a value
the kernel would refuse is refused at plan time with the file, the key and the kernel's reason.

Binaries whose --help lists no --check-args (stand-ins in tests) are not asked."""

import re
import subprocess

from jobs.binaries import binary_options, binary_path
from sbcore.errors import EnvironmentProblem

CHECK_ARGS = "check-args"
_OPTION = re.compile(r"--([a-z][a-z0-9-]*)")


def kernel_refusal(binary: str, argv: list[str], warmup: int, env: dict) -> str | None:
    """The kernel's one-line reason for refusing these options, or None when it accepts them."""
    path = binary_path(binary)
    if CHECK_ARGS not in binary_options(path):
        return None
    command = [str(path), *argv, "--reps", "1", "--warmup", str(warmup), f"--{CHECK_ARGS}"]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace", env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise EnvironmentProblem(f"{path} --{CHECK_ARGS}: {err}") from None
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2:
        raise EnvironmentProblem(
            f"{path} --{CHECK_ARGS}: exit status {proc.returncode}: {lines[-1] if lines else 'no message'}"
        )
    return lines[-1] if lines else "refused (no message)"


def refused_option(reason: str) -> str | None:
    """The option a kernel's reason names first ('--max-iter' -> 'max_iter'), or None."""
    match = _OPTION.search(reason)
    return match.group(1).replace("-", "_") if match else None
