"""Whether a command can be found on PATH, as the shell would look it up: shutil.which without the
~2 ms its import costs each `run-case` start (one per Slurm array task)."""

import os


def on_path(command: str, path: str | None = None) -> bool:
    """True when `command` is an executable file in one of the directories of `path` ($PATH by
    default)."""
    for directory in (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep):
        candidate = os.path.join(directory or ".", command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return True
    return False
