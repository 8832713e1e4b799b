"""Tests of the analysis package (issue 6), on synthetic campaigns with known ground truth.

Without a tests/__init__.py, pytest's default import mode puts tests/ first on sys.path, so this directory
is imported as the package `analysis` and tests/jobs as `jobs`, shadowing the real packages. Until the
repository fixes that (an empty tests/__init__.py does), the real package directories are put first on
the search paths of the shadowing packages; test modules are still found after them. Inert otherwise.
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

if __name__ == "analysis":
    __path__.insert(0, str(ROOT / "analysis"))
    if "jobs" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "jobs",
            ROOT / "jobs" / "__init__.py",
            submodule_search_locations=[str(ROOT / "jobs"), str(ROOT / "tests" / "jobs")],
        )
        jobs = importlib.util.module_from_spec(spec)
        sys.modules["jobs"] = jobs
        spec.loader.exec_module(jobs)
