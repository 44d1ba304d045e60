"""No import loop among the modules of ``monitor.alerts``: every import is read from the source (module level
and inside functions alike), so a loop hidden in a function-level import is found too."""

from __future__ import annotations

import ast
from pathlib import Path

import monitor.alerts

PACKAGE = "monitor.alerts"
FOLDER = Path(monitor.alerts.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(FOLDER).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([PACKAGE, *parts])


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of the package that ``path`` imports, anywhere in it."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # ``from . import services`` names a module; ``from .models import Alert`` names the module itself
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        found |= {t for t in targets if t in modules and t != name}
    return found


def _graph() -> dict[str, set[str]]:
    paths = [p for p in FOLDER.rglob("*.py") if "migrations" not in p.parts]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_it_reads_the_imports_it_needs_to_see():
    graph = _graph()
    assert "monitor.alerts.services" in graph["monitor.alerts.tasks"]
    assert "monitor.alerts.webhook_task" in graph["monitor.alerts.services"]


def test_it_finds_a_loop_when_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_alerts_modules_import_no_loop():
    assert _cycle(_graph()) is None
