"""What ``monitor/`` may import: never CuPy (``compute.backends`` probes the device), and no import loops between its
modules, counting imports inside functions too (services queue tasks by name through ``monitor.jobs``) and those
for annotations only (``if TYPE_CHECKING:``): the models sit below the algorithms and read the algorithm registry
(``monitor.algorithm_registry``), not ``monitor.algorithms``, whose base names the models for its annotations."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.importgraph import import_graph, loops

ROOT = Path(__file__).resolve().parents[2]


def test_it_has_no_import_loops_in_monitor():
    assert loops(import_graph(ROOT / "monitor", annotations=True)) == []


def test_it_has_no_import_loops_in_frontend():
    assert loops(import_graph(ROOT / "frontend", annotations=True)) == []


def test_the_models_import_nothing_of_the_algorithms():
    graph = import_graph(ROOT / "monitor", annotations=True)
    models = {m for m in graph if m == "monitor.models" or m.startswith("monitor.models.")}
    assert models and not {a for m in models for a in graph[m] if a.startswith("monitor.algorithms")}
    assert "monitor.algorithm_registry" in graph["monitor.models.core"]  # the choices of ComputeRun.algorithm
    assert graph["monitor.algorithm_registry"] == set()


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
