"""The engine's layout (docs/adding-an-algorithm.md), read from the source so it runs without a GPU:
every GPU twin mirrors a CPU module of ``compute/algorithms/`` (each dispatcher, with the same signature and
defaults; a module may hold several, like ``network``), twins never dispatch, and no module of ``compute/``
takes part in an import loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.importgraph import import_graph, loops

ROOT = Path(__file__).resolve().parents[2]
COMPUTE = ROOT / "compute"
#: modules of compute/gpu/ that are helpers of the twins, not twins
GPU_HELPERS = {"__init__", "_device", "_imgpu", "_wtf_kernels", "bench"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _signature(fn: ast.FunctionDef) -> list[tuple[str, str, str | None]]:
    """(kind, name, default) of every parameter, defaults as source text."""
    a = fn.args
    positional = a.posonlyargs + a.args
    pos_defaults = [None] * (len(positional) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    out = [("positional", p.arg, d) for p, d in zip(positional, pos_defaults)]
    if a.vararg:
        out.append(("*args", a.vararg.arg, None))
    out += [("keyword", p.arg, ast.unparse(d) if d is not None else None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append(("**kwargs", a.kwarg.arg, None))
    return out


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Module-level public functions by name."""
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


def _is_dispatcher(fn: ast.FunctionDef) -> bool:
    return any(kind != "**kwargs" and name == "backend" for kind, name, _ in _signature(fn))


def twin_mismatches(cpu: ast.Module, gpu: ast.Module) -> list[str]:
    """What a twin gets wrong against its CPU module: every dispatcher (a public function with a ``backend``
    parameter) of the CPU module must be in the twin; every public function of the twin that the CPU module also
    defines must have its signature and defaults; a twin's public function with a ``backend`` parameter must be
    one of the CPU module's dispatchers (the twin's helpers, like ``device_graph``, take none)."""
    cpu_fns, gpu_fns = _functions(cpu), _functions(gpu)
    out = [
        f"{name}: missing from the twin" for name, fn in cpu_fns.items() if _is_dispatcher(fn) and name not in gpu_fns
    ]
    for name, fn in gpu_fns.items():
        if name in cpu_fns:
            if _signature(fn) != _signature(cpu_fns[name]):
                out.append(f"{name}: {_signature(fn)} != {_signature(cpu_fns[name])}")
        elif _is_dispatcher(fn):
            out.append(f"{name}: takes backend but the CPU module has no such dispatcher")
    return out


def _twins() -> list[str]:
    return sorted(p.stem for p in (COMPUTE / "gpu").glob("*.py") if p.stem not in GPU_HELPERS)


def test_it_finds_the_twins():
    assert {"forward", "backward"} <= set(_twins())


@pytest.mark.parametrize("name", _twins())
def test_every_gpu_twin_has_its_cpu_references_signature_and_defaults(name):
    cpu = COMPUTE / "algorithms" / f"{name}.py"
    assert cpu.exists(), f"compute/gpu/{name}.py has no CPU reference compute/algorithms/{name}.py"
    assert twin_mismatches(_tree(cpu), _tree(COMPUTE / "gpu" / f"{name}.py")) == []


def test_the_twin_check_sees_every_kind_of_mismatch():
    cpu = ast.parse(
        "def a(g, *, k=1, backend='auto'): ...\n"
        "def b(g, *, backend='auto'): ...\n"
        "def c(g, *, backend='auto'): ...\n"
        "def summary(d): ...\n"
        "def a_cpu(g, *, k=1): ...\n"
    )
    gpu = ast.parse(
        "def a(g, *, k=2, backend='auto'): ...\n"  # another default
        "def b(g, backend='auto'): ...\n"  # positional where the CPU has keyword-only
        "def extra(g, *, backend='auto'): ...\n"  # a dispatcher the CPU module lacks
        "def summary(d, e): ...\n"  # a shared helper with another signature
        "def device_graph(g): ...\n"  # a twin's own helper: fine
        "def _private(g, *, backend='gpu'): ...\n"  # private: not checked
    )
    found = twin_mismatches(cpu, gpu)
    assert [m.split(":")[0] for m in found] == ["c", "a", "b", "extra", "summary"]
    assert twin_mismatches(cpu, cpu) == []


def test_every_network_analysis_is_a_dispatcher_the_twin_must_mirror():
    """The network module's analyses are what compute/gpu/network.py must define (API: docs/network.md)."""
    fns = _functions(_tree(COMPUTE / "algorithms" / "network.py"))
    dispatchers = {name for name, fn in fns.items() if _is_dispatcher(fn)}
    assert dispatchers == {
        "degrees",
        "components",
        "strong_components",
        "core_numbers",
        "clustering",
        "betweenness",
        "betweenness_partial",
        "betweenness_stability",
        "conversations",
        "neighbourhood",
    }


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
