"""A real Slurm on this host: munged, slurmctld and one `slurmd -N` per emulated node type.

Everything (config, keys, sockets, state, logs, pid files) lives under one directory, so a test session
can run its own cluster next to a developer's. Daemons are found again through their pid files, and
teardown double-checks with pgrep on the cluster directory, so nothing is left behind.
"""

import contextlib
import os
import shlex
import signal
import socket
import string
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sbcore.atomic import write_atomic
from sbcore.errors import ScalebenchError, UsageError

TEMPLATE = Path(__file__).resolve().parent.parent / "templates" / "slurm.conf"
DEFAULT_DIR = "/tmp/scalebench-slurm"
DEFAULT_PORT_BASE = 6917
# Slurm node name -> partition; the names are what records carry in `slurm.node`.
NODES = {"tc-core-n1": "core", "tc-smt-n1": "smt"}
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
DAEMONS = {"munged", "slurmctld", "slurmd", "slurmstepd"}


@dataclass(frozen=True)
class Cluster:
    """Where one test cluster lives and which ports it uses."""

    dir: Path
    port_base: int
    # Slurm's default, as most sites keep it; a smaller value makes a tiny campaign split into arrays.
    max_array_size: int = 1001

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Cluster":
        env = os.environ if env is None else env
        raw_dir = env.get("SB_SLURM_DIR") or DEFAULT_DIR
        raw_port = env.get("SB_SLURM_PORT_BASE") or str(DEFAULT_PORT_BASE)
        raw_size = env.get("SB_SLURM_MAX_ARRAY_SIZE") or "1001"
        try:
            port_base = int(raw_port)
        except ValueError:
            raise UsageError(f"SB_SLURM_PORT_BASE={raw_port!r} is not an integer") from None
        if not raw_size.isdigit() or not 1 <= int(raw_size) <= 4000001:
            raise UsageError(f"SB_SLURM_MAX_ARRAY_SIZE={raw_size!r}: must be an integer in 1..4000001")
        # Four consecutive ports: slurmctld, default slurmd, one per emulated node.
        if not 1024 <= port_base <= 65535 - len(NODES) - 1:
            raise UsageError(f"SB_SLURM_PORT_BASE={port_base} must be in 1024..{65535 - len(NODES) - 1}")
        path = Path(raw_dir).resolve()
        # A Unix socket path must fit in sun_path (108 bytes).
        if len(str(path / "munge" / "munge.socket")) >= 100:
            raise UsageError(f"SB_SLURM_DIR={raw_dir!r} is too long for a Unix socket path (max ~85 chars)")
        return cls(path, port_base, int(raw_size))

    @property
    def conf(self) -> Path:
        return self.dir / "slurm.conf"

    @property
    def env_file(self) -> Path:
        return self.dir / "env.sh"

    @property
    def munge_socket(self) -> Path:
        return self.dir / "munge" / "munge.socket"

    def client_env(self) -> dict[str, str]:
        """The environment Slurm client commands need to talk to this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def pid_files(self) -> dict[str, Path]:
        """Daemon name -> its pid file, in start order."""
        files = {"munged": self.dir / "munge" / "munged.pid", "slurmctld": self.dir / "slurmctld.pid"}
        files.update({f"slurmd {n}": self.dir / f"slurmd-{n}.pid" for n in NODES})
        return files


def _alive_pid(pid_file: Path) -> int | None:
    """The pid in pid_file if that process still exists (zombies count as gone)."""
    try:
        pid = int(pid_file.read_text().split()[0])
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return None
    return None if state == "Z" else pid


def _run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 30.0) -> None:
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise ScalebenchError(f"{cmd[0]} not found on PATH (install slurm-wlm and munge)") from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise ScalebenchError(
            f"`{shlex.join(cmd)}` exited with {proc.returncode}: {detail[-1] if detail else 'no output'}"
        )


def render_conf(cluster: Cluster, host: str) -> str:
    nodes = list(NODES)
    values = {
        "dir": cluster.dir,
        "host": host,
        "ctld_port": cluster.port_base,
        "slurmd_port": cluster.port_base + 1,
        "munge_socket": cluster.munge_socket,
        "max_array_size": cluster.max_array_size,
        "core_node": nodes[0],
        "core_port": cluster.port_base + 2,
        "smt_node": nodes[1],
        "smt_port": cluster.port_base + 3,
    }
    return string.Template(TEMPLATE.read_text()).substitute(values)


def _prepare(cluster: Cluster) -> None:
    munge_dir = cluster.dir / "munge"
    for d in (cluster.dir, munge_dir, cluster.dir / "state", cluster.dir / "spool"):
        d.mkdir(parents=True, exist_ok=True)
    # munged insists on a private key and state, but clients must be able to reach the socket: every
    # directory above it must be searchable by all.
    os.chmod(munge_dir, 0o755)
    for parent in munge_dir.parents:
        if not parent.stat().st_mode & 0o001:
            raise UsageError(
                f"SB_SLURM_DIR={cluster.dir}: munged needs every parent directory searchable by all, "
                f"but {parent} is mode {parent.stat().st_mode & 0o777:o}"
            )
    key = munge_dir / "munge.key"
    if not key.exists():
        _run(["mungekey", "-c", "-k", str(key)])
    os.chmod(key, 0o600)
    write_atomic(cluster.conf, render_conf(cluster, socket.gethostname().split(".")[0]))
    write_atomic(
        cluster.env_file,
        "# Source this file to use the scalebench test cluster: . "
        + shlex.quote(str(cluster.env_file))
        + "\n"
        f"export SLURM_CONF={shlex.quote(str(cluster.conf))}\n",
    )


def _start_commands(cluster: Cluster) -> dict[str, list[str]]:
    m = cluster.dir / "munge"
    conf = str(cluster.conf)
    cmds = {
        "munged": [
            "munged",
            f"--socket={cluster.munge_socket}",
            f"--key-file={m / 'munge.key'}",
            f"--pid-file={m / 'munged.pid'}",
            f"--log-file={m / 'munged.log'}",
            f"--seed-file={m / 'munged.seed'}",
        ],
        # -i: keep the saved state (job id counter) across restarts but ignore what cannot be read,
        # so job ids of old campaigns are never handed out again.
        "slurmctld": ["slurmctld", "-f", conf, "-i"],
    }
    cmds.update({f"slurmd {n}": ["slurmd", "-f", conf, "-N", n] for n in NODES})
    return cmds


def _slurm_ready(cluster: Cluster) -> tuple[bool, str]:
    """Controller answers and every node is in a usable state; returns (ready, what was seen)."""
    env = cluster.client_env()
    ping = subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True, timeout=10)
    if "UP" not in ping.stdout:
        return False, (ping.stdout + ping.stderr).strip()
    info = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N %t"], env=env, capture_output=True, text=True, timeout=10
    )
    states = dict(line.split() for line in info.stdout.splitlines() if line.strip())
    usable = {"idle", "alloc", "mix", "comp"}
    ready = set(states) == set(NODES) and all(s in usable for s in states.values())
    return ready, " ".join(f"{n}={s}" for n, s in sorted(states.items())) or info.stderr.strip()


def _log_tail(cluster: Cluster, lines: int = 3) -> str:
    tails = []
    for log in sorted(cluster.dir.glob("*.log")):
        text = log.read_text(errors="replace").strip().splitlines()[-lines:]
        if text:
            tails.append(f"{log.name}: " + " | ".join(text))
    return "; ".join(tails)


def up(cluster: Cluster) -> list[str]:
    """Start whatever is not running yet and wait until all nodes are usable; returns what was started."""
    _prepare(cluster)
    started = []
    env = cluster.client_env()
    for name, cmd in _start_commands(cluster).items():
        if _alive_pid(cluster.pid_files()[name]) is not None:
            continue
        _run(cmd, env=env)
        started.append(name)
        if name == "munged":
            _wait(lambda: cluster.munge_socket.exists(), 10.0, "munged socket", cluster)
    deadline = time.monotonic() + READY_TIMEOUT_S
    seen = ""
    while time.monotonic() < deadline:
        ready, seen = _slurm_ready(cluster)
        if ready:
            return started
        # A node that registered while the controller was still starting may be left down: resume it.
        for node_state in seen.split():
            node, _, state = node_state.partition("=")
            if state.rstrip("*") in {"down", "drain", "drng"}:
                subprocess.run(
                    ["scontrol", "update", f"NodeName={node}", "State=RESUME"], env=env, capture_output=True
                )
        time.sleep(0.2)
    raise ScalebenchError(
        f"test cluster in {cluster.dir} not ready after {READY_TIMEOUT_S:.0f} s ({seen}); "
        + _log_tail(cluster)
    )


def _wait(predicate, timeout: float, what: str, cluster: Cluster) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise ScalebenchError(f"{what} did not appear within {timeout:.0f} s; {_log_tail(cluster)}")


def leftover_pids(cluster: Cluster) -> list[int]:
    """Daemons whose command line names this cluster's directory, and job steps started by its slurmd."""
    proc = subprocess.run(["pgrep", "-f", "--", str(cluster.dir) + "/"], capture_output=True, text=True)
    # Only daemons: a shell whose command line merely mentions the directory is not ours to stop.
    pids = [pid for pid in map(int, proc.stdout.split()) if _comm(pid) in DAEMONS]
    # slurmstepd's command line is "slurmstepd: [job.step]"; it inherits slurmd's SLURM_CONF.
    steps = subprocess.run(["pgrep", "-x", "slurmstepd"], capture_output=True, text=True)
    marker = f"SLURM_CONF={cluster.conf}".encode()
    for pid in map(int, steps.stdout.split()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker in environ and pid not in pids:
            pids.append(pid)
    return pids


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def down(cluster: Cluster) -> list[str]:
    """Cancel the jobs, stop every daemon of this cluster and check none is left; returns what was stopped."""
    pid_files = cluster.pid_files()
    alive = {name: pid for name, f in pid_files.items() if (pid := _alive_pid(f)) is not None}
    if not alive and not leftover_pids(cluster):
        return []
    env = cluster.client_env()
    if "slurmctld" in alive:
        # Jobs first, so that no slurmstepd outlives its slurmd.
        subprocess.run(["scancel", "--full", "--user", "root"], env=env, capture_output=True, timeout=10)
        _poll_queue_empty(env, timeout=10.0)
    # Stop in reverse start order: slurmds, controller, then munge which they all authenticate through.
    for name in reversed(list(pid_files)):
        pid = alive.get(name)
        if pid is not None:
            _terminate(pid)
    for pid in leftover_pids(cluster):
        _terminate(pid)
    left = leftover_pids(cluster)
    if left:
        raise ScalebenchError(f"test cluster in {cluster.dir}: processes still running after stop: {left}")
    return list(alive)


def _poll_queue_empty(env: dict[str, str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        proc = subprocess.run(["squeue", "-h", "-o", "%i %T"], env=env, capture_output=True, text=True)
        if proc.returncode != 0 or all("COMPLET" in line for line in proc.stdout.splitlines()):
            return
        time.sleep(0.1)


def _terminate(pid: int) -> None:
    """SIGTERM, then SIGKILL if it does not exit in time."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _is_zombie(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def status(cluster: Cluster) -> dict[str, int | None]:
    """Daemon name -> pid if running, else None."""
    return {name: _alive_pid(f) for name, f in cluster.pid_files().items()}
