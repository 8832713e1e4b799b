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
        # the kernels (the C harness's Python helpers, the wrapped standard tools, a user's program's
        # runner) read the harness's contract and the spec (sbcore), neither the runner nor the analysis
        ("kernels", ("jobs", "analysis")),
        # the run side writes records; it never reads the analysis (data flows one way)
        ("jobs", ("analysis",)),
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


# The analysis' rooms, lowest first (docs/architecture.md): a module imports only from its own layer or
# a lower one. The commands beside the pipeline (compare, check, history) sit above it.
ANALYSIS_LAYERS = [
    ("analysis", "analysis.variants", "analysis.reference_data", "analysis.fail_on"),
    ("analysis.records",),
    ("analysis.campaign",),
    ("analysis.stats",),
    ("analysis.checks",),
    ("analysis.outputs",),
    ("analysis.pipeline",),
    (
        "analysis.cli",
        "analysis.gate_cli",
        "analysis.check",
        "analysis.history",
        "analysis.campaign_diff",
        "analysis.performance_references",
    ),
]


def layer_of(module: str) -> int:
    """The layer of a dotted module name of the analysis (that of its longest room that is a prefix)."""
    matches = [
        (len(room), i)
        for i, layer in enumerate(ANALYSIS_LAYERS)
        for room in layer
        if module == room or module.startswith(room + ".")
    ]
    assert matches, f"{module} is in no layer of ANALYSIS_LAYERS"
    return max(matches)[1]


def upward_imports(root: Path) -> dict[str, list[str]]:
    """analysis module file -> the analysis modules it imports from a higher layer."""
    found = {}
    for path in sorted((root / "analysis").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        own = layer_of(name)
        above = sorted(
            m for m in imported_modules(path) if m.split(".")[0] == "analysis" and layer_of(m) > own
        )
        if above:
            found[str(path.relative_to(root))] = above
    return found


def test_the_analysis_imports_only_downward():
    """campaign files -> records -> statistics -> validity -> outputs -> pipeline -> commands."""
    assert len(list((ROOT / "analysis").rglob("*.py"))) > 50
    assert upward_imports(ROOT) == {}


def test_the_layer_check_sees_a_statistic_reading_an_output(tmp_path):
    (tmp_path / "analysis" / "stats").mkdir(parents=True)
    (tmp_path / "analysis" / "stats" / "speedup.py").write_text(
        "def f():\n    from analysis.outputs.tables import write\n"
    )
    (tmp_path / "analysis" / "checks.py").write_text("from analysis.stats.speedup import f\n")
    assert upward_imports(tmp_path) == {"analysis/stats/speedup.py": ["analysis.outputs.tables"]}


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
