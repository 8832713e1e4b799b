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


def test_the_check_sees_nested_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from jobs.campaign import load_cases\n    import jobs.status\n")
    assert imported_packages(module) == {"jobs"}
