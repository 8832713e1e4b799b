"""Being an HPC user on a cluster login node, here: a non-root account (nobody, uid 65534) in a mount
namespace where dpkg, apt, likwid, stress-ng and chromium are hidden (/dev/null bound over them), with
its own fresh clone of this repository, and pip installing only from the wheels the pinned .venv uses
(build/wheels, made by `scripts/setup.sh test`)."""

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.conftest import ROOT

UID = GID = 65534
HIDDEN = ["dpkg*", "apt*", "likwid-*", "stress-ng", "chromium"]
TOOL_DIRS = ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]
WHEELS = ROOT / "build" / "wheels"
USER_PATH = "/usr/local/bin:/usr/bin:/bin"


def make_home() -> Path:
    """A world-readable work directory owned by the user (pytest's tmp dirs are root's, mode 700)."""
    base = Path(tempfile.mkdtemp(prefix="sb-user-", dir="/tmp"))
    base.chmod(0o755)
    (base / "home").mkdir()
    os.chown(base / "home", UID, GID)
    os.chown(base, UID, GID)
    return base


def fresh_clone(base: Path) -> Path:
    """A clone of this repository's HEAD, owned by the user (cloned by root: the user may not read
    the repository's git directory on every machine)."""
    clone = base / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    for path in [clone, *clone.rglob("*")]:
        os.lchown(path, UID, GID)
    return clone


def as_user(
    script: str, base: Path, cwd: Path, timeout: float = 900, env=None
) -> subprocess.CompletedProcess:
    """Run bash `script` as the user, in a mount namespace where the HIDDEN tools are /dev/null."""
    hide = " ".join(f"{d}/{pattern}" for d in TOOL_DIRS for pattern in HIDDEN)
    user_env = {
        "HOME": str(base / "home"),
        "PATH": USER_PATH,
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELS),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **(env or {}),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in user_env.items())
    namespace = (
        f'for f in {hide}; do [ -e "$f" ] && mount --bind /dev/null "$f"; done; '
        f"cd {shlex.quote(str(cwd))} && exec setpriv --reuid={UID} --regid={GID} --clear-groups "
        f"env -i {exports} bash -euo pipefail -c {shlex.quote(script)}"
    )
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", namespace],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def can_be_the_user() -> str | None:
    """Why this host cannot play the cluster user, or None."""
    if os.geteuid() != 0:
        return "needs root to create the user's namespace and switch to uid 65534"
    for tool in ("unshare", "setpriv", "git"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    if not (WHEELS / ".requirements.sha256").is_file():
        return f"{WHEELS} missing: run `scripts/setup.sh test` (make test does)"
    return None


def owners(directory: Path) -> set[int]:
    return {p.lstat().st_uid for p in [directory, *directory.rglob("*")]}
