"""Communities of the follower or interaction graph (issue 43, docs/network.md "Communities"): modularity
communities of its undirected simple view, found by networkit's PLM (parallel Louvain with refinement, Staudt and
Meyerhenke 2016), chosen by measurement against igraph's Leiden and leidenalg (``benchmarks/communities.md``).

* The graph: :func:`compute.graphs.undirected` (an edge wherever one account follows or interacts with the
  other, once; weights and self loops dropped).
* The partition: Louvain's moves and aggregation with PLM's refinement, optimising modularity at ``resolution``
  (1 is Newman's modularity; higher finds smaller communities), seeded with ``seed`` and run on one thread: on
  more, its threads race and the same seed gives other communities (measured), which a researcher checking a
  result cannot accept. At most :data:`MOVE_ITERATIONS` (16) passes of local moves per level, half networkit's
  default: PLM takes half the time for 0.1 % of the modularity on the goal's graph and on a graph with faint
  planted communities (``benchmarks/communities.md``, 2026-12-02); ``networkit.community.PLM(g, refine=True,
  maxIter=16)`` repeats a result.
* Communities are numbered 1, 2, ... by size descending, ties by their smallest node index, so that the numbers
  do not depend on the library's labels; an account without edges is a community of its own.
* ``modularity``: :func:`modularity` of the result, computed here (the same function checks every library).

There is no GPU twin: RAPIDS' cuGraph, the only well-kept GPU Louvain/Leiden, cannot travel to the lent GPU
machine. ``backend="gpu"`` is refused by name; ``auto`` runs on the CPU. At the ``twitter`` preset's scale 0.1
the whole CLI call took 14.6-16.2 s on a 2-core host of this project's kind with 16 move iterations (23.8-24.5 s
with networkit's 32), PLM 7.1-7.4 s of it; what surrounds the library (its input, the modularity, the community
table) is numba loops over the view's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._jit import njit
from ..backends import BACKENDS
from ..graphs import Graph, undirected

__all__ = [
    "Communities",
    "CommunityTable",
    "communities",
    "community_table",
    "edges_once",
    "modularity",
    "number_by_size",
    "upper_csr",
]

#: PLM's most passes of local moves per level (networkit's default is 32): half the time, 0.1 % of the modularity
MOVE_ITERATIONS = 16


@dataclass
class Communities:
    """``labels[i]``: node i's community (1 = the largest); ``sizes[c - 1]``: community c's accounts;
    ``modularity`` of the partition at ``resolution``; the ``seed`` it was found with."""

    labels: np.ndarray
    sizes: np.ndarray
    modularity: float
    resolution: float
    seed: int


def modularity(u: Graph, labels: np.ndarray, resolution: float = 1.0) -> float:
    """Newman's modularity of ``labels`` on the undirected simple graph ``u`` (each edge stored both ways):
    ``sum over communities c of L_c / m - resolution (d_c / 2m)^2``, with ``L_c`` the edges inside c, ``d_c`` the
    sum of its degrees and ``m`` the edges. 0 for a graph without edges."""
    labels = np.asarray(labels)
    two_m = len(u.indices)
    if two_m == 0:
        return 0.0
    _, lab = np.unique(labels, return_inverse=True)
    lab = lab.ravel()
    inside = _entries_inside(u.indptr, u.indices, lab, int(lab.max()) + 1).sum() / two_m  # sum of L_c / m
    degree_sums = np.bincount(lab, weights=np.diff(u.indptr).astype(np.float64))
    return float(inside - resolution * np.sum((degree_sums / two_m) ** 2))


@njit
def _entries_inside(indptr, indices, lab, k):
    """Per community ``c`` of ``lab`` (0 .. k-1), the stored entries (i, j) of the graph with both ends in c (each
    undirected edge is stored twice). One pass over the rows: NumPy's ``lab[src] == lab[indices]`` took 5.6 s at
    34M edges for its 0.5 GB temporaries (benchmarks/communities.md)."""
    out = np.zeros(k, np.int64)
    for i in range(len(indptr) - 1):
        c = lab[i]
        for p in range(indptr[i], indptr[i + 1]):
            if lab[indices[p]] == c:
                out[c] += 1
    return out


@dataclass
class CommunityTable:
    """Per community ``c`` (row ``c - 1`` of ``labels`` numbered 1, 2, ... by :func:`number_by_size`): its
    ``sizes`` (accounts), ``inside`` (edges with both ends in it), ``degree_sums`` (the sum of its members' degrees)
    and ``contributions``, its term ``inside / m - resolution (degree_sum / 2m)^2`` of :func:`modularity`: the
    terms add up to the partition's modularity."""

    sizes: np.ndarray
    inside: np.ndarray
    degree_sums: np.ndarray
    contributions: np.ndarray


def community_table(u: Graph, labels: np.ndarray, resolution: float = 1.0) -> CommunityTable:
    """:class:`CommunityTable` of ``labels`` (1, 2, ..., every community non-empty) on the undirected simple graph
    ``u`` (each edge stored both ways)."""
    lab = np.asarray(labels, np.int64) - 1
    k = int(lab.max()) + 1 if len(lab) else 0
    degree = np.diff(u.indptr).astype(np.int64)
    inside = _entries_inside(u.indptr, u.indices, lab, k) // 2  # each inside edge is stored twice
    degree_sums = np.bincount(lab, weights=degree, minlength=k).astype(np.int64)
    two_m = len(u.indices)
    if two_m:
        contributions = inside / (two_m / 2) - resolution * (degree_sums / two_m) ** 2
    else:
        contributions = np.zeros(k)
    return CommunityTable(np.bincount(lab, minlength=k), inside, degree_sums, contributions)


def edges_once(u: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Each edge of the undirected simple graph ``u`` once, as (a, b) with a < b, uint64 (what a library's graph
    is built from)."""
    src = np.repeat(np.arange(u.n_nodes, dtype=np.uint64), np.diff(u.indptr))
    once = src < u.indices
    return src[once], u.indices[once].astype(np.uint64)


def upper_csr(u: Graph):
    """Each edge of the undirected simple graph ``u`` once (row a, column b > a) as a SciPy CSR matrix of ones, built
    from ``u``'s own rows without a conversion: what networkit builds its graph from ten times faster than from the
    edge list (0.27 against 2.20 s for 3.4M edges, 6.9 against 36.8 s for 34.2M; the same graph and communities,
    ``benchmarks/communities.md``)."""
    from scipy.sparse import csr_matrix

    indptr, cols = _upper_rows(u.indptr, u.indices)
    return csr_matrix((np.ones(len(cols)), cols, indptr), shape=(u.n_nodes, u.n_nodes))


@njit
def _upper_rows(indptr, indices):
    """Row by row, the entries (i, j) with j > i, in the rows' order: (indptr, columns as int64). Two passes over
    the rows, counting then filling (NumPy's ``repeat`` and mask took 4.3-5.6 s at 34M edges)."""
    n = len(indptr) - 1
    out_ptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        kept = 0
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] > i:
                kept += 1
        out_ptr[i + 1] = out_ptr[i] + kept
    cols = np.empty(out_ptr[n], np.int64)
    for i in range(n):
        q = out_ptr[i]
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] > i:
                cols[q] = indices[p]
                q += 1
    return out_ptr, cols


def number_by_size(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``labels`` renumbered 1, 2, ... by community size descending, ties by the community's smallest node;
    returns (labels, sizes)."""
    _, lab = np.unique(np.asarray(labels), return_inverse=True)
    lab = lab.ravel()
    sizes = np.bincount(lab)
    first = np.full(len(sizes), len(lab), dtype=np.int64)
    np.minimum.at(first, lab, np.arange(len(lab)))
    order = np.lexsort((first, -sizes))
    rank = np.empty(len(sizes), dtype=np.int64)
    rank[order] = np.arange(1, len(sizes) + 1)
    return rank[lab], sizes[order]


def _check(seed, resolution) -> tuple[int, float]:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, not {seed!r}")
    if isinstance(resolution, bool) or not isinstance(resolution, (int, float, np.floating)) or not resolution > 0:
        raise ValueError(f"resolution must be a number > 0, not {resolution!r}")
    return int(seed), float(resolution)


def communities(g: Graph, *, seed: int = 0, resolution: float = 1.0, backend: str = "auto") -> Communities:
    """The modularity communities of ``g``'s undirected simple view (module docstring)."""
    seed, resolution = _check(seed, resolution)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if backend == "gpu":
        raise ValueError("communities have no GPU twin (benchmarks/communities.md): use backend='cpu' or 'auto'")
    return communities_cpu(g, seed=seed, resolution=resolution)


def communities_cpu(g: Graph, *, seed: int = 0, resolution: float = 1.0) -> Communities:
    """The reference: networkit's PLM with refinement and :data:`MOVE_ITERATIONS` on the undirected simple view,
    on one thread."""
    import networkit as nk

    u = undirected(g)
    threads = nk.getMaxNumberOfThreads()
    nk.setNumberOfThreads(1)  # on more, its threads race and a seed no longer gives one result
    nk.setSeed(seed, False)
    try:
        graph = nk.GraphFromCsr(upper_csr(u), directed=False)
        plm = nk.community.PLM(graph, refine=True, gamma=resolution, maxIter=MOVE_ITERATIONS)
        plm.run()
        found = np.asarray(plm.getPartition().getVector())
    finally:
        nk.setNumberOfThreads(threads)
    labels, sizes = number_by_size(found)
    return Communities(labels, sizes, modularity(u, labels, resolution), resolution, seed)
