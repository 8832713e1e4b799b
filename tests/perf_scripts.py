"""The perf/ scripts are files run by `make perf`, not modules of a package: tests load them from there."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_perf_script(name: str):
    """perf/<name>.py as a fresh module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "perf" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
