"""Backward phase (thesis Algorithm 2, DESIGN §1): every participant's influence I_t(v), float64.

I_t(v) starts at n_v. A *source* (in-degree 0, out-degree > 0) passes I_t(u) / outdeg(u) to each
out-neighbour and drops its edges; a neighbour whose in-degree falls to 0 becomes a source. Any order that
processes a node after all of its in-neighbours gives the same values up to float64 rounding, so:

* **Sweep path** (no queue, no in-degrees, no adjacency build). Within a cascade, when the edges are grouped
  by source in index order and every edge points the same way in index order (``src > dst`` for all, or
  ``src < dst`` for all), walking the edge list forwards or backwards visits every node's out-edges after
  all of its in-edges. Our forward phase emits exactly this shape (publisher first, retweeters in time
  order, edges grouped by retweeter), and so does the thesis' Algorithm 10 generator. One pass checks the
  shape and counts out-degrees; a second pass propagates. Cycles are impossible in this shape.
* **Queue path**: the thesis' algorithm for everything else — in-degrees, an out-adjacency built by counting
  sort, a FIFO of sources. If the queue empties with edges left, the cascade has a cycle.

Cycles (only possible in spreading graphs given by the input) follow DESIGN §1: with times, the edges that
do not go backward in time (``time(src) <= time(dst)``) are dropped and counted, which leaves a DAG; without
times the cascade is rejected — its nodes get NaN and the report names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._jit import HAVE_NUMBA, njit, prange
from .backends import resolve_backend
from .structures import SpreadingGraphs

__all__ = ["BackwardResult", "backward"]


@dataclass(eq=False)
class BackwardResult:
    """``influence[i]`` is I_t(v) of global node ``i`` (NaN in rejected cascades)."""

    influence: np.ndarray
    cyclic: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # cascade indices
    rejected: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # subset of cyclic
    dropped_edges: int = 0
    cyclic_tweet_ids: list[int] = field(default_factory=list)
    rejected_tweet_ids: list[int] = field(default_factory=list)

    def lines(self, max_ids: int = 10) -> list[str]:
        out = []

        def ids(xs):
            more = f" and {len(xs) - max_ids} more" if len(xs) > max_ids else ""
            return ", ".join(str(x) for x in xs[:max_ids]) + more

        if len(self.cyclic):
            out.append(
                f"{len(self.cyclic)} spreading graph(s) contain cycles (tweets {ids(self.cyclic_tweet_ids)}); "
                f"{self.dropped_edges} edge(s) that do not go backward in time were dropped"
            )
        if len(self.rejected):
            out.append(
                f"{len(self.rejected)} cyclic spreading graph(s) carry no times and were rejected "
                f"(tweets {ids(self.rejected_tweet_ids)})"
            )
        return out


def backward(graphs: SpreadingGraphs, *, backend: str = "auto", threads: int | None = None) -> BackwardResult:
    """Influence of every participant of every cascade in ``graphs``.

    ``threads`` (CPU only): how many cascades run at once; ``None`` uses numba's default thread count, ``1``
    runs on one core.
    """
    if resolve_backend(backend) == "gpu":
        from .gpu import backward as gpu_backward

        return gpu_backward(graphs, backend="gpu")
    return backward_cpu(graphs, threads=threads)


def backward_cpu(graphs: SpreadingGraphs, *, threads: int | None = None) -> BackwardResult:
    c = graphs.cascades
    influence = np.empty(c.n_nodes, dtype=np.float64)
    status = np.zeros(c.n_cascades, dtype=np.int8)
    chunks = _chunks(graphs.edge_offsets, c.node_offsets, threads)
    if HAVE_NUMBA and threads is not None:
        import numba

        old = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            _backward_chunks(
                chunks,
                c.node_offsets,
                c.followers,
                graphs.edge_offsets,
                graphs.edge_src,
                graphs.edge_dst,
                influence,
                status,
            )
        finally:
            numba.set_num_threads(old)
    else:
        _backward_chunks(
            chunks,
            c.node_offsets,
            c.followers,
            graphs.edge_offsets,
            graphs.edge_src,
            graphs.edge_dst,
            influence,
            status,
        )
    result = BackwardResult(influence)
    cyclic = np.flatnonzero(status)
    if len(cyclic):
        _handle_cycles(graphs, cyclic, result)
    return result


def _chunks(edge_offsets: np.ndarray, node_offsets: np.ndarray, threads: int | None) -> np.ndarray:
    """Split cascades into contiguous runs of about equal work (nodes + edges), a few per thread."""
    n_casc = len(node_offsets) - 1
    if HAVE_NUMBA:
        import numba

        k = numba.get_num_threads() if threads is None else threads
    else:
        k = 1
    parts = 1 if k <= 1 else 8 * k
    work = edge_offsets + node_offsets
    targets = np.linspace(0, work[-1], parts + 1)
    bounds = np.searchsorted(work, targets[1:-1])
    return np.unique(np.concatenate(([0], bounds, [n_casc]))).astype(np.int64)


@njit(parallel=True)
def _backward_chunks(chunks, node_offsets, followers, edge_offsets, src, dst, out, status):
    for c in prange(len(chunks) - 1):
        _backward_range(chunks[c], chunks[c + 1], node_offsets, followers, edge_offsets, src, dst, out, status)


@njit
def _sweep(a, b, src, dst, out):
    """One pass over the edges ``a:b`` when their shape allows (module docstring); ``False`` if it does not.

    Edges are taken in runs of equal ``src``. The run's length is its out-degree, so no counting pass is
    needed; the shape checks ride along. Iterating forwards or backwards through memory is chosen so the run
    sources come out in the order that makes every edge point to a node processed later. On ``False`` the
    values in ``out`` are partly updated and the caller starts over.
    """
    up = src[a] < dst[a]  # direction of the first edge decides what the rest must be
    inc = src[a] <= src[b - 1]  # run sources increase through memory (or there is one run)
    forward = inc == up
    step = 1 if forward else -1
    e = a if forward else b - 1
    stop = b if forward else a - 1
    prev = -1
    first = True
    ok = True
    while e != stop:
        u = src[e]
        if not first:
            # sources must move strictly one way in processing order: the way the edges point
            ok &= (u > prev) if up else (u < prev)
        first = False
        prev = u
        k = e
        while k != stop and src[k] == u:
            k += step
        share = out[u] / abs(k - e)
        while e != k:
            d = dst[e]
            ok &= (d > u) if up else (d < u)
            out[d] += share
            e += step
        if not ok:
            return False
    return True


@njit
def _backward_range(t0, t1, node_offsets, followers, edge_offsets, src, dst, out, status):
    # work arrays sized for the largest cascade of the range, reused across cascades
    max_n = 1
    max_m = 1
    for t in range(t0, t1):
        max_n = max(max_n, node_offsets[t + 1] - node_offsets[t])
        max_m = max(max_m, edge_offsets[t + 1] - edge_offsets[t])
    outdeg = np.zeros(max_n, dtype=np.int32)
    indeg = np.empty(max_n, dtype=np.int32)
    start = np.empty(max_n + 1, dtype=np.int32)
    adj = np.empty(max_m, dtype=np.int32)
    queue = np.empty(max_n, dtype=np.int32)
    for t in range(t0, t1):
        lo = node_offsets[t]
        n = node_offsets[t + 1] - lo
        a = edge_offsets[t]
        b = edge_offsets[t + 1]
        for i in range(n):
            out[lo + i] = followers[lo + i]
        if b == a:
            continue
        if _sweep(a, b, src, dst, out):
            continue
        # not sweepable: start over with the thesis' queue algorithm
        for i in range(n):
            out[lo + i] = followers[lo + i]
        if not _queue(lo, n, a, b, src, dst, out, outdeg, indeg, start, adj, queue):
            status[t] = 1


@njit
def _queue(lo, n, a, b, src, dst, out, outdeg, indeg, start, adj, queue):
    """Thesis Algorithm 2 on cascade nodes ``lo:lo+n`` and edges ``a:b``; ``False`` if a cycle is left.

    The work arrays are at least ``n`` (``adj``: ``b - a``) long; ``outdeg`` is zero on entry and on exit.
    """
    for i in range(n):
        indeg[i] = 0
    for e in range(a, b):
        outdeg[src[e] - lo] += 1
        indeg[dst[e] - lo] += 1
    start[0] = 0
    for i in range(n):
        start[i + 1] = start[i] + outdeg[i]
    # counting sort of the edges by source (``start`` is advanced, then shifted back)
    for e in range(a, b):
        s = src[e] - lo
        adj[start[s]] = dst[e] - lo
        start[s] += 1
    for i in range(n - 1, -1, -1):
        start[i + 1] = start[i]
    start[0] = 0
    head = 0
    tail = 0
    for i in range(n):
        if indeg[i] == 0 and outdeg[i] > 0:
            queue[tail] = i
            tail += 1
    done = 0
    while head < tail:
        u = queue[head]
        head += 1
        share = out[lo + u] / outdeg[u]
        for k in range(start[u], start[u + 1]):
            w = adj[k]
            out[lo + w] += share
            done += 1
            indeg[w] -= 1
            if indeg[w] == 0 and outdeg[w] > 0:
                queue[tail] = w
                tail += 1
    for i in range(n):
        outdeg[i] = 0
    return done == b - a


def _handle_cycles(graphs: SpreadingGraphs, cyclic: np.ndarray, result: BackwardResult) -> None:
    c = graphs.cascades
    result.cyclic = cyclic
    result.cyclic_tweet_ids = c.tweet_ids[cyclic].tolist()
    if c.times is None:
        result.rejected = cyclic
        result.rejected_tweet_ids = result.cyclic_tweet_ids
        for t in cyclic:
            result.influence[c.node_offsets[t] : c.node_offsets[t + 1]] = np.nan
        return
    # Rebuild the cyclic cascades as a small batch keeping only edges that go backward in time.
    sub = graphs.subset(cyclic)
    s, d = sub.edge_src, sub.edge_dst
    keep = sub.cascades.times[s] > sub.cascades.times[d]
    result.dropped_edges = int(len(keep) - keep.sum())
    e_casc = np.repeat(np.arange(sub.n_cascades), np.diff(sub.edge_offsets))
    counts = np.bincount(e_casc[keep], minlength=sub.n_cascades)
    off = np.zeros(sub.n_cascades + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    fixed = backward_cpu(sub.with_edges(off, s[keep], d[keep]), threads=1)
    assert not len(fixed.cyclic), "edges strictly backward in time cannot form a cycle"
    for k, t in enumerate(cyclic):
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        slo = sub.cascades.node_offsets[k]
        result.influence[lo:hi] = fixed.influence[slo : slo + (hi - lo)]
