"""The import-graph reader the layout tests rely on (tests/importgraph.py)."""

from __future__ import annotations

from tests.importgraph import import_graph, loops


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
    assert import_graph(pkg, annotations=True)["pkg.d"] == {"pkg.c"}


def test_with_annotations_it_finds_a_loop_that_only_a_type_checker_follows(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text("from .base import choices\n")
    (pkg / "base.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .models import Run\n")
    assert loops(import_graph(pkg)) == []
    assert loops(import_graph(pkg, annotations=True)) == [{"pkg.models", "pkg.base"}]
