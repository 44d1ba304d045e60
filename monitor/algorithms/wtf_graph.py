"""Who amplifies whom's pieces below the compute-run algorithm (``monitor.algorithms.wtf``): the workspace's
follower graph read once per data version, a seed's result over ``Account`` pks, and an account page's two panels
computed when it opens (docs/wtf.md, "Computed when the page opens"). Apart from the algorithm so that the
selectors can compute the panels without importing it (it reads the selectors to resolve a publisher's
spreaders)."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..models import Account, Workspace
from ..models.wtf import DIRECTIONS

__all__ = ["DEFAULT_CIRCLE", "DEFAULT_MAX_ITER", "DEFAULT_TOP", "LoadedGraph", "OnOpen", "SeedResult",
           "compute_on_open", "load_graph"]  # fmt: skip

DEFAULT_CIRCLE = 1000
DEFAULT_TOP = 20
#: the engine's cap; PageRank's L1 change shrinks at least 0.85 times per iteration from at most 2, so it is below
#: the tolerance of 1e-10 after at most 147 iterations whatever the graph (docs/wtf.md): 150 always converges it
DEFAULT_MAX_ITER = 100


# --- the graph, read once per data version -----------------------------------------------------------------------


@dataclass(eq=False)
class LoadedGraph:
    """The workspace's follower graph (``compute.graphs.Graph`` over ``Account`` pks) and its fingerprint."""

    graph: object
    fingerprint: str


_GRAPHS_KEEP = 2  # a worker serves one workspace at a time, mostly; the graph of a big one is most of its memory
_GRAPHS: OrderedDict[tuple, LoadedGraph] = OrderedDict()


def load_graph(ws: Workspace) -> LoadedGraph:
    """The follower graph of ``ws`` as the data is now, read once per data version by each process. A read:
    keeping it is this process's memory, not a write."""
    from ..cache import current_version

    key = (ws.pk, current_version(ws))
    hit = _GRAPHS.get(key)
    if hit is not None:
        _GRAPHS.move_to_end(key)
        return hit
    from compute.graphs import Graph

    from ..graph_files import follower_csr

    csr, _ = follower_csr(ws.pk)  # mapped from this machine's one copy (monitor/graph_files.py)
    g = Graph(csr.ids, csr.indptr, csr.indices)
    loaded = LoadedGraph(g, _fingerprint(g))
    _GRAPHS[key] = loaded
    while len(_GRAPHS) > _GRAPHS_KEEP:
        _GRAPHS.popitem(last=False)
    return loaded


def _fingerprint(g) -> str:
    """A name for the graph's content: two reads of the same follows give the same one."""
    h = hashlib.sha1()
    for a in (g.ids, g.indptr, g.indices):
        h.update(np.ascontiguousarray(a, dtype="<i8").tobytes())
    return h.hexdigest()


# --- one account's panels, computed when its page opens ----------------------------------------------------------


@dataclass
class OnOpen:
    """One seed's results in each direction computed now (:func:`compute_on_open`), or ``results`` None when the
    graph has more follows than ``max_edges`` (``n_edges`` is then ``max_edges + 1``: not counted further)."""

    n_nodes: int
    n_edges: int
    fingerprint: str
    results: dict[str, SeedResult] | None
    seconds: float = 0.0


def compute_on_open(ws: Workspace, account: Account, *, max_edges: int) -> OnOpen:
    """``account``'s results in both directions, with a run's defaults (circle, K, iteration cap) and the exact
    method on the CPU, when the workspace's follower graph has at most ``max_edges`` follows (the page's budget:
    the exact method's work is the follows times its iterations, which depend on the graph: 17-19 on the
    generated ``twitter`` graph, up to the cap of 100 on the web benchmark's, benchmarks/wtf_on_open.md). A read: the
    account page shows them without a run and keeps them only in the data-version cache."""
    t = time.perf_counter()
    n_edges = _follows_up_to(ws, max_edges)
    if n_edges > max_edges:  # before reading the graph: its fingerprint alone reads every follow
        return OnOpen(n_nodes=0, n_edges=n_edges, fingerprint="", results=None)
    loaded = load_graph(ws)
    g = loaded.graph
    out = OnOpen(n_nodes=g.n_nodes, n_edges=g.n_edges, fingerprint=loaded.fingerprint, results=None)
    from compute.algorithms.wtf import wtf

    out.results = {}
    idx = g.index_of(np.asarray([account.pk], dtype=np.int64))
    for direction in DIRECTIONS:
        if idx[0] < 0:
            out.results[direction] = SeedResult(seed=account.pk, direction=direction, in_graph=False)
            continue
        (rec,) = wtf(
            g,
            idx,
            direction=direction,
            circle=DEFAULT_CIRCLE,
            top=DEFAULT_TOP,
            max_iter=DEFAULT_MAX_ITER,
            backend="cpu",
        )
        out.results[direction] = _seed_result(rec, g, direction)
    out.seconds = time.perf_counter() - t
    return out


def _follows_up_to(ws: Workspace, most: int) -> int:
    """The workspace's follows, or ``most + 1`` where there are more: read from this machine's graph file of the
    current version (mapped: free), else counted from the rows, stopping after ``most + 1``, so that a page never
    pays for more than its budget of follows."""
    from django.db import connection

    from ..graph_files import follows_token, load

    with connection.cursor() as cur:
        csr = load(ws.pk, follows_token(cur, ws.pk))
        if csr is not None:
            return min(csr.n_edges, most + 1)
        cur.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM monitor_follow WHERE workspace_id = %s LIMIT %s) f", [ws.pk, most + 1]
        )
        return int(cur.fetchone()[0])


# --- a seed's result ----------------------------------------------------------------------------------------------


@dataclass
class SeedResult:
    """One seed's result in one direction, its lists as ``Account`` pks, until it is stored."""

    seed: int
    direction: str
    in_graph: bool
    circle_size: int = 0
    ppr_iterations: int = 0
    ppr_converged: bool = True
    money_iterations: int = 0
    money_converged: bool = True
    # list name -> (account pks, scores, ppr), in the engine's order
    lists: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)


def _seed_result(rec, g, direction: str) -> SeedResult:
    """An engine ``Recommendations`` as a :class:`SeedResult` over ``Account`` pks."""
    ids = np.asarray(g.ids, dtype=np.int64)
    lists = {}
    for name in ("relevance", "similarity"):
        idx = np.asarray(getattr(rec, name), dtype=np.int64)
        lists[name] = (
            ids[idx],
            np.asarray(getattr(rec, f"{name}_score"), dtype=np.float64),
            np.asarray(getattr(rec, f"{name}_ppr"), dtype=np.float64),
        )
    return SeedResult(
        seed=int(rec.account),
        direction=direction,
        in_graph=True,
        circle_size=len(rec.circle),
        ppr_iterations=int(rec.iterations),
        ppr_converged=bool(rec.converged),
        money_iterations=int(rec.money_iterations),
        money_converged=bool(rec.money_converged),
        lists=lists,
    )
