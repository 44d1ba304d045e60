"""Graphs for the network analytics (GraphCT, issue 14): one structure shared by the CPU reference
(:mod:`compute.algorithms.network`) and its GPU twin (:mod:`compute.gpu.network`).

* :class:`Graph` — a graph over dense node indices in CSR, with each node's external id (a Twitter user id).
  Directed graphs keep self loops; no graph has multi-edges (duplicates are merged, their weights summed).
  ``directed=False`` marks the *undirected view*: symmetric, simple (no self loops).
* Builders: :func:`graph_from_edges`, :func:`follower_graph` (follower -> followee), :func:`interaction_graph`
  (retweeter -> retweeted author, weighted), and the views :func:`undirected`, :func:`reciprocal`,
  :func:`subgraph`.
* What both engines must do alike lives here too: the result types, argument checks, the ordering of
  components (:func:`ordered_components`), the choice of betweenness sources (:func:`betweenness_sources`,
  per-component sampling) and the fixed-grid rounding that makes sampled betweenness add up bitwise over any
  split of its sources into whole :data:`SOURCE_BLOCK` blocks (:func:`betweenness_grid`).

NumPy only at import time (numba through :mod:`compute._jit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._jit import njit
from .arrays import unique

__all__ = [
    "DEFAULT_BETWEENNESS_SAMPLES",
    "DIRECTIONS",
    "SOURCE_BLOCK",
    "Betweenness",
    "Clustering",
    "Components",
    "Conversations",
    "Degrees",
    "Graph",
    "Neighbourhood",
    "SourcePlan",
    "betweenness_grid",
    "betweenness_plan",
    "betweenness_sources",
    "check_depth",
    "check_direction",
    "check_graph",
    "check_node",
    "check_samples",
    "check_seed",
    "check_sources",
    "clustering_from_triangles",
    "follower_graph",
    "graph_from_edges",
    "interaction_graph",
    "ordered_components",
    "per_graph",
    "reciprocal",
    "subgraph",
    "top_overlap",
    "transpose",
    "undirected",
    "weak_component_labels",
]

#: betweenness sums its sources in fixed blocks of this many, block by block in order, so the result for a seed
#: is bitwise the same on one worker or many (each batch = whole blocks)
SOURCE_BLOCK = 64

#: betweenness's sampled sources unless asked otherwise, the web form's and the CLI's alike (0 = exact: every node
#: a source, so the time grows with nodes x edges instead of 256 x edges)
DEFAULT_BETWEENNESS_SAMPLES = 256

#: the hops :func:`compute.algorithms.network.neighbourhood` may follow
DIRECTIONS = ("out", "in", "both")


def _index_dtype(n: int):
    return np.int32 if n < 2**31 else np.int64


# --------------------------------------------------------------------------------------------------------------
# The graph
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Graph:
    """A graph over dense node indices 0..n-1. ``ids[i]`` is node i's external id (a Twitter user id), sorted
    ascending (so lookups are a searchsorted). Out-adjacency in CSR: the targets of node i are
    ``indices[indptr[i]:indptr[i+1]]``, sorted ascending within each row. ``weights`` (float64, same length as
    indices, or None) count interactions (retweets) for the interaction graph. ``directed`` False means the
    adjacency is symmetric, simple (no self loops, no multi-edges): the undirected view."""

    ids: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray | None = None
    directed: bool = True
    #: (indptr, indices, edge permutation) of the reverse graph, built on first use by :func:`transpose`
    _transposed: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        ids = np.ascontiguousarray(np.asarray(self.ids, dtype=np.int64))
        indptr = np.ascontiguousarray(np.asarray(self.indptr, dtype=np.int64))
        n = len(ids)
        indices = np.ascontiguousarray(np.asarray(self.indices, dtype=_index_dtype(n)))
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        if self.weights is not None:
            object.__setattr__(self, "weights", np.ascontiguousarray(np.asarray(self.weights, dtype=np.float64)))
        object.__setattr__(self, "directed", bool(self.directed))
        if ids.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1:
            raise ValueError("ids, indptr and indices must be 1-D arrays")
        if len(indptr) != n + 1:
            raise ValueError(f"indptr has length {len(indptr)}, expected n+1={n + 1}")
        if indptr[0] != 0 or indptr[-1] != len(indices) or np.any(np.diff(indptr) < 0):
            raise ValueError("indptr must start at 0, never decrease and end at the number of edges")
        if n > 1 and np.any(np.diff(ids) <= 0):
            raise ValueError("ids must be strictly increasing")
        if self.weights is not None and len(self.weights) != len(indices):
            raise ValueError(f"weights has length {len(self.weights)}, expected m={len(indices)}")
        if len(indices) and (indices.min() < 0 or indices.max() >= n):
            raise ValueError("indices must be node indices 0..n-1")
        bad = _first_unsorted(indptr, indices, not self.directed)
        if bad >= 0:
            what = "strictly ascending with no self loop" if not self.directed else "strictly ascending"
            raise ValueError(f"row {bad} of the adjacency is not {what}")

    @property
    def n_nodes(self) -> int:
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        """Stored (directed) edges: an undirected graph stores each edge twice, once per direction."""
        return len(self.indices)

    @property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    @property
    def in_degree(self) -> np.ndarray:
        return np.bincount(self.indices, minlength=self.n_nodes).astype(np.int64)

    @property
    def nbytes(self) -> int:
        extra = 0 if self.weights is None else self.weights.nbytes
        return self.ids.nbytes + self.indptr.nbytes + self.indices.nbytes + extra

    def index_of(self, ids) -> np.ndarray:
        """Node index of each external id, ``-1`` where the id is not in the graph."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.ids):
            return np.full(ids.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[pos] == ids, pos, -1).astype(np.int64)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) node indices of every stored edge, in CSR order."""
        src = np.repeat(np.arange(self.n_nodes, dtype=self.indices.dtype), self.out_degree)
        return src, self.indices


@njit
def _first_unsorted(indptr, indices, simple):
    for i in range(len(indptr) - 1):
        for e in range(indptr[i] + 1, indptr[i + 1]):
            if indices[e] <= indices[e - 1]:
                return i
        if simple:
            for e in range(indptr[i], indptr[i + 1]):
                if indices[e] == i:
                    return i
    return -1


# --------------------------------------------------------------------------------------------------------------
# Builders and views
# --------------------------------------------------------------------------------------------------------------


def per_graph(cache, g: Graph, key, make):
    """``make(g, key)``, made once per graph and key and kept in ``cache`` (a ``weakref.WeakKeyDictionary``: the
    value goes with its graph), so that the requests of a worker on one graph share it."""
    values = cache.setdefault(g, {})
    if key not in values:
        values[key] = make(g, key)
    return values[key]


def graph_from_edges(src_ids, dst_ids, *, weights=None, ids=None, directed: bool = True) -> Graph:
    """A graph from edges given by external id. ``weights`` None: duplicate edges are dropped and the graph has
    no weights; given: duplicates are merged into one edge whose weight is their sum. Directed graphs keep self
    loops; ``directed=False`` builds the undirected view (symmetric, no self loops, no weights: pass none).
    ``ids`` adds nodes with no edge."""
    s = np.asarray(src_ids, dtype=np.int64).ravel()
    d = np.asarray(dst_ids, dtype=np.int64).ravel()
    if s.shape != d.shape:
        raise ValueError(f"src_ids and dst_ids differ in length ({len(s)} and {len(d)})")
    w = None
    if weights is not None:
        if not directed:
            raise ValueError("weights: the undirected view carries no weights (build it directed, then undirected())")
        w = np.asarray(weights, dtype=np.float64).ravel()
        if w.shape != s.shape:
            raise ValueError(f"weights has length {len(w)}, expected one per edge ({len(s)})")
        if not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
    parts = [s, d] if ids is None else [s, d, np.asarray(ids, dtype=np.int64).ravel()]
    node_ids = unique(np.concatenate(parts))
    n = len(node_ids)
    a = np.searchsorted(node_ids, s)
    b = np.searchsorted(node_ids, d)
    if not directed:
        keep = a != b
        a, b = np.concatenate([a[keep], b[keep]]), np.concatenate([b[keep], a[keep]])
    key = a * np.int64(max(n, 1)) + b
    if w is None:
        key = unique(key)
        wout = None
    else:
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        wout = np.add.reduceat(w[order], first) if len(key) else np.zeros(0, np.float64)
        key = key[first]
    src = key // max(n, 1)
    dst = key - src * max(n, 1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return Graph(node_ids, indptr, dst.astype(_index_dtype(n)), wout, directed=directed)


def follower_graph(graph) -> Graph:
    """The follower graph (a :class:`compute.structures.FollowerGraph`) as a :class:`Graph`: edge follower ->
    followee, as its friends CSR stores it (no copy)."""
    return Graph(graph.user_ids, graph.friends_indptr, graph.friends_indices)


def interaction_graph(retweeter_ids, author_ids, *, spreading_src=None, spreading_dst=None) -> Graph:
    """The interaction graph: retweeter -> retweeted author, weight = number of retweets (self retweets dropped);
    optional spreading edges ``(v, u)`` of computed cascades (``v`` got the tweet from ``u``), as external ids,
    add weight 1 each."""
    r = np.asarray(retweeter_ids, dtype=np.int64).ravel()
    a = np.asarray(author_ids, dtype=np.int64).ravel()
    if r.shape != a.shape:
        raise ValueError(f"retweeter_ids and author_ids differ in length ({len(r)} and {len(a)})")
    if (spreading_src is None) != (spreading_dst is None):
        raise ValueError("spreading_src and spreading_dst go together")
    if spreading_src is not None:
        ss = np.asarray(spreading_src, dtype=np.int64).ravel()
        sd = np.asarray(spreading_dst, dtype=np.int64).ravel()
        if ss.shape != sd.shape:
            raise ValueError(f"spreading_src and spreading_dst differ in length ({len(ss)} and {len(sd)})")
        r, a = np.concatenate([r, ss]), np.concatenate([a, sd])
    keep = r != a
    return graph_from_edges(r[keep], a[keep], weights=np.ones(int(keep.sum())))


def transpose(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, perm) of the reverse graph: row j lists, ascending, the nodes with an edge to j, and
    ``perm[k]`` is the position in ``g.indices`` of the k-th reverse edge. Cached on ``g``."""
    if g._transposed is None:
        indptr_t, indices_t, perm = _transpose_kernel(g.indptr, g.indices, g.n_nodes)
        object.__setattr__(g, "_transposed", (indptr_t, indices_t, perm))
    return g._transposed


