"""Backward phase (thesis Algorithm 2; docs/measure.md): every participant's influence I_t(v), float64.

I_t(v) starts at n_v. A *source* (in-degree 0, out-degree > 0) passes I_t(u) / outdeg(u) to each
out-neighbour and drops its edges; a neighbour whose in-degree falls to 0 becomes a source. Any order that
processes a node after all of its in-neighbours gives the same values up to float64 rounding, so:

* **Sweep path** (no queue, no in-degrees, no adjacency build). Within a cascade, when the sources of the
  edge list are sorted and every edge points the same way in index order (``src > dst`` for all, or
  ``src < dst`` for all), taking the runs of equal sources forwards or backwards through memory visits every
  node after all of its in-neighbours. Our forward phase emits exactly this shape (publisher first,
  retweeters in time order, edges grouped by retweeter), and so does the thesis' Algorithm 10 generator.
  The shape is checked once, when the ``SpreadingGraphs`` is built (``shapes``, the counterpart of the
  thesis' CSR build during data preparation); the sweep then finds each run by galloping (its length is
  the out-degree) and streams the destinations once. Cycles are impossible in this shape.
* **Queue path**: the thesis' algorithm for everything else — in-degrees, an out-adjacency built by counting
  sort, a FIFO of sources. If the queue empties with edges left, the cascade has a cycle.

Cycles (only possible in spreading graphs given by the input) follow docs/measure.md: with times, the edges that
do not go backward in time (``time(src) <= time(dst)``) are dropped and counted, which leaves a DAG; without
times the cascade is rejected — its nodes get NaN and the report names it.
"""

from __future__ import annotations

import logging

import numpy as np

from .._jit import HAVE_NUMBA, njit, prange
from ..arrays import unique
from ..backends import resolve_backend
from ..results import BackwardResult, apply_cycle_policy, complete_backward
from ..structures import SpreadingGraphs

__all__ = ["BackwardResult", "backward", "backward_cpu"]

log = logging.getLogger(__name__)


def backward(graphs: SpreadingGraphs, *, backend: str = "auto", threads: int | None = None) -> BackwardResult:
    """Influence of every participant of every cascade in ``graphs`` (the public dispatcher).

    ``backend``: ``"auto"`` (the GPU twin where CuPy sees a device, else the CPU reference), ``"cpu"`` or
    ``"gpu"``. ``threads`` (CPU only): how many cascades run at once; ``None`` uses numba's default thread
    count, ``1`` runs on one core. Cascades the GPU cannot hold run on the CPU reference, logged and named in
    :meth:`BackwardResult.lines`.
    """
    if resolve_backend(backend) != "gpu":
        return backward_cpu(graphs, threads=threads)
    from ..gpu.backward import backward as backward_gpu

    result = backward_gpu(graphs, backend="gpu", threads=threads)
    if len(result.deferred):
        ids = graphs.cascades.tweet_ids[np.sort(result.deferred)].tolist()
        log.warning(
            "%d cascade(s) do not fit on the GPU (tweets %s); running them on the CPU reference",
            len(ids), ", ".join(map(str, ids[:10])) + (" ..." if len(ids) > 10 else ""),
        )  # fmt: skip
        complete_backward(graphs, result, solve=lambda g: backward_cpu(g, threads=threads))
    return result


def backward_cpu(graphs: SpreadingGraphs, *, threads: int | None = None) -> BackwardResult:
    """The CPU reference (numba where present): the values every other engine is checked against."""
    c = graphs.cascades
    influence = np.empty(c.n_nodes, dtype=np.float64)
    status = np.zeros(c.n_cascades, dtype=np.int8)
    chunks = _unsigned(_chunks(graphs.edge_offsets, c.node_offsets, threads))
    args = (
        chunks,
        _unsigned(c.node_offsets),
        c.followers,
        _unsigned(graphs.edge_offsets),
        _unsigned(graphs.edge_src),
        _unsigned(graphs.edge_dst),
        graphs.shapes,
        influence,
        status,
    )
    if HAVE_NUMBA and threads is not None:
        import numba

        old = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            _backward_chunks(*args)
        finally:
            numba.set_num_threads(old)
    else:
        _backward_chunks(*args)
    result = BackwardResult(influence)
    cyclic = np.flatnonzero(status)
    if len(cyclic):
        apply_cycle_policy(graphs, cyclic, result, solve=lambda g: backward_cpu(g, threads=1))
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
    return unique(np.concatenate(([0], bounds, [n_casc]))).astype(np.int64)


@njit(parallel=True)
def _backward_chunks(chunks, node_offsets, followers, edge_offsets, src, dst, shapes, out, status):
    for c in prange(len(chunks) - 1):
        _backward_range(chunks[c], chunks[c + 1], node_offsets, followers, edge_offsets, src, dst, shapes, out, status)


def _unsigned(a: np.ndarray) -> np.ndarray:
    """The same memory as an unsigned array. numba guards every *signed* index against Python's negative
    wrap-around (a compare and a select per access); unsigned indices skip that, which is a third of the
    sweep's time. Indices here are never negative (validated on construction)."""
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


@njit(inline="always")
def _run_end(src, e, b, u):
    """One past the run of source ``u`` that starts at ``e`` (``e < b``), by galloping then bisecting.

    That is right when ``src`` is sorted; the sweep checks every element of the run, so unsorted input is
    caught rather than trusted. Galloping reads O(log run) sources instead of scanning the run with a branch
    per edge; the sweep's branch-free loop then re-reads ``src`` as it streams ``dst``.
    """
    one = np.uint64(1)
    step = one
    lo = e  # src[lo] == u
    hi = e + step
    while hi < b and src[hi] == u:
        lo = hi
        step += step
        hi = e + step
    if hi > b:
        hi = b
    while hi - lo > one:  # src[lo] == u; hi == b or src[hi] != u
        mid = lo + ((hi - lo) >> one)
        if src[mid] == u:
            lo = mid
        else:
            hi = mid
    return hi


