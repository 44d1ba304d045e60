"""Network analytics (GraphCT, issue 14): degrees, weak and strong components, k-cores, clustering, sampled
betweenness, conversations and neighbourhoods of a :class:`compute.graphs.Graph` — the CPU reference and one
public dispatcher per analysis (``backend="auto"|"cpu"|"gpu"``).

Directed analyses take the graph as given; the ones defined on the undirected view (cores, clustering,
betweenness) call :func:`compute.graphs.undirected` themselves (a no-op on an undirected graph). Every value is
networkx's definition (docs/network.md lists them); the tests compare against networkx.

Libraries by measurement (benchmarks/network_cpu.md): SciPy's ``csgraph`` for weak and strong components; the
kernels of :mod:`._network_kernels` (numba) for core numbers, triangles, betweenness from given sources and the
depth-limited search, where the libraries were slower or lack the operation.

Betweenness is a sum over sources. It runs in blocks of :data:`compute.graphs.SOURCE_BLOCK` sources; each
block's vector is rounded to a per-node power-of-two grid (:func:`compute.graphs.betweenness_grid`), on which
adding blocks is exact, so a run split across Celery workers in whole blocks gives the same bits as one call.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import HAVE_NUMBA
from ..backends import resolve_backend
from ..graphs import (
    SOURCE_BLOCK,
    Betweenness,
    Clustering,
    Components,
    Conversations,
    Degrees,
    Graph,
    Neighbourhood,
    betweenness_grid,
    betweenness_plan,
    check_depth,
    check_direction,
    check_graph,
    check_node,
    check_samples,
    check_seed,
    check_sources,
    clustering_from_triangles,
    ordered_components,
    reciprocal,
    subgraph,
    top_overlap,
    transpose,
    undirected,
    weak_component_labels,
)
from . import _network_kernels as kernels

__all__ = [
    "Betweenness",
    "Clustering",
    "Components",
    "Conversations",
    "Degrees",
    "Neighbourhood",
    "betweenness",
    "betweenness_partial",
    "betweenness_stability",
    "clustering",
    "components",
    "conversations",
    "core_numbers",
    "degree_summary",
    "degrees",
    "neighbourhood",
    "strong_components",
]


# --------------------------------------------------------------------------------------------------------------
# Dispatchers
# --------------------------------------------------------------------------------------------------------------


def degrees(g: Graph, *, backend: str = "auto") -> Degrees:
    """In- and out-degree of every node of ``g`` as given (a self loop counts once in each)."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return degrees_cpu(g)
    from ..gpu.network import degrees as twin

    return twin(g, backend="gpu")


def components(g: Graph, *, backend: str = "auto") -> Components:
    """Weakly connected components (direction ignored), numbered 0 = the largest."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return components_cpu(g)
    from ..gpu.network import components as twin

    return twin(g, backend="gpu")


def strong_components(g: Graph, *, backend: str = "auto") -> Components:
    """Strongly connected components of the directed graph, numbered 0 = the largest."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return strong_components_cpu(g)
    from ..gpu.network import strong_components as twin

    return twin(g, backend="gpu")


def core_numbers(g: Graph, *, backend: str = "auto") -> np.ndarray:
    """int64[n]: ``networkx.core_number`` of every node on the undirected view."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return core_numbers_cpu(g)
    from ..gpu.network import core_numbers as twin

    return twin(g, backend="gpu")


def clustering(g: Graph, *, backend: str = "auto") -> Clustering:
    """``networkx.clustering`` and ``networkx.transitivity`` on the undirected view, with triangle counts."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return clustering_cpu(g)
    from ..gpu.network import clustering as twin

    return twin(g, backend="gpu")


def betweenness(g: Graph, *, samples: int = 0, seed: int = 0, backend: str = "auto") -> Betweenness:
    """``networkx.betweenness_centrality(undirected view, normalized=False)`` (``samples=0``, or ``samples`` >= n),
    else its unbiased estimate from ``samples`` sources chosen per component (:func:`compute.graphs.
    betweenness_sources`) with ``seed``."""
    check_graph(g)
    check_samples(samples)
    check_seed(seed)
    if resolve_backend(backend) != "gpu":
        return betweenness_cpu(g, samples=samples, seed=seed)
    from ..gpu.network import betweenness as twin

    return twin(g, samples=samples, seed=seed, backend="gpu")