@njit
def _transpose_kernel(indptr, indices, n):
    """Counting sort by target; sources are visited in ascending order, so each reverse row comes out sorted."""
    m = len(indices)
    indptr_t = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        indptr_t[indices[e] + 1] += 1
    for i in range(n):
        indptr_t[i + 1] += indptr_t[i]
    fill = indptr_t[:-1].copy()
    indices_t = np.empty(m, dtype=indices.dtype)  # int32 for n < 2**31: half the memory of int64
    perm = np.empty(m, dtype=np.int64)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            k = fill[v]
            indices_t[k] = u
            perm[k] = e
            fill[v] = k + 1
    return indptr_t, indices_t, perm


def undirected(g: Graph) -> Graph:
    """The undirected simple view: an edge between u and v wherever u -> v or v -> u (u != v), stored in both
    directions; weights dropped. ``g`` itself when it is undirected already."""
    if not g.directed:
        return g
    indptr_t, indices_t, _ = transpose(g)
    indptr, indices = _merge_rows(g.indptr, g.indices, indptr_t, indices_t, g.n_nodes, False)
    return Graph(g.ids, indptr, indices.astype(_index_dtype(g.n_nodes)), None, directed=False)


def reciprocal(g: Graph) -> Graph:
    """A directed graph keeping u -> v only where v -> u exists too (self loops dropped); weights are the smaller
    of the two directions' weights (None if ``g`` has none). Symmetric by construction."""
    indptr_t, indices_t, perm = transpose(g)
    indptr, indices = _merge_rows(g.indptr, g.indices, indptr_t, indices_t, g.n_nodes, True)
    weights = None
    if g.weights is not None:
        weights = _reciprocal_weights(g.indptr, g.indices, g.weights, indptr_t, indices_t, perm, indptr, indices)
    return Graph(g.ids, indptr, indices.astype(_index_dtype(g.n_nodes)), weights, directed=True)