@njit(inline="always")
def _run_start(src, a, k, u):
    """Mirror of :func:`_run_end`: the first index of the run of source ``u`` that ends just before ``k``."""
    one = np.uint64(1)
    step = one
    hi = k - one  # src[hi] == u
    # probe k - 1 - step while it stays >= a (written so that no unsigned value goes below zero)
    while step <= k - one - a and src[k - one - step] == u:
        hi = k - one - step
        step += step
    lo_ok = step <= k - one - a  # lo = k - 1 - step is a real index with src[lo] != u
    lo = k - one - step if lo_ok else a
    if not lo_ok and src[a] == u:
        return a
    while hi - lo > one:  # src[hi] == u; src[lo] != u
        mid = lo + ((hi - lo) >> one)
        if src[mid] == u:
            hi = mid
        else:
            lo = mid
    return hi


@njit(inline="always")
def _run(s0, s1, u, dst, out):
    """Pass ``out[u] / (s1 - s0)`` along the edges ``s0:s1`` (the run of source ``u``)."""
    share = out[u] / (s1 - s0)
    for i in range(s0, s1):
        out[dst[i]] += share


@njit(inline="always")
def _sweep(a, b, src, dst, out, forward):
    """The backward phase of one cascade in one pass over its edges ``a:b``, whose shape
    (:func:`compute.structures.edge_shapes`, checked when the graphs were built) says that taking the runs of
    equal sources through memory ``forward`` (or backwards) visits every node after its in-neighbours.

    Runs are found by galloping over the sorted sources, so the loop streams only ``dst``; a run's length is
    its out-degree. (Inlined: behind a call boundary numba's loop ran 1.5-1.7x slower.)
    """
    if forward:
        e = a
        while e < b:
            u = src[e]
            k = _run_end(src, e, b, u)
            _run(e, k, u, dst, out)
            e = k
    else:
        k = b
        while k > a:
            u = src[k - np.uint64(1)]
            e = _run_start(src, a, k, u)
            _run(e, k, u, dst, out)
            k = e


@njit
def _backward_range(t0, t1, node_offsets, followers, edge_offsets, src, dst, shapes, out, status):
    """Cascades ``t0:t1``: sweep every one that allows it, then run the queue algorithm on the rest.

    Two separate loops on purpose: with the queue path in the same loop body LLVM compiled the sweep ~1.5x
    slower. ``status[t]`` ends 0 (done) or 1 (a cycle is left)."""
    _sweep_range(t0, t1, node_offsets, followers, edge_offsets, src, dst, shapes, out, status)
    max_n = 1
    max_m = 1
    for t in range(t0, t1):
        if status[t] == 2:
            max_n = max(max_n, np.int64(node_offsets[t + 1] - node_offsets[t]))
            max_m = max(max_m, np.int64(edge_offsets[t + 1] - edge_offsets[t]))
    if max_m == 1:
        return
    outdeg = np.zeros(max_n, dtype=np.int32)
    indeg = np.empty(max_n, dtype=np.int32)
    start = np.empty(max_n + 1, dtype=np.int32)
    queue = np.empty(max_n, dtype=np.int32)
    adj = np.empty(max_m, dtype=np.int32)
    for t in range(t0, t1):
        if status[t] != 2:
            continue
        lo = node_offsets[t]
        hi = node_offsets[t + 1]
        for i in range(lo, hi):
            out[i] = followers[i]
        ok = _queue(
            lo, np.int64(hi - lo), edge_offsets[t], edge_offsets[t + 1], src, dst, out, outdeg, indeg, start, adj, queue
        )
        status[t] = 0 if ok else 1


@njit
def _sweep_range(t0, t1, node_offsets, followers, edge_offsets, src, dst, shapes, out, status):
    """Start values and the sweep for cascades ``t0:t1``; ``status[t] = 2`` where the sweep does not apply."""
    for t in range(t0, t1):
        for i in range(node_offsets[t], node_offsets[t + 1]):
            out[i] = followers[i]
        a = edge_offsets[t]
        b = edge_offsets[t + 1]
        if shapes[t] != 0:
            _sweep(a, b, src, dst, out, shapes[t] == 1)
        elif b != a:
            status[t] = 2


@njit
def _queue(lo, n, a, b, src, dst, out, outdeg, indeg, start, adj, queue):
    """Thesis Algorithm 2 on cascade nodes ``lo:lo+n`` and edges ``a:b``; ``False`` if a cycle is left.

    The work arrays are at least ``n`` (``adj``: ``b - a``) long; ``outdeg`` is zero on entry and on exit.
    """
    base = np.int64(lo)  # signed copy for the node arithmetic below
    for i in range(n):
        indeg[i] = 0
    for e in range(a, b):
        outdeg[np.int64(src[e] - lo)] += 1
        indeg[np.int64(dst[e] - lo)] += 1
    start[0] = 0
    for i in range(n):
        start[i + 1] = start[i] + outdeg[i]
    # counting sort of the edges by source (``start`` is advanced, then shifted back)
    for e in range(a, b):
        s = np.int64(src[e] - lo)
        adj[start[s]] = np.int64(dst[e] - lo)
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
        share = out[base + u] / outdeg[u]
        for k in range(start[u], start[u + 1]):
            w = adj[k]
            out[base + w] += share
            done += 1
            indeg[w] -= 1
            if indeg[w] == 0 and outdeg[w] > 0:
                queue[tail] = w
                tail += 1
    for i in range(n):
        outdeg[i] = 0
    return done == np.int64(b - a)