def betweenness_partial(g: Graph, sources: np.ndarray, scale: np.ndarray, *, backend: str = "auto") -> np.ndarray:
    """float64[n]: the contribution of ``sources`` (each multiplied by its ``scale``) to betweenness on the
    undirected view, halved as networkx does for ``normalized=False``, summed in SOURCE_BLOCK blocks from the
    first source on. Batches of whole blocks of :func:`compute.graphs.betweenness_sources`, added in any order,
    give :func:`betweenness` bitwise."""
    check_graph(g)
    src, sc = check_sources(g, sources, scale)
    if resolve_backend(backend) != "gpu":
        return betweenness_partial_cpu(g, src, sc)
    from ..gpu.network import betweenness_partial as twin

    return twin(g, src, sc, backend="gpu")


def betweenness_stability(g: Graph, *, samples: int, seed: int = 0, backend: str = "auto") -> dict:
    """How stable a sampled ranking is: two independent samples (seeds ``seed`` and ``seed + 1``) and the overlap
    of their top 1 % and top 5 % sets: ``{"top1", "top5", "samples"}`` (GraphCT reports > 0.8 at 10 % sampling)."""
    check_graph(g)
    check_samples(samples)
    check_seed(seed)
    if resolve_backend(backend) != "gpu":
        return betweenness_stability_cpu(g, samples=samples, seed=seed)
    from ..gpu.network import betweenness_stability as twin

    return twin(g, samples=samples, seed=seed, backend="gpu")


def conversations(g: Graph, *, backend: str = "auto") -> Conversations:
    """GraphCT's conversations: only the reciprocated edges of ``g`` (u -> v and v -> u), on the nodes that have
    one, with the graph's size before and after and the weak components of what is left."""
    check_graph(g)
    if resolve_backend(backend) != "gpu":
        return conversations_cpu(g)
    from ..gpu.network import conversations as twin

    return twin(g, backend="gpu")


def neighbourhood(
    g: Graph, node: int, *, depth: int = 1, direction: str = "both", backend: str = "auto"
) -> Neighbourhood:
    """The subgraph of ``g`` induced on the nodes within ``depth`` hops of node index ``node``, hopping along
    out-edges (``"out"``), in-edges (``"in"``) or either (``"both"``), and each node's distance."""
    check_graph(g)
    check_node(g, node)
    check_depth(depth)
    check_direction(direction)
    if resolve_backend(backend) != "gpu":
        return neighbourhood_cpu(g, int(node), depth=depth, direction=direction)
    from ..gpu.network import neighbourhood as twin

    return twin(g, node, depth=depth, direction=direction, backend="gpu")


def degree_summary(d: np.ndarray) -> dict:
    """Mean, variance (population), max and histogram of a degree vector, JSON-ready: ``histogram`` is
    ``[[degree, count], ...]`` for every degree that occurs; ``log_bins`` is ``[[lo, hi, count], ...]`` over
    [0, 0], [1, 1], [2, 3], [4, 7], ... up to the bin of the max (empty bins included, hi inclusive), for the
    log-log plot (divide count by hi - lo + 1 for a density)."""
    d = np.asarray(d)
    if d.ndim != 1 or (len(d) and (not np.issubdtype(d.dtype, np.integer) or d.min() < 0)):
        raise ValueError("d must be a 1-D array of non-negative integer degrees")
    if not len(d):
        return {"mean": 0.0, "variance": 0.0, "max": 0, "histogram": [], "log_bins": []}
    d = d.astype(np.int64)
    counts = np.bincount(d)
    present = np.flatnonzero(counts)
    top = int(d.max())
    bins = [[0, 0, int(counts[0])]]
    lo = 1
    while lo <= top:
        hi = 2 * lo - 1
        bins.append([lo, hi, int(counts[lo : hi + 1].sum())])
        lo *= 2
    return {
        "mean": float(d.mean()),
        "variance": float(d.var()),
        "max": top,
        "histogram": [[int(k), int(counts[k])] for k in present],
        "log_bins": bins,
    }