@njit
def _merge_rows(indptr_a, indices_a, indptr_b, indices_b, n, intersect):
    """Per row, the sorted union (``intersect`` False) or intersection of two sorted rows, without the row's own
    node. Two passes, counting then filling, so the output is allocated once."""
    counts = np.zeros(n + 1, dtype=np.int64)
    for fill in range(2):
        if fill:
            for i in range(n):
                counts[i + 1] += counts[i]
            out = np.empty(counts[n], dtype=indices_a.dtype)
        else:
            out = np.empty(0, dtype=indices_a.dtype)
        for i in range(n):
            p, pe = indptr_a[i], indptr_a[i + 1]
            q, qe = indptr_b[i], indptr_b[i + 1]
            k = counts[i] if fill else 0
            while p < pe or q < qe:
                if q >= qe or (p < pe and indices_a[p] < indices_b[q]):
                    x = indices_a[p]
                    p += 1
                    take = not intersect
                elif p >= pe or indices_b[q] < indices_a[p]:
                    x = indices_b[q]
                    q += 1
                    take = not intersect
                else:
                    x = indices_a[p]
                    p += 1
                    q += 1
                    take = True
                if take and x != i:
                    if fill:
                        out[k] = x
                    k += 1
            if not fill:
                counts[i + 1] = k
    return counts, out


