"""What ``monitor/`` may import: never CuPy (``compute.backends`` probes the device), and no import loops between its
modules, counting imports inside functions too (services queue tasks by name through ``monitor.jobs``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Loops another branch of issue 13 removes; listed so this test checks every other module now. When that branch
# is merged the loop is gone and the test below fails until its entry is deleted here.
KNOWN_LOOPS = [{"monitor.alerts.services", "monitor.alerts.tasks"}]


def _modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) for every module of ``package``, migrations left out."""
    mods = {}
    for path in package.rglob("*.py"):
        if "migrations" in path.relative_to(package).parts:
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return mods


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for annotations never run)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo += node.orelse
            continue
        todo += ast.iter_child_nodes(node)


def _imported_names(module: str, is_pkg: bool, tree: ast.AST) -> list[str]:
    """Every dotted name an import statement anywhere in ``tree`` (functions included) may load at run time."""
    names = []
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names += [target] + [f"{target}.{a.name}" for a in node.names]
    return names


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports. Importing ``a.b.c`` runs ``a`` and ``a.b`` too, so
    each prefix counts, except the importer's own packages (already running when it is imported)."""
    mods = _modules(package)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for module, (path, is_pkg) in mods.items():
        for name in _imported_names(module, is_pkg, ast.parse(path.read_text())):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in mods and prefix != module and not module.startswith(prefix + "."):
                    graph[module].add(prefix)
    return graph


def loops(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan): each holds an import loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_it_finds_a_loop_through_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import y\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"} and graph["pkg.c"] == {"pkg.a"}
    assert graph["pkg.d"] == set()  # an import for annotations only never runs
    assert loops(graph) == [{"pkg.a", "pkg.sub.b"}]


def test_it_has_no_import_loops_in_monitor():
    found = sorted(sorted(c) for c in loops(import_graph(ROOT / "monitor")))
    assert found == sorted(sorted(c) for c in KNOWN_LOOPS), (
        "import loops in monitor/ (an entry of KNOWN_LOOPS that is no longer found must be deleted)"
    )


def test_the_services_never_import_the_tasks():
    graph = import_graph(ROOT / "monitor")
    services = {m for m in graph if m == "monitor.services" or m.startswith("monitor.services.")}
    assert services and all("monitor.tasks" not in graph[m] for m in services)
    assert "monitor.services" in graph["monitor.tasks"]  # the direction that stays: a task calls one service


def _cupy_imports(source: str) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return [n for n in names if n.split(".")[0] in ("cupy", "cupyx")]


def test_it_spots_a_cupy_import_inside_a_function():
    assert _cupy_imports("def f():\n    import cupy\n    from cupyx.scipy import sparse\n") == ["cupy", "cupyx.scipy"]
    assert _cupy_imports("import numpy\n# cupy is not imported here\n") == []


def test_no_module_under_monitor_imports_cupy():
    files = sorted((ROOT / "monitor").rglob("*.py"))
    assert files
    offenders = {str(p.relative_to(ROOT)): found for p in files if (found := _cupy_imports(p.read_text()))}
    assert offenders == {}
