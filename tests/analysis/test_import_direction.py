"""Data flows one way: the analysis reads campaign files and never imports the campaign engine (`jobs`);
what both need lives in `sbcore`, which imports neither."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports (absolute imports, at any depth of the file)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"), [("analysis", {"jobs", "tests"}), ("sbcore", {"jobs", "analysis", "tests"})]
)
def test_import_direction(package, forbidden):
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules, f"no modules under {package}/"
    offenders = {str(path.relative_to(ROOT)): sorted(imported_packages(path) & forbidden) for path in modules}
    assert {k: v for k, v in offenders.items() if v} == {}


def imported_modules(path: Path) -> set[str]:
    """Dotted names of the modules a module imports (absolute imports, at any depth of the file)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize(
    ("place", "forbidden"),
    [
        # statistics are computed from tables; the validity rules in checks.py read statistics, never
        # the other way round (what both need, like a case's workers, lives in sbcore/case_shape.py)
        ("analysis/stats", ("analysis.checks", "analysis.outputs", "analysis.pipeline")),
        # the wrapped standard tools are kernels: they read the harness's contract (sbcore), not the runner
        ("kernels/tools", ("jobs",)),
        # a user's program's runner is a kernel too: the harness's contract and the spec (sbcore)
        ("kernels/programs", ("jobs", "analysis")),
    ],
)
def test_no_upward_imports(place, forbidden):
    modules = sorted((ROOT / place).rglob("*.py"))
    assert modules, f"no modules under {place}/"
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            m for m in imported_modules(path) if any(m == f or m.startswith(f + ".") for f in forbidden)
        )
        for path in modules
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_upward_check_sees_a_checks_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from analysis.checks import oversubscribed\nimport jobs.pinning\n")
    assert imported_modules(module) == {"analysis.checks", "jobs.pinning"}


def test_the_check_sees_nested_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from jobs.campaign import load_cases\n    import jobs.status\n")
    assert imported_packages(module) == {"jobs"}


FILE_ACCESS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "glob",
    "rglob",
    "scandir",
    "is_file",
}


def file_access(path: Path) -> set[str]:
    """Names of calls that read or list files (open(), Path.read_text(), .glob(), ...) in a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in FILE_ACCESS:
                found.add(name)
    return found


def test_statistics_and_checks_read_no_files():
    """Numbers from tables: the campaign's files are read by analysis/campaign.py and records/, the
    reference data by analysis/reference_data.py, and outputs/ writes."""
    modules = sorted((ROOT / "analysis" / "stats").glob("*.py")) + [ROOT / "analysis" / "checks.py"]
    assert len(modules) > 10
    assert {str(p.relative_to(ROOT)): sorted(file_access(p)) for p in modules if file_access(p)} == {}


def test_the_file_check_sees_method_calls(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(p):\n    return p.read_text() + open(p).read()\n")
    assert file_access(module) == {"read_text", "open"}


# The commands that reach the Slurm adapter (imported where used, so run-case pays only for what it runs).
SLURM_ENTRIES = {"jobs/cli.py", "jobs/entry.py"}


def test_the_engine_reaches_slurm_only_through_its_commands():
    """The campaign engine reads configuration as data (jobs/site_options.py) and never the Slurm
    adapter (jobs/slurm/): only the commands import it."""
    modules = [
        p for p in sorted((ROOT / "jobs").rglob("*.py")) if "slurm" not in p.relative_to(ROOT).parts[1:2]
    ]
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.startswith("jobs.slurm"))
        for path in modules
        if str(path.relative_to(ROOT)) not in SLURM_ENTRIES
    }
    assert len(modules) > 20
    assert {k: v for k, v in offenders.items() if v} == {}