@njit
def _reciprocal_weights(indptr, indices, weights, indptr_t, indices_t, perm, rindptr, rindices):
    """min(w(u -> v), w(v -> u)) for every reciprocal edge u -> v: both rows are sorted, so one merge each."""
    out = np.empty(len(rindices), dtype=np.float64)
    for u in range(len(rindptr) - 1):
        p = indptr[u]
        q = indptr_t[u]
        for k in range(rindptr[u], rindptr[u + 1]):
            v = rindices[k]
            while indices[p] != v:
                p += 1
            while indices_t[q] != v:
                q += 1
            out[k] = min(weights[p], weights[perm[q]])
    return out


def subgraph(g: Graph, nodes) -> Graph:
    """The subgraph induced on node indices ``nodes`` (duplicates ignored). Nodes keep their relative order, so
    the new ids stay ascending; weights and directedness carry over."""
    nodes = unique(np.asarray(nodes, dtype=np.int64).ravel())
    if len(nodes) and (nodes[0] < 0 or nodes[-1] >= g.n_nodes):
        raise ValueError(f"nodes must be node indices 0..{g.n_nodes - 1}")
    new = np.full(g.n_nodes, -1, dtype=np.int64)
    new[nodes] = np.arange(len(nodes))
    has_w = g.weights is not None
    w = g.weights if has_w else np.zeros(0, np.float64)
    indptr, indices, weights = _subgraph_kernel(g.indptr, g.indices, w, has_w, nodes, new)
    return Graph(
        g.ids[nodes],
        indptr,
        indices.astype(_index_dtype(len(nodes))),
        weights if has_w else None,
        directed=g.directed,
    )


@njit
def _subgraph_kernel(indptr, indices, weights, has_w, nodes, new):
    k = len(nodes)
    out_ptr = np.zeros(k + 1, dtype=np.int64)
    for r in range(k):
        u = nodes[r]
        c = 0
        for e in range(indptr[u], indptr[u + 1]):
            if new[indices[e]] >= 0:
                c += 1
        out_ptr[r + 1] = out_ptr[r] + c
    out = np.empty(out_ptr[k], dtype=indices.dtype)
    out_w = np.empty(out_ptr[k] if has_w else 0, dtype=np.float64)
    for r in range(k):
        u = nodes[r]
        j = out_ptr[r]
        for e in range(indptr[u], indptr[u + 1]):
            x = new[indices[e]]
            if x >= 0:
                out[j] = np.int64(x)
                if has_w:
                    out_w[j] = weights[e]
                j += 1
    return out_ptr, out, out_w


# --------------------------------------------------------------------------------------------------------------
# Result types (the CPU reference and the GPU twin return the same ones)
# --------------------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Degrees:
    """In- and out-degree per node. For the follower graph (follower -> followee) in-degree counts followers
    and out-degree followees; on an undirected graph the two are equal."""

    in_degree: np.ndarray  # int64[n]
    out_degree: np.ndarray  # int64[n]