# --------------------------------------------------------------------------------------------------------------
# CPU reference
# --------------------------------------------------------------------------------------------------------------


def degrees_cpu(g: Graph) -> Degrees:
    return Degrees(in_degree=g.in_degree, out_degree=g.out_degree.astype(np.int64))


def components_cpu(g: Graph) -> Components:
    return ordered_components(weak_component_labels(g))


def strong_components_cpu(g: Graph) -> Components:
    if not g.directed:
        return components_cpu(g)
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    n = g.n_nodes
    if n == 0:
        return ordered_components(np.zeros(0, np.int64))
    a = csr_array((np.ones(g.n_edges, np.int8), g.indices, g.indptr), shape=(n, n))
    _, labels = connected_components(a, directed=True, connection="strong")
    return ordered_components(labels)


def core_numbers_cpu(g: Graph) -> np.ndarray:
    u = undirected(g)
    return kernels.core_numbers(u.indptr, u.indices).astype(np.int64)


def clustering_cpu(g: Graph) -> Clustering:
    u = undirected(g)
    tri = kernels.triangles(u.indptr, u.indices).astype(np.int64)
    return clustering_from_triangles(u, tri)


def betweenness_cpu(g: Graph, *, samples: int = 0, seed: int = 0) -> Betweenness:
    u = undirected(g)
    plan = betweenness_plan(u, samples, seed)
    values = betweenness_partial_cpu(u, plan.sources, plan.scale)
    return Betweenness(values, plan.sources, plan.exact, samples, seed, plan.notes)


def betweenness_partial_cpu(g: Graph, sources: np.ndarray, scale: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Blocks run concurrently (the kernel releases the GIL), a wave of ``threads`` at a time, and are added in
    block order; the grid makes the sum exact, so neither the thread count nor the order changes a bit."""
    u = undirected(g)
    total = np.zeros(u.n_nodes, dtype=np.float64)
    if not len(sources):
        return total
    grid = betweenness_grid(u)
    starts = list(range(0, len(sources), SOURCE_BLOCK))

    def block(b: int) -> np.ndarray:
        part = kernels.brandes_block(u.indptr, u.indices, sources[b : b + SOURCE_BLOCK], scale[b : b + SOURCE_BLOCK])
        part *= 0.5  # each unordered pair is reached from both ends (networkx's normalized=False)
        return np.rint(part / grid) * grid

    k = max(1, min(threads or os.cpu_count() or 1, len(starts))) if HAVE_NUMBA else 1
    if k == 1:
        for b in starts:
            total += block(b)
        return total
    with ThreadPoolExecutor(k) as pool:
        for w in range(0, len(starts), k):  # a wave at a time: at most k vectors of n floats alive
            for part in pool.map(block, starts[w : w + k]):
                total += part
    return total


def betweenness_stability_cpu(g: Graph, *, samples: int, seed: int = 0) -> dict:
    a = betweenness_cpu(g, samples=samples, seed=seed).values
    b = betweenness_cpu(g, samples=samples, seed=seed + 1).values
    return {"top1": top_overlap(a, b, 1.0), "top5": top_overlap(a, b, 5.0), "samples": samples}


def conversations_cpu(g: Graph) -> Conversations:
    r = reciprocal(g)
    graph = subgraph(r, np.flatnonzero(r.out_degree > 0))
    return Conversations(
        graph=graph,
        nodes_before=g.n_nodes,
        edges_before=g.n_edges,
        nodes_after=graph.n_nodes,
        edges_after=graph.n_edges,
        components=components_cpu(graph),
    )


def neighbourhood_cpu(g: Graph, node: int, *, depth: int = 1, direction: str = "both") -> Neighbourhood:
    if direction == "out":
        indptr, indices = g.indptr, g.indices
    elif direction == "in":
        indptr, indices, _ = transpose(g)
    else:
        u = undirected(g)
        indptr, indices = u.indptr, u.indices
    dist = kernels.bfs_depth(indptr, indices, node, min(depth, max(g.n_nodes - 1, 0)))
    nodes = np.flatnonzero(dist >= 0)
    return Neighbourhood(graph=subgraph(g, nodes), distance=dist[nodes].astype(np.int64))
