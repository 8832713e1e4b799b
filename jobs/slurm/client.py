"""The Slurm client commands scalebench uses (sbatch, scancel, squeue, scontrol), each behind one function.

Every failure becomes one ScalebenchError line naming the command and Slurm's own reason, so the CLI can
print it and stop. Nothing here knows about campaigns.
"""

import os
import shlex
import shutil
import subprocess

from sbcore.errors import ScalebenchError

CLIENT_TIMEOUT_S = 60.0
# Slurm's own error lines carry these prefixes; what follows is the reason worth showing.
_NOISE = ("sbatch: error: ", "sbatch: fatal: ", "scancel: error: ", "squeue: error: ", "error: ")


def require_clients(*names: str) -> None:
    """Fail with one line if a Slurm client command or the SLURM_CONF file it names is missing."""
    for name in names:
        if shutil.which(name) is None:
            raise ScalebenchError(
                f"{name} not found on PATH: run this on a Slurm login node "
                "(for the local test cluster: make slurm-up, then source its env.sh)"
            )
    conf = os.environ.get("SLURM_CONF")
    # Slurm clients retry a missing config file for 60 s before giving up: say it at once.
    if conf and not os.path.isfile(conf):
        raise ScalebenchError(f"SLURM_CONF={conf}: no such file")


def _reason(proc: subprocess.CompletedProcess) -> str:
    lines = [line.strip() for line in (proc.stderr + "\n" + proc.stdout).splitlines() if line.strip()]
    # Slurm prints retry chatter before the real reason; the last line is the reason.
    if not lines:
        return f"exit status {proc.returncode}, no output"
    reason = lines[-1]
    for prefix in _NOISE:
        reason = reason.removeprefix(prefix)
    return reason


def _run(cmd: list[str], timeout: float = CLIENT_TIMEOUT_S) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        require_clients(cmd[0])
        raise
    except subprocess.TimeoutExpired:
        raise ScalebenchError(f"`{shlex.join(cmd)}` did not answer within {timeout:.0f} s") from None


def ping_controller() -> None:
    """Fail with one line unless slurmctld answers."""
    require_clients("scontrol")
    proc = _run(["scontrol", "ping"])
    if proc.returncode != 0 or " is UP" not in proc.stdout:
        # stdout: "Slurmctld(primary) at HOST is DOWN" followed by a banner; stderr: config errors.
        first = (proc.stdout.strip().splitlines() or [_reason(proc)])[0]
        raise ScalebenchError(f"Slurm controller unreachable: {first}")


def sbatch(options: list[str], script=None, test_only: bool = False) -> str:
    """Submit (or with test_only, only validate) a batch job; returns the job id ('' for test_only)."""
    cmd = ["sbatch", *(["--test-only"] if test_only else ["--parsable"]), *options]
    if script is not None:
        cmd.append(str(script))
    proc = _run(cmd)
    if proc.returncode != 0:
        raise ScalebenchError(f"`{shlex.join(cmd)}` failed: {_reason(proc)}")
    if test_only:
        return ""
    # --parsable prints "jobid" or "jobid;cluster".
    job_id = proc.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise ScalebenchError(f"`{shlex.join(cmd)}` printed no job id: {proc.stdout.strip()!r}")
    return job_id


def scancel(job_ids: list[str]) -> None:
    if not job_ids:
        return
    proc = _run(["scancel", *job_ids])
    if proc.returncode != 0:
        raise ScalebenchError(f"`scancel {' '.join(job_ids)}` failed: {_reason(proc)}")


