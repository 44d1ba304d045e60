"""The engine's layout (DESIGN §6, docs/adding-an-algorithm.md), read from the source so it runs without a GPU:
every GPU twin mirrors a CPU module of ``compute/algorithms/`` with the same public signature and defaults,
twins never dispatch, and no module of ``compute/`` takes part in an import loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPUTE = ROOT / "compute"
#: modules of compute/gpu/ that are helpers of the twins, not twins
GPU_HELPERS = {"__init__", "_device", "bench"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _function(path: Path, name: str) -> ast.FunctionDef:
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"{path.relative_to(ROOT)} defines no function {name!r}")


def _signature(fn: ast.FunctionDef) -> list[tuple[str, str, str | None]]:
    """(kind, name, default) of every parameter, defaults as source text."""
    a = fn.args
    positional = a.posonlyargs + a.args
    pos_defaults = [None] * (len(positional) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    out = [("positional", p.arg, d) for p, d in zip(positional, pos_defaults)]
    if a.vararg:
        out.append(("*args", a.vararg.arg, None))
    out += [
        ("keyword", p.arg, ast.unparse(d) if d is not None else None)
        for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    if a.kwarg:
        out.append(("**kwargs", a.kwarg.arg, None))
    return out


def _twins() -> list[str]:
    return sorted(p.stem for p in (COMPUTE / "gpu").glob("*.py") if p.stem not in GPU_HELPERS)


def test_it_finds_the_twins():
    assert {"forward", "backward"} <= set(_twins())


@pytest.mark.parametrize("name", _twins())
def test_every_gpu_twin_has_its_cpu_references_signature_and_defaults(name):
    cpu = COMPUTE / "algorithms" / f"{name}.py"
    assert cpu.exists(), f"compute/gpu/{name}.py has no CPU reference compute/algorithms/{name}.py"
    assert _signature(_function(COMPUTE / "gpu" / f"{name}.py", name)) == _signature(_function(cpu, name))


@pytest.mark.parametrize("name", _twins())
def test_a_twin_never_dispatches_or_imports_the_cpu_floor(name):
    tree = _tree(COMPUTE / "gpu" / f"{name}.py")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            assert "algorithms" not in module, f"compute/gpu/{name}.py imports {module}"
            assert "backends" not in module, f"compute/gpu/{name}.py imports {module}: only dispatchers choose"
        if isinstance(node, ast.Name):
            assert node.id != "resolve_backend", f"compute/gpu/{name}.py dispatches"


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``module`` imports anywhere in its body (function-level imports count)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for n in names:
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n and n != module:
                found.add(n)
    return found


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    files = {_module_name(p, package_dir.parent): p for p in package_dir.rglob("*.py")}
    known = set(files)
    return {m: _imports(p, m, known) for m, p in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop of ``graph`` (a package importing its own submodules is not one), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if n.startswith(m + "."):  # a package's __init__ importing its own submodule
                continue
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_compute_has_no_import_loop():
    cycle = find_cycle(import_graph(COMPUTE))
    assert cycle is None, " -> ".join(cycle)


def test_the_loop_finder_finds_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"p": {"p.x"}, "p.x": {"q"}, "q": set()}) is None
