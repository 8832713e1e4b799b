"""A PATH without some tools: a directory of symlinks to everything on the current PATH except the
hidden names (how a login node without dpkg, likwid or gfortran looks to command lookup)."""

import fnmatch
import os
from pathlib import Path


def path_without(directory: Path, hidden: list[str]) -> str:
    """Fill `directory` with symlinks to the commands on $PATH whose names match none of the `hidden`
    glob patterns (first hit wins, as in lookup); returns it as a PATH value."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for tool in Path(entry).iterdir():
            link = directory / tool.name
            if link.exists() or link.is_symlink() or any(fnmatch.fnmatch(tool.name, h) for h in hidden):
                continue
            if os.access(tool, os.X_OK) and not tool.is_dir():
                link.symlink_to(tool)
    return str(directory)
