"""Coordinated accounts' downloads (docs/coordination.md): a run's edges as CSV or JSON — the JSON is what
``python -m compute coordination --output json`` prints for the same retweets, row for row — and its
coordination graph (or one cluster's) as GEXF or GraphML, undirected, each account carrying its cluster. Generators
of ``str`` chunks like :mod:`monitor.exports`; Twitter ids are strings in JSON (JavaScript loses digits past
2**53)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from . import selectors
from .exports import _gexf, _graphml, _subgraph
from .models import ComputeRun, Workspace

EDGE_COLUMNS = ("a", "b", "weight", "cluster")
EDGE_MEANING = {
    "co-retweet": "An edge joins two accounts that retweeted the same tweets within the window (weight: how many).",
    "similarity": "An edge joins two accounts that retweeted similar tweets (weight: the cosine of their idf vectors).",
}
CHUNK = 5000


def _weight(method: str, w: float):
    return int(w) if method == "co-retweet" else float(w)


def edges_csv(run: ComputeRun) -> Iterator[str]:
    """Every edge of the run in the engine's order: ``a,b,weight,cluster`` (Twitter ids; co-retweet weights as
    whole counts, similarity weights as cosines)."""
    method = run.params.get("method", "co-retweet")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(EDGE_COLUMNS)
    for n, (a, b, weight, k) in enumerate(selectors.coordination_edge_rows(run), 1):
        w.writerow([int(a), int(b), repr(_weight(method, weight)), int(k)])
        if n % CHUNK == 0:
            yield buf.getvalue()
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
    yield buf.getvalue()


def edges_json(run: ComputeRun) -> Iterator[str]:
    """Every edge of the run as the command line's JSON: ``[{"a": "<id>", "b": "<id>", "weight": w, "cluster":
    k}, ...]``."""
    method = run.params.get("method", "co-retweet")
    yield "["
    for n, (a, b, weight, k) in enumerate(selectors.coordination_edge_rows(run)):
        row = {"a": str(a), "b": str(b), "weight": _weight(method, weight), "cluster": int(k)}
        yield ("" if n == 0 else ", ") + json.dumps(row)
    yield "]\n"


def graph(ws: Workspace, run: ComputeRun, *, fmt: str, cluster: int | None = None) -> Iterator[str]:
    """The run's coordination graph, or one cluster's, as GEXF 1.3 or GraphML: undirected, weighted, each account
    with its cluster (an integer attribute) and its edges."""
    sub = selectors.coordination_graph(ws, run, cluster=cluster)
    method = run.params.get("method", "co-retweet")
    what = f"cluster {cluster}" if cluster is not None else "every cluster"
    edge = EDGE_MEANING[method]
    g = _subgraph(sub, description=f"Coordinated accounts of run {run.pk} ({method}), {what}. {edge}")
    g.directed = False
    g.weight_type = "int" if method == "co-retweet" else "double"
    return _gexf(g) if fmt == "gexf" else _graphml(g)


__all__ = ["EDGE_COLUMNS", "edges_csv", "edges_json", "graph"]