def queued_array_tasks(job_ids: list[str]) -> list[tuple[str, int, str, str]]:
    """(array job id, task id, state, job name) of every task of these array jobs still in the queue.

    Finished tasks are not listed (squeue shows pending, running, completing, ... only).
    """
    if not job_ids:
        return []
    require_clients("squeue")
    cmd = ["squeue", "--noheader", "--array", "--jobs", ",".join(job_ids), "--format", "%F|%K|%T|%j"]
    proc = _run(cmd)
    if proc.returncode != 0:
        reason = _reason(proc)
        # squeue refuses a list made only of jobs the controller has forgotten: nothing is queued.
        if "Invalid job id" in reason:
            return []
        raise ScalebenchError(f"`{shlex.join(cmd)}` failed: {reason}")
    tasks = []
    for line in proc.stdout.splitlines():
        array_id, task, state, name = line.strip().split("|", 3)
        if task.isdigit():
            tasks.append((array_id, int(task), state, name))
    return tasks


# sinfo state names of nodes that cannot start a job now (suffixes like * ~ # are stripped first).
UNAVAILABLE_STATES = {
    "down",
    "drain",
    "drng",
    "drained",
    "draining",
    "fail",
    "failg",
    "maint",
    "unk",
    "inval",
}


def available_nodes(partition: str | None, constraint: str | None) -> tuple[int, int]:
    """(nodes that could start a job now, all nodes) matching a partition and a plain feature constraint.

    A constraint expression (a&b, a|b, [..]) is not evaluated here: all nodes of the partition count.
    """
    cmd = ["sinfo", "--noheader", "--Node", "--format", "%N|%t|%f"]
    if partition:
        cmd += ["--partition", partition]
    proc = _run(cmd)
    if proc.returncode != 0:
        raise ScalebenchError(f"`{shlex.join(cmd)}` failed: {_reason(proc)}")
    plain = constraint if constraint and constraint.replace("-", "").replace("_", "").isalnum() else None
    nodes = {}
    for line in proc.stdout.splitlines():
        name, state, features = line.strip().split("|")
        if plain is None or plain in features.split(","):
            nodes[name] = state.rstrip("*~#!%$@^-+")
    usable = sum(1 for state in nodes.values() if state not in UNAVAILABLE_STATES)
    return usable, len(nodes)


def show_config() -> str:
    """`scontrol show config`: the controller's running configuration as "Name = value" lines."""
    require_clients("scontrol")
    proc = _run(["scontrol", "show", "config"])
    if proc.returncode != 0:
        raise ScalebenchError(f"`scontrol show config` failed: {_reason(proc)}")
    return proc.stdout


def show_nodes() -> str:
    """`scontrol show node --oneliner`: one line of Key=Value fields per node."""
    require_clients("scontrol")
    proc = _run(["scontrol", "show", "node", "--oneliner"])
    if proc.returncode != 0:
        raise ScalebenchError(f"`scontrol show node` failed: {_reason(proc)}")
    return proc.stdout


def node_partitions() -> dict[str, list[str]]:
    """Node name -> the partitions it belongs to (sinfo; the default partition's trailing * removed)."""
    require_clients("sinfo")
    cmd = ["sinfo", "--noheader", "--Node", "--format", "%N|%P"]
    proc = _run(cmd)
    if proc.returncode != 0:
        raise ScalebenchError(f"`{shlex.join(cmd)}` failed: {_reason(proc)}")
    parts: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        if "|" in line:
            node, partition = line.strip().split("|", 1)
            parts.setdefault(node, []).append(partition.rstrip("*"))
    return parts


def query_optional(cmd: list[str]) -> str | None:
    """stdout of a query whose failure only means "not available here" (e.g. sacctmgr without accounting)."""
    if shutil.which(cmd[0]) is None:
        return None
    proc = _run(cmd)
    return proc.stdout if proc.returncode == 0 else None


def queued_job_count(user: str | None = None) -> int:
    """Jobs in the queue (every array task counted), of one user or of everybody."""
    cmd = ["squeue", "--noheader", "--array", "--format", "%i", *(["--user", user] if user else [])]
    proc = _run(cmd)
    if proc.returncode != 0:
        raise ScalebenchError(f"`{shlex.join(cmd)}` failed: {_reason(proc)}")
    return sum(1 for line in proc.stdout.splitlines() if line.strip())
