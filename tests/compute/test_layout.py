"""The engine's layout (DESIGN §6, docs/adding-an-algorithm.md), read from the source so it runs without a GPU:
every GPU twin mirrors a CPU module of ``compute/algorithms/`` with the same public signature and defaults,
twins never dispatch, and no module of ``compute/`` takes part in an import loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.importgraph import import_graph, loops

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


def test_compute_has_no_import_loop():
    assert loops(import_graph(COMPUTE)) == []