@dataclass(eq=False)
class Components:
    """``labels[i]``: node i's component, 0 = the largest, then by size descending, ties by smallest node;
    ``sizes[c]``: nodes in component c (descending)."""

    labels: np.ndarray  # int64[n]
    sizes: np.ndarray  # int64[k]

    @property
    def n_components(self) -> int:
        return len(self.sizes)

    def nodes(self, component: int) -> np.ndarray:
        """Node indices (ascending) of ``component``."""
        return np.flatnonzero(self.labels == component)


@dataclass(eq=False)
class Clustering:
    """networkx's ``clustering`` (``local``, 0 where degree < 2) and ``transitivity`` on the undirected view,
    with the triangles through each node they are computed from."""

    local: np.ndarray  # float64[n]
    triangles: np.ndarray  # int64[n]
    transitivity: float


@dataclass(eq=False)
class Betweenness:
    """networkx's ``betweenness_centrality(undirected, normalized=False)`` when ``exact``; the unbiased estimate
    of it from ``sources`` otherwise."""

    values: np.ndarray  # float64[n]
    sources: np.ndarray  # int64: the sources used
    exact: bool
    samples: int  # as asked
    seed: int
    notes: list[str] = field(default_factory=list)


@dataclass(eq=False)
class Conversations:
    """The reciprocated part of a graph (GraphCT's conversations) and its weak components."""

    graph: Graph
    nodes_before: int
    edges_before: int
    nodes_after: int
    edges_after: int
    components: Components


@dataclass(eq=False)
class Neighbourhood:
    """The subgraph induced on the nodes within ``depth`` hops of a node, and each one's distance (0 for it)."""

    graph: Graph
    distance: np.ndarray  # int64 per node of graph


# --------------------------------------------------------------------------------------------------------------
# Argument checks (ValueError naming the parameter)
# --------------------------------------------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_graph(g) -> None:
    if not isinstance(g, Graph):
        raise ValueError(f"g must be a compute.graphs.Graph, not {type(g).__name__}")


def check_samples(samples) -> None:
    if not _is_int(samples) or samples < 0:
        raise ValueError(f"samples must be an integer >= 0 (0 = exact), not {samples!r}")


def check_seed(seed) -> None:
    if not _is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, not {seed!r}")


def check_node(g: Graph, node) -> None:
    if not _is_int(node) or not 0 <= node < g.n_nodes:
        raise ValueError(f"node must be a node index 0..{g.n_nodes - 1}, not {node!r}")


def check_depth(depth) -> None:
    if not _is_int(depth) or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, not {depth!r}")


def check_direction(direction) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")


def check_sources(g: Graph, sources, scale) -> tuple[np.ndarray, np.ndarray]:
    """``sources`` as int64 node indices and ``scale`` as positive finite float64, one per source."""
    src = np.asarray(sources)
    if src.ndim != 1 or (len(src) and not np.issubdtype(src.dtype, np.integer)):
        raise ValueError("sources must be a 1-D array of node indices")
    src = src.astype(np.int64)
    if len(src) and (src.min() < 0 or src.max() >= g.n_nodes):
        raise ValueError(f"sources must be node indices 0..{g.n_nodes - 1}")
    sc = np.asarray(scale, dtype=np.float64)
    if sc.shape != src.shape:
        raise ValueError(f"scale must have one factor per source ({len(src)}), not shape {sc.shape}")
    if len(sc) and not (np.all(np.isfinite(sc)) and np.all(sc > 0)):
        raise ValueError("scale must be positive and finite")
    return src, sc


# --------------------------------------------------------------------------------------------------------------
# Components, source sampling and the betweenness grid (both engines use these)
# --------------------------------------------------------------------------------------------------------------


def weak_component_labels(g: Graph) -> np.ndarray:
    """Weak-component labels (int64[n]): each node's label is the smallest node of its component. Union-find over
    the edges as stored, so a directed graph needs no reverse copy: 0.43 s and 17 MB on the twitter preset's
    follower graph at scale 0.1, where SciPy's ``connected_components`` took 4.3 s and 1 GB in the same run
    (benchmarks/network_cpu.md)."""
    return _union_find(g.indptr, g.indices)


