"""No import circles among the Python modules and no call circles among the C harness's files
(kernels/common): every module or file can be read after the ones it uses. A circle found is named in
the failure, module by module."""

import ast
import shutil
import subprocess
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analysis", "jobs", "sbcore")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def python_imports(root: Path, packages=PACKAGES) -> dict[str, set[str]]:
    """module -> the modules of `packages` it imports, at any depth of the file (a function-level import
    closes a circle as well as a top-level one)."""
    modules = {
        module_name(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        used: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                used |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base])
                    base = base.strip(".")
                for alias in node.names:  # `from a import b`: the module a.b if it is one, else a
                    used.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {m for m in used if m in modules and m != name}
    return graph


def c_calls(objects: list[Path]) -> dict[str, set[str]]:
    """object file -> the object files whose functions it calls (from the symbols each defines and uses)."""
    defined: dict[str, str] = {}
    used: dict[str, set[str]] = {}
    for obj in objects:
        table = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
        used[obj.stem] = set()
        for line in table.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] == "T":
                defined[fields[2]] = obj.stem
            elif len(fields) == 2 and fields[0] == "U":
                used[obj.stem].add(fields[1])
    return {
        name: {defined[s] for s in symbols if s in defined and defined[s] != name}
        for name, symbols in used.items()
    }


def circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph (its nodes in order, the first repeated at the end), or []."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        return list(err.args[1])
    return []


def test_no_python_import_circle():
    graph = python_imports(ROOT)
    assert len(graph) > 50 and graph["analysis.pipeline"], "the modules were not all read"
    assert circle(graph) == []


def test_the_python_check_finds_a_circle(tmp_path):
    (tmp_path / "analysis" / "outputs").mkdir(parents=True)
    (tmp_path / "analysis" / "__init__.py").write_text("")
    (tmp_path / "analysis" / "outputs" / "__init__.py").write_text("")
    (tmp_path / "analysis" / "outputs" / "plots.py").write_text("def f():\n    from . import kinds\n")
    (tmp_path / "analysis" / "outputs" / "kinds.py").write_text("from analysis.outputs.plots import f\n")
    graph = python_imports(tmp_path, ("analysis",))
    assert graph["analysis.outputs.kinds"] == {"analysis.outputs.plots"}
    assert set(circle(graph)) == {"analysis.outputs.plots", "analysis.outputs.kinds"}


@pytest.fixture(scope="module")
def harness_objects(tmp_path_factory) -> list[Path]:
    """Each C file of the harness compiled on its own (whatever is built or not)."""
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.fail("gcc and nm are needed (Debian: gcc, binutils)")
    out = tmp_path_factory.mktemp("harness")
    objects = []
    for source in sorted((ROOT / "kernels" / "common").glob("*.c")):
        if source.name == "sb_mpi.c":  # needs mpi.h; it calls into the harness and nothing calls it
            continue
        obj = out / f"{source.stem}.o"
        flags = ["-std=c11", "-fopenmp", "-pthread", '-DSB_CFLAGS="test"', f"-I{ROOT / 'kernels' / 'common'}"]
        subprocess.run(["gcc", *flags, "-c", str(source), "-o", str(obj)], check=True)
        objects.append(obj)
    return objects


def test_no_c_call_circle_in_the_harness(harness_objects):
    graph = c_calls(harness_objects)
    assert "sb_record" in graph and graph["sb_record"], "the harness's calls were not read"
    assert circle(graph) == []


def test_the_c_check_finds_a_circle(tmp_path):
    (tmp_path / "a.c").write_text("void b(void);\nvoid a(void) { b(); }\n")
    (tmp_path / "b.c").write_text("void a(void);\nvoid b(void) { a(); }\n")
    for name in ("a", "b"):
        subprocess.run(
            ["gcc", "-c", str(tmp_path / f"{name}.c"), "-o", str(tmp_path / f"{name}.o")], check=True
        )
    graph = c_calls([tmp_path / "a.o", tmp_path / "b.o"])
    assert graph == {"a": {"b"}, "b": {"a"}}
    assert set(circle(graph)) == {"a", "b"}
