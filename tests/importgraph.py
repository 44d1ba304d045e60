"""Reading a package's imports from its source: every ``import`` statement, at module level and inside
functions alike (``if TYPE_CHECKING:`` blocks left out, as they never run, unless ``annotations``), as a graph of
the package's modules, and the import loops in it. The layout tests of ``compute/`` and ``monitor/`` use it; it
needs neither Django nor CuPy."""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["import_graph", "loops"]


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


def _runtime_nodes(tree: ast.AST, annotations: bool = False):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for annotations never run), or
    every node with ``annotations``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if (
            not annotations
            and isinstance(node, ast.If)
            and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        ):
            todo += node.orelse
            continue
        todo += ast.iter_child_nodes(node)


def _imported_names(module: str, is_pkg: bool, tree: ast.AST, annotations: bool = False) -> list[str]:
    """Every dotted name an import statement anywhere in ``tree`` (functions included) may load at run time."""
    names = []
    for node in _runtime_nodes(tree, annotations):
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


def import_graph(package: Path, *, annotations: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports. Importing ``a.b.c`` runs ``a`` and ``a.b`` too, so
    each prefix counts, except the importer's own packages (already running when it is imported). With
    ``annotations`` the imports under ``if TYPE_CHECKING:`` count too: a loop that only a type checker follows
    still ties its modules together."""
    mods = _modules(package)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for module, (path, is_pkg) in mods.items():
        for name in _imported_names(module, is_pkg, ast.parse(path.read_text()), annotations):
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