@njit
def _union_find(indptr, indices):
    n = len(indptr) - 1
    parent = np.arange(n, dtype=np.int64)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            a = u
            b = np.int64(indices[e])
            while parent[a] != a:  # path halving
                parent[a] = parent[parent[a]]
                a = parent[a]
            while parent[b] != b:
                parent[b] = parent[parent[b]]
                b = parent[b]
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
    for u in range(n):  # ascending: a parent is always smaller, so its root is final before the child asks
        parent[u] = parent[parent[u]]
    return parent


def ordered_components(raw: np.ndarray) -> Components:
    """Number components 0 = the largest, then by size descending, ties by smallest node, from any labelling
    ``raw`` (int[n]) where equal labels mean the same component."""
    raw = np.asarray(raw, dtype=np.int64)
    if not len(raw):
        return Components(np.zeros(0, np.int64), np.zeros(0, np.int64))
    uniq, first, inverse, sizes = np.unique(raw, return_index=True, return_inverse=True, return_counts=True)
    order = np.lexsort((first, -sizes))  # by size descending, then smallest node
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return Components(rank[inverse].astype(np.int64), sizes[order].astype(np.int64))


@dataclass(eq=False)
class SourcePlan:
    """The sources of a betweenness run, the factor each one's contribution is multiplied by, whether the result
    is exact, and notes for the analyst."""

    sources: np.ndarray  # int64, ascending
    scale: np.ndarray  # float64, one per source
    exact: bool
    notes: list[str]


def betweenness_plan(g: Graph, samples: int, seed: int, comps: Components | None = None) -> SourcePlan:
    """:func:`betweenness_sources` with the notes an analyst should see and whether the result will be exact.
    ``comps``: the weak components of ``g`` when the caller has them already (the GPU twin computes them on the
    device); computed here otherwise."""
    check_graph(g)
    check_samples(samples)
    check_seed(seed)
    n = g.n_nodes
    if samples == 0 or samples >= n:
        return SourcePlan(np.arange(n, dtype=np.int64), np.ones(n), True, [f"exact: all {n:,} nodes are sources"])
    comps = comps if comps is not None else ordered_components(weak_component_labels(g))
    sizes = comps.sizes
    eligible = int(np.count_nonzero(sizes >= 3))  # sizes descending: components 0..eligible-1
    k = np.zeros(len(sizes), dtype=np.int64)
    notes: list[str] = []
    if eligible == 0:
        return SourcePlan(
            np.zeros(0, np.int64), np.zeros(0), True, ["no component has 3 nodes or more: every value is 0"]
        )
    sz = sizes[:eligible]
    if samples < eligible:
        k[:samples] = 1  # one each to the largest: a component with no source is missed entirely
        notes.append(
            f"{eligible - samples:,} of {eligible:,} components of 3+ nodes got no source "
            f"(only {samples:,} samples): their values are 0; ask for at least {eligible:,} samples"
        )
    else:
        total = int(sz.sum())
        ideal = samples * sz  # exact integers: the allotment never depends on float rounding
        kc = np.minimum(np.maximum(ideal // total, 1), sz)
        rem = ideal % total
        left = samples - int(kc.sum())
        # largest remainder first (ties: the larger component, which comes first), skipping full components
        order = np.lexsort((np.arange(eligible), -rem))
        while left > 0 and np.any(kc < sz):
            for c in order:
                if left == 0:
                    break
                if kc[c] < sz[c]:
                    kc[c] += 1
                    left -= 1
        if left < 0:  # the at-least-one rule overshot: take back from the smallest remainders
            for c in order[::-1]:
                if left == 0:
                    break
                if kc[c] > 1:
                    kc[c] -= 1
                    left += 1
        k[:eligible] = kc
    rng = np.random.default_rng(seed)
    members = np.argsort(comps.labels, kind="stable")  # nodes grouped by component, ascending within
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    chosen = []
    scales = []
    for c in range(eligible):
        if k[c] == 0:
            continue
        nodes = members[starts[c] : starts[c + 1]]
        pick = nodes if k[c] == sizes[c] else rng.choice(nodes, size=int(k[c]), replace=False)
        chosen.append(pick)
        scales.append(np.full(len(pick), sizes[c] / k[c]))
    src = np.concatenate(chosen)
    sc = np.concatenate(scales)
    order = np.argsort(src, kind="stable")
    exact = bool(np.all(k[:eligible] == sz))
    notes.insert(
        0,
        f"sampled {len(src):,} sources over {int(np.count_nonzero(k)):,} components of 3+ nodes "
        f"(seed {seed}); each source's contribution scaled by component size / its sources"
        + (": every such node is a source, so the values are exact" if exact else ""),
    )
    return SourcePlan(src[order].astype(np.int64), sc[order], exact, notes)


def betweenness_sources(g: Graph, samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(sources int64, scale float64): the sources of sampled betweenness and the factor each source's
    contribution is multiplied by, on the UNDIRECTED view ``g`` (caller passes undirected(g)).
    samples == 0 or samples >= n: every node, scale 1 (exact). Otherwise per-component sampling: components
    (weak) of size < 3 contribute nothing and get no source; the `samples` sources are allotted to the other
    components proportionally to size (largest remainder, at least 1 each, never more than the component's size;
    if there are more such components than samples, the smallest get none and a note says so); within a component
    of size n_c with k_c sources the sources are drawn uniformly without replacement with
    np.random.default_rng(seed) and scale = n_c / k_c (unbiased: E[estimate] = exact). Sorted by node index."""
    plan = betweenness_plan(g, samples, seed)
    return plan.sources, plan.scale


def betweenness_grid(g: Graph, comps: Components | None = None) -> np.ndarray:
    """Per node, the power of two every block's contribution is rounded to (float64[n]).

    A node's betweenness estimate is at most n_c (n_c - 2) / 2 in a component of n_c nodes (each component's
    scales add up to n_c, and one source's dependency on a node is at most n_c - 2). On the grid
    q_c = 2**(ceil(log2(n_c**2)) - 52) every value up to 2 n_c**2 is an exact float64, so once each block's
    vector is rounded to the grid, adding blocks is exact: any grouping of whole blocks (one worker or many)
    gives the same bits. The price is an absolute error of at most q_c / 2 per block, 2**-51 of the largest
    possible value. The grid depends on ``g`` alone, so every worker computes the same one (``comps``: its weak
    components, when the caller has them)."""
    comps = comps if comps is not None else ordered_components(weak_component_labels(g))
    nc = comps.sizes.astype(np.float64)
    exp = np.ceil(np.log2(np.maximum(nc, 2.0) ** 2))
    q = np.ldexp(1.0, (exp - 52).astype(np.int64))
    return q[comps.labels] if len(comps.labels) else np.zeros(0)


def clustering_from_triangles(u: Graph, tri: np.ndarray) -> Clustering:
    """Clustering from the triangles through each node of the undirected view ``u`` (both engines end here).
    networkx's arithmetic exactly: ``2 T / (d (d - 1))`` per node and ``sum 2 T / sum d (d - 1)`` overall, from
    integers (each division is correctly rounded, as Python's int / int is)."""
    d = u.out_degree.astype(np.int64)
    pairs = d * (d - 1)
    local = np.zeros(u.n_nodes, dtype=np.float64)
    nz = tri > 0
    local[nz] = (2 * tri[nz]).astype(np.float64) / pairs[nz].astype(np.float64)
    t = int((2 * tri).sum())
    transitivity = 0.0 if t == 0 else t / int(pairs.sum())
    return Clustering(local=local, triangles=tri, transitivity=transitivity)


def top_overlap(a: np.ndarray, b: np.ndarray, percent: float) -> float:
    """Overlap (fraction) of the top ``percent`` % of two value vectors: the top k = max(1, ceil(percent % of the
    nodes with a value > 0 in either)) by value, ties by node index."""
    positive = max(int(np.count_nonzero(a > 0)), int(np.count_nonzero(b > 0)))
    k = max(1, int(np.ceil(percent / 100.0 * positive)))
    k = min(k, len(a))
    if k == 0:
        return 1.0
    idx = np.arange(len(a))
    ta = np.lexsort((idx, -a))[:k]
    tb = np.lexsort((idx, -b))[:k]
    return len(np.intersect1d(ta, tb)) / k
