"""GPU twin of WTF (issue 15): personalized PageRank in blocks of seeds, the circle of trust and Money, in CuPy.
Same functions, signatures and defaults as :mod:`compute.algorithms.wtf`; the values agree with it to 1e-9
relative, and a seed's results are bitwise the same alone or in any batch.

* The graph stays on the device between calls (:func:`device_graph`, one upload per :class:`compute.graphs.Graph`
  object, weakly held): its CSR and the reverse CSR (built here by a sort), and per walk direction a *renumbered*
  pull CSR (:class:`_Walk`): accounts ordered by their out-degree in the walk, highest first, so the entries a PPR
  iteration gathers most often sit together at the front of the vector (fewer cache sectors, more L2 hits), and
  dangling accounts (never gathered) at the end. The numbering stays inside; results come back in node indices.
* Every row sum has one order whatever the number of columns (``chunk_tree`` in :mod:`._wtf_kernels`): a row is cut in
  chunks of :data:`_LONG` entries; in a chunk, entry e goes to class (e - start) mod 32, each class is summed in
  index order, the 32 classes by a fixed butterfly tree; the chunks are added in order. One account (K = 1) maps a
  class to a lane; a block of K columns maps lanes to column pairs (one 16-byte load each, a 512-byte row per
  entry at K = 64) and keeps the classes in registers; the arithmetic is the same. Column sums (L1 change,
  dangling mass) go per fixed group of rows, then in row-group order. So a column's bits never depend on the
  other columns of its block.
* PPR: one fused pass per iteration (:func:`_ppr_block`): each row's pull sum, the damping, the restart and the
  dangling mass at the seed, ``x / out-degree`` for the next pull, the L1 change and the next dangling mass,
  accumulated per row group; long rows (> :data:`_LONG`) in parallel chunks then an epilogue pass; a small pass
  finishes the sums and the per-column convergence on the device. One scalar read per iteration. Converged
  columns keep their values; when at most half the block still moves, it is compacted to the next smaller
  width (results unchanged: the order does not depend on the width). The pass's L2 use (:data:`_L2_MODE`, a
  template parameter: the streams evict-first, the most-gathered :data:`_HOT_BYTES` of the vector evict-last
  through one range policy) changes no bit; benchmarks/wtf_gpu.md measures the modes.
* The circle: an exponent histogram per column finds the power of two below the (circle - 1)-th value; what
  passes it (one mask over the block) goes to the host, which ranks it with the reference's
  :func:`compute.results.circle_of_trust`.
* Money: the bipartite graphs of all the block's seeds stacked into one (rows of different seeds never mix): per
  iteration a relevance pass, the chunks of long hub rows, a similarity pass (fused restart and L1 terms) and a
  per-seed finish; a seed that converged keeps its scores (its kernels skip it, so the flags are read only every
  :data:`_MONEY_CHECK` iterations). Those iterations are captured once as a CUDA graph and replayed
  (:func:`._device.replayable`): one launch instead of 32 from Python.
* The local methods (``method="push"`` or ``"fora"``, :mod:`.wtf_push`) replace the PPR step: their estimate is
  in node indices (no renumbered walk is built), and the circle and Money run on it as above. They agree with the
  CPU reference within the methods' bounds, not to the bit (another order of pushes, other random streams), and
  a seed's result is bitwise the same alone or in any batch and from run to run.
"""

from __future__ import annotations

import weakref

import cupy as cp
import numpy as np

from ..graphs import Graph
from ..results import (
    BATCH,
    DEFAULT_EPSILON,
    DEFAULT_WALKS,
    RANK_SLACK,
    MoneyScores,
    PageRank,
    Recommendations,
    check_local,
    check_wtf,
    circle_of_trust,
    push_epsilon,
    recommendations,
)
from ._device import Steps, replayable, set_of
from ._wtf_kernels import _BINS, _LONG, _ROWS_PER_BLOCK, _WARPS, _kernel, _width
from .wtf_push import local_block

__all__ = ["device_graph", "personalized_pagerank", "wtf"]

#: L2 use of the PPR pass (benchmarks/wtf_gpu.md compares them): 0 plain loads; 1 the streams (entries, x,
#: 1 / out-degree, the outputs) marked evict-first; 2 as 1 and the gathers through one range policy: the first
#: _HOT_BYTES of the gathered vector (the accounts gathered most often) evict-last, the rest evict-first
_L2_MODE = 2
#: bytes of the gathered vector kept in the L2 (modes 2 and 3): half the H100's 50 MB (the L2 is two halves)
_HOT_BYTES = 24 << 20
#: Money iterations launched between two reads of the seeds' flags
_MONEY_CHECK = 8
# --------------------------------------------------------------------------------------------------------------
# The graph on the device
# --------------------------------------------------------------------------------------------------------------


class _Csr:
    """A CSR on the device (int64 row pointers, int32 entries) and its row lengths."""

    def __init__(self, indptr: cp.ndarray, indices: cp.ndarray) -> None:
        self.indptr = indptr.astype(cp.int64, copy=False)
        self.indices = indices.astype(cp.int32, copy=False)
        self.n_rows = len(indptr) - 1
        self.degree = cp.diff(self.indptr)

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.indices.nbytes)


def _pull(csr: _Csr, y: cp.ndarray) -> cp.ndarray:
    """out (n_rows, K): row r = sum of y's rows at the row's entries, in the fixed order of :data:`_SOURCE` (the
    order of every PPR and Money sum), a warp per row. K is 1, 2, 4, ... or 64; y C-ordered."""
    k = y.shape[1]
    out = cp.empty((csr.n_rows, k), dtype=cp.float64)
    if csr.n_rows:
        _kernel("row_sums", k)(
            ((csr.n_rows * 32 + 255) // 256,), (256,), (csr.indptr, csr.indices, np.int64(csr.n_rows), y, out)
        )
    return out


def _chunks(indptr: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray, cp.ndarray, cp.ndarray]:
    """The rows longer than :data:`_LONG` cut in chunks of :data:`_LONG` entries: (per row, its first chunk:
    n_rows + 1 pointers, 0 chunks for a short row; each chunk's first and end entry; its row)."""
    deg = cp.diff(indptr)
    per_row = cp.where(deg > _LONG, (deg + _LONG - 1) // _LONG, 0)
    ptr = cp.zeros(len(deg) + 1, dtype=cp.int64)
    ptr[1:] = cp.cumsum(per_row)
    total = int(ptr[-1].get())
    chunk = cp.arange(total, dtype=cp.int64)
    owner = cp.searchsorted(ptr[1:], chunk, side="right")
    lo = indptr[owner] + (chunk - ptr[owner]) * _LONG
    hi = cp.minimum(lo + _LONG, indptr[owner + 1])
    return ptr, lo, hi, owner


class _Walk:
    """The walk in one direction, renumbered: accounts by out-degree in the walk descending (ties by index), so
    the entries gathered most often are together at the front; ``order[new] = node``, ``rank[node] = new``.
    The pull CSR in the new numbering (each row's entries ascending), split into row groups of short rows and
    the chunks of the long ones; 1 / out-degree (0: dangling) in the new numbering."""

    def __init__(self, out: _Csr, n: int) -> None:
        deg = out.degree
        self.n = n
        key = (int(deg.max()) - deg if n else deg) * max(n, 1) + cp.arange(n, dtype=cp.int64)
        self.order = cp.argsort(key).astype(cp.int64)
        del key
        self.rank = cp.empty(n, dtype=cp.int64)
        self.rank[self.order] = cp.arange(n, dtype=cp.int64)
        m = len(out.indices)
        # walk edge u -> v: pull row rank[v] lists rank[u]; (row, entry) keys sorted
        src = self.rank[set_of(out.indptr, m)]
        dst = self.rank[out.indices]
        keys = dst * max(n, 1) + src
        del src
        keys.sort()
        self.indptr = cp.zeros(n + 1, dtype=cp.int64)
        self.indptr[1:] = cp.cumsum(cp.bincount(dst, minlength=n))
        del dst
        self.indices = (keys % max(n, 1)).astype(cp.int32)
        del keys
        new_deg = deg[self.order]
        self.inv_out = cp.where(new_deg > 0, 1.0 / cp.maximum(new_deg, 1), 0.0)
        row_deg = cp.diff(self.indptr)
        self.long_rows = cp.flatnonzero(row_deg > _LONG).astype(cp.int64)
        n_chunks = (row_deg[self.long_rows] + _LONG - 1) // _LONG
        self.chunk_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(n_chunks)])
        total = int(self.chunk_ptr[-1].get())
        chunk = cp.arange(total, dtype=cp.int64)
        owner = cp.searchsorted(self.chunk_ptr[1:], chunk, side="right")
        self.chunk_lo = self.indptr[self.long_rows[owner]] + (chunk - self.chunk_ptr[owner]) * _LONG
        self.chunk_hi = cp.minimum(self.chunk_lo + _LONG, self.indptr[self.long_rows[owner] + 1])
        self.n_chunks = total
        self.n_long = len(self.long_rows)
        self.row_blocks = (n + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK
        self.long_blocks = (self.n_long + _WARPS - 1) // _WARPS
        self.chunk_blocks = (total + _WARPS - 1) // _WARPS

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.indices.nbytes + self.order.nbytes + self.rank.nbytes)


class _DeviceGraph:
    """A graph resident on the device: its CSR and reverse CSR (Money and the accounts a seed links to) and, per
    walk direction, the renumbered pull side (:class:`_Walk`, built on first use)."""

    def __init__(self, g: Graph) -> None:
        indptr = cp.asarray(g.indptr)
        indices = cp.asarray(g.indices.astype(np.int32, copy=False))
        self.n = g.n_nodes
        self.forward = _Csr(indptr, indices)
        # the reverse CSR: (target, source) keys sorted, so each reverse row lists its sources ascending
        src = set_of(indptr, len(indices))
        keys = cp.sort(indices.astype(cp.int64) * max(self.n, 1) + src)
        del src
        t_indptr = cp.zeros(self.n + 1, dtype=cp.int64)
        t_indptr[1:] = cp.cumsum(cp.bincount(indices, minlength=self.n))
        self.backward = _Csr(t_indptr, (keys % max(self.n, 1)).astype(cp.int32))
        del keys
        self.walks: dict[str, _Walk] = {}

    def out_csr(self, direction: str) -> _Csr:
        """The walk's own CSR in node indices: a row lists where an account leads in ``direction``."""
        return self.forward if direction == "follows" else self.backward

    def walk(self, direction: str) -> _Walk:
        if direction not in self.walks:
            self.walks[direction] = _Walk(self.out_csr(direction), self.n)
        return self.walks[direction]

    @property
    def nbytes(self) -> int:
        return self.forward.nbytes + self.backward.nbytes + sum(w.nbytes for w in self.walks.values())


_RESIDENT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _reserve_l2() -> int:
    """Let evict-last lines use the most of the L2 this process may set aside (cudaLimitPersistingL2CacheSize, a
    limit of this process's context, not a setting of the card); bytes set aside, 0 where the runtime refuses."""
    try:
        rt = cp.cuda.runtime
        most = rt.deviceGetAttribute(108, cp.cuda.Device().id)  # cudaDevAttrMaxPersistingL2CacheSize
        if rt.deviceGetLimit(0x06) < most:  # cudaLimitPersistingL2CacheSize
            rt.deviceSetLimit(0x06, most)
        return int(rt.deviceGetLimit(0x06))
    except (AttributeError, cp.cuda.runtime.CUDARuntimeError):
        return 0


def device_graph(g: Graph) -> _DeviceGraph:
    """``g`` on the device, uploaded on first use and kept while ``g`` lives (a worker keeps its graph)."""
    dg = _RESIDENT.get(g)
    if dg is None:
        _reserve_l2()
        dg = _DeviceGraph(g)
        _RESIDENT[g] = dg
    return dg


# --------------------------------------------------------------------------------------------------------------
# PPR
# --------------------------------------------------------------------------------------------------------------


class _Block:
    """The PPR state of up to BATCH seeds: x and x / out-degree (n, width), double-buffered, in the walk's
    numbering; per current column its seed, flag and dangling mass; per original column the counters."""

    def __init__(self, walk: _Walk, seeds: np.ndarray) -> None:
        k = len(seeds)
        self.k = k
        self.width = _width(k)
        self.cols = np.arange(k)  # original column of each current column
        new_seeds = walk.rank[cp.asarray(seeds)]
        self.seeds = cp.full(self.width, -1, dtype=cp.int64)
        self.seeds[:k] = new_seeds
        self.x = cp.zeros((walk.n, self.width), dtype=cp.float64)
        self.x[new_seeds, cp.arange(k)] = 1.0
        self.z = self.x * walk.inv_out[:, None]
        self.active = cp.zeros(self.width, dtype=cp.int32)
        self.active[:k] = 1
        # the dangling mass of x = e_seed
        self.lost = cp.zeros(self.width, dtype=cp.float64)
        self.lost[:k] = (walk.inv_out[new_seeds] == 0).astype(cp.float64)
        self.colmap = cp.full(self.width, 0, dtype=cp.int32)
        self.colmap[:k] = cp.arange(k, dtype=cp.int32)
        self.iterations = cp.zeros(k, dtype=cp.int64)
        self.delta = cp.full(k, np.inf)
        self.converged = cp.zeros(k, dtype=cp.int32)

    def compact(self, keep: np.ndarray, final: cp.ndarray) -> None:
        """Save every current column into ``final`` and keep only the current columns ``keep``."""
        final[:, cp.asarray(self.cols)] = self.x[:, : len(self.cols)]
        width = _width(len(keep))
        idx = cp.asarray(keep)
        x = cp.zeros((self.x.shape[0], width), dtype=cp.float64)
        z = cp.zeros_like(x)
        x[:, : len(keep)] = self.x[:, idx]
        z[:, : len(keep)] = self.z[:, idx]
        self.x, self.z = x, z
        seeds = cp.full(width, -1, dtype=cp.int64)
        seeds[: len(keep)] = self.seeds[idx]
        lost = cp.zeros(width, dtype=cp.float64)
        lost[: len(keep)] = self.lost[idx]
        active = cp.zeros(width, dtype=cp.int32)
        active[: len(keep)] = self.active[idx]
        colmap = cp.zeros(width, dtype=cp.int32)
        colmap[: len(keep)] = cp.asarray(self.cols[keep].astype(np.int32))
        self.seeds, self.lost, self.active, self.colmap = seeds, lost, active, colmap
        self.cols = self.cols[keep]
        self.width = width


def _ppr_block(dg: _DeviceGraph, direction: str, seeds: np.ndarray, damping: float, tol: float, max_iter: int):
    """PPR of up to BATCH seeds on the device: (x (n, K) in the walk's numbering, K >= len(seeds), iterations,
    converged, delta)."""
    walk = dg.walk(direction)
    b = _Block(walk, seeds)
    width0 = b.width
    final = None
    if width0 > 1:
        final = cp.empty((walk.n, width0), dtype=cp.float64)
        if width0 > b.k:
            final[:, b.k :] = 0.0
    n_groups = walk.row_blocks + walk.long_blocks
    partial = cp.empty(max(n_groups, 1) * 2 * 64, dtype=cp.float64)
    chunk_out = cp.empty(max(walk.n_chunks, 1) * 64, dtype=cp.float64)
    x_new = cp.empty_like(b.x)
    z_new = cp.empty_like(b.z)
    ppr_rows, ppr_long, ppr_finish = {}, {}, {}
    while True:
        w = b.width
        if w not in ppr_rows:
            ppr_rows[w], ppr_long[w] = (_kernel(f, w, _L2_MODE) for f in ("ppr_rows", "ppr_long"))
            ppr_finish[w] = _kernel("ppr_finish", w)
        state = (b.x, b.z, x_new, z_new, walk.inv_out, b.seeds, b.active, b.lost, np.float64(damping))
        state += (np.uint64(_HOT_BYTES),)
        ppr_rows[w](
            (max(walk.row_blocks + walk.chunk_blocks, 1),), (256,),
            (walk.indptr, walk.indices, np.int64(walk.n), *state, np.int64(walk.row_blocks), np.int64(walk.n_chunks),
             walk.chunk_lo, walk.chunk_hi, chunk_out, partial),
        )  # fmt: skip
        if walk.n_long:
            ppr_long[w](
                (walk.long_blocks,), (256,),
                (walk.long_rows, walk.chunk_ptr, np.int64(walk.n_long), *state, chunk_out,
                 partial[walk.row_blocks * 2 * w :]),
            )  # fmt: skip
        ppr_finish[w](
            (w,), (256,),
            (partial, np.int64(n_groups), b.lost, b.active, b.colmap, b.iterations, b.delta, b.converged,
             np.float64(tol), np.int64(max_iter)),
        )  # fmt: skip
        b.x, x_new = x_new, b.x
        b.z, z_new = z_new, b.z
        moving = np.flatnonzero(b.active.get()[: len(b.cols)])  # the one host sync of an iteration
        if not len(moving):
            break
        if _width(len(moving)) < w:  # compact: the order of every sum is the same at any width
            b.compact(moving, final)
            x_new = cp.empty_like(b.x)
            z_new = cp.empty_like(b.z)
    if final is None:
        final = b.x
    else:
        final[:, cp.asarray(b.cols)] = b.x[:, : len(b.cols)]
    return final, b.iterations.get(), b.converged.get().astype(bool), b.delta.get()


def personalized_pagerank(
    g: Graph,
    seeds,
    *,
    direction: str = "follows",
    damping: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
    method: str = "exact",
    epsilon: float = DEFAULT_EPSILON,
    walks: float = DEFAULT_WALKS,
) -> PageRank:
    """Twin of :func:`compute.algorithms.wtf.personalized_pagerank`, every method (the local ones:
    :mod:`compute.gpu.wtf_push`)."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    s = check_wtf(g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter)
    local = check_local(method, epsilon, walks)
    dg = device_graph(g)
    k = len(s)
    values = np.zeros((k, g.n_nodes))
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.zeros(k)
    for lo in range(0, k, BATCH):
        block = s[lo : lo + BATCH]
        x, _, order, it, conv, d = _estimate(
            dg, direction, block, damping, tol, max_iter, local, push_epsilon(method, epsilon)
        )
        rows = x if order is None else x[dg.walk(direction).rank]
        values[lo : lo + len(block)] = rows[:, : len(block)].T.get()
        iterations[lo : lo + BATCH], converged[lo : lo + BATCH], delta[lo : lo + BATCH] = it, conv, d
    return PageRank(s.astype(np.int64), values, iterations, converged, delta)


def _estimate(dg: _DeviceGraph, direction: str, block: np.ndarray, damping: float, tol: float, max_iter: int,
              local: float | None, epsilon: float | None):  # fmt: skip
    """One block's PPR by the method asked: (x (n, width), the seeds' rows of x, x's row -> node order or None
    for node indices, iterations, converged, delta). ``local``: None for the exact method, else the walks per
    unit of residual (0: the push alone); ``epsilon`` None: no push (plain walks from the seeds)."""
    if local is None:
        walk = dg.walk(direction)
        x, it, conv, d = _ppr_block(dg, direction, block, damping, tol, max_iter)
        return x, walk.rank[cp.asarray(block)], walk.order, it, conv, d
    csr = dg.out_csr(direction)
    x, pushes, residual = local_block(
        csr.indptr, csr.indices, block, _width(len(block)), damping=damping, epsilon=epsilon, walks=local
    )
    return x, cp.asarray(block), None, pushes, np.ones(len(block), dtype=bool), residual


def _circle_candidates(x: cp.ndarray, seed_rows: cp.ndarray, order: cp.ndarray | None, circle: int):
    """Per column j: (nodes, ppr) on the host of every non-seed node whose PPR is at least the power of two at or
    below the (circle - 1)-th largest non-seed value, less the ranking's slack (a superset of the circle's other
    members; the seed may be among them). ``x``'s rows are numbered by ``order`` (row -> node; None: rows are
    node indices) and ``seed_rows`` are the seeds' rows; the nodes come back as node indices."""
    k, width = len(seed_rows), x.shape[1]
    want = circle - 1
    if want == 0:
        return [(np.zeros(0, np.int64), np.zeros(0)) for _ in range(k)]
    hist = cp.zeros((width, _BINS), dtype=cp.uint64)
    dev_seeds = cp.full(width, -1, dtype=cp.int64)
    dev_seeds[:k] = seed_rows
    blocks = min(1024, max(1, (x.shape[0] + 255) // 256))
    _kernel("exponent_histogram", width)(
        (blocks, max(1, width // 8)), (256,), (x, np.int64(x.shape[0]), dev_seeds, hist)
    )
    hist = hist.get()
    threshold = np.full(width, np.inf)
    for j in range(k):
        above = np.cumsum(hist[j, ::-1])  # counts at or above each exponent, from the top
        reach = np.flatnonzero(above >= want)
        exponent = _BINS - 1 - int(reach[0]) if len(reach) else 0  # everyone > 0 when fewer than want
        threshold[j] = np.ldexp(1.0 - RANK_SLACK, exponent - 1023) if exponent else 5e-324
    rows, cols = cp.nonzero(x >= cp.asarray(threshold)[None, :])
    values = x[rows, cols].get()
    nodes = (rows if order is None else order[rows]).get()
    cols = cols.get()
    order = np.argsort(cols, kind="stable")
    bounds = np.searchsorted(cols[order], np.arange(k + 1))
    return [(nodes[order[bounds[j] : bounds[j + 1]]], values[order[bounds[j] : bounds[j + 1]]]) for j in range(k)]


# --------------------------------------------------------------------------------------------------------------
# Money, all seeds of a block at once
# --------------------------------------------------------------------------------------------------------------


def _money_block(dg: _DeviceGraph, direction: str, seeds: np.ndarray, circles: list[np.ndarray], alpha: float,
                 tol: float, max_iter: int, steps: dict | None = None) -> list[MoneyScores]:  # fmt: skip
    """Money on each seed's circle (``steps``: a dict for the steps' synchronized times, as :class:`Steps`)."""
    step = Steps(steps)
    out_csr = dg.out_csr(direction)
    n, k = dg.n, len(seeds)
    hubs_host = np.concatenate(circles)
    hub_seed_host = np.repeat(np.arange(k), [len(c) for c in circles])
    hubs = cp.asarray(hubs_host)
    hub_seed = cp.asarray(hub_seed_host)
    hub_ptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum([len(c) for c in circles], out=hub_ptr[1:])
    own_host = np.zeros(len(hubs_host), dtype=np.uint8)
    own_host[hub_ptr[:-1] + np.array([np.searchsorted(c, s) for c, s in zip(circles, seeds)])] = 1
    own = cp.asarray(own_host)
    d_out = out_csr.degree[hubs]
    row_ptr = cp.zeros(len(hubs) + 1, dtype=cp.int64)
    row_ptr[1:] = cp.cumsum(d_out)
    m = int(row_ptr[-1].get())
    edge = cp.arange(m, dtype=cp.int64)
    owner = cp.searchsorted(row_ptr[1:], edge, side="right")
    targets = out_csr.indices[out_csr.indptr[hubs[owner]] + edge - row_ptr[owner]].astype(cp.int64)
    del edge
    step("money_expand")
    # authorities per seed: (seed, account) keys, unique, so each seed's authorities are ascending and apart
    keys, col = cp.unique(hub_seed[owner] * n + targets, return_inverse=True)
    col = col.ravel()
    step("money_unique")
    auth_seed, authorities = keys // n, keys % n
    n_auth = len(keys)
    d_in = cp.bincount(col, minlength=n_auth).astype(cp.float64) if m else cp.zeros(0, dtype=cp.float64)
    n_hubs = len(hubs)
    pairs = cp.sort(col.astype(cp.int64) * n_hubs + owner)  # (authority, hub): each row's hubs ascending
    bt_ptr = cp.zeros(n_auth + 1, dtype=cp.int64)
    if m:
        bt_ptr[1:] = cp.cumsum(cp.bincount(col, minlength=n_auth))
    bt_idx = (pairs % n_hubs).astype(cp.int32)
    b_idx = col.astype(cp.int32)
    del pairs, owner, targets
    inv_out = cp.where(d_out > 0, 1.0 / cp.maximum(d_out, 1), 0.0)
    inv_in = cp.where(d_in > 0, 1.0 / cp.maximum(d_in, 1.0), 0.0)
    sim = cp.asarray(own_host.astype(np.float64))
    simz = sim * inv_out
    rel = cp.zeros(n_auth, dtype=cp.float64)
    relz = cp.zeros(n_auth, dtype=cp.float64)
    diff = cp.empty(n_hubs, dtype=cp.float64)
    active = cp.ones(k, dtype=cp.int32)
    iterations = cp.zeros(k, dtype=cp.int64)
    converged = cp.zeros(k, dtype=cp.int32)
    dev_hub_ptr = cp.asarray(hub_ptr)
    hub_chunks, chunk_lo, chunk_hi, chunk_owner = _chunks(row_ptr)
    n_chunks = len(chunk_lo)
    chunk_seed = hub_seed[chunk_owner]
    chunk_out = cp.empty(max(n_chunks, 1), dtype=cp.float64)
    relevance, chunks, similarity, finish = (
        _kernel(f) for f in ("money_relevance", "money_chunks", "money_similarity", "money_finish")
    )
    step("money_setup", money_edges=m, money_authorities=n_auth)

    def iterate() -> None:
        # a converged seed's kernels skip it, so iterations past convergence change nothing: check every few
        for _ in range(_MONEY_CHECK):
            if n_auth:
                relevance(
                    ((n_auth * 32 + 255) // 256,), (256,),
                    (bt_ptr, bt_idx, np.int64(n_auth), simz, auth_seed, active, inv_in, rel, relz),
                )  # fmt: skip
            if n_chunks:
                chunks(
                    ((n_chunks * 32 + 255) // 256,), (256,),
                    (b_idx, np.int64(n_chunks), chunk_lo, chunk_hi, chunk_seed, active, relz, chunk_out),
                )  # fmt: skip
            similarity(
                ((n_hubs * 32 + 255) // 256,), (256,),
                (row_ptr, b_idx, np.int64(n_hubs), relz, hub_seed, active, own, np.float64(alpha), inv_out,
                 hub_chunks, chunk_out, sim, simz, diff),
            )  # fmt: skip
            finish(
                (k,), (256,), (diff, dev_hub_ptr, active, iterations, converged, np.float64(tol), np.int64(max_iter))
            )

    iterate = replayable(iterate)
    done = 0
    while True:
        iterate()
        done += _MONEY_CHECK
        if done >= max_iter or not active.get().any():
            break
    step("money_iterate", money_launched=done)
    sim_h, rel_h = sim.get(), rel.get()
    auth_h, auth_seed_h = authorities.get(), auth_seed.get()
    auth_ptr = np.searchsorted(auth_seed_h, np.arange(k + 1))
    it_h, conv_h = iterations.get(), converged.get()
    step("money_read")
    return [
        MoneyScores(
            hubs_host[hub_ptr[j] : hub_ptr[j + 1]],
            sim_h[hub_ptr[j] : hub_ptr[j + 1]],
            auth_h[auth_ptr[j] : auth_ptr[j + 1]].astype(np.int64),
            rel_h[auth_ptr[j] : auth_ptr[j + 1]],
            int(it_h[j]),
            bool(conv_h[j]),
        )
        for j in range(k)
    ]


def wtf(
    g: Graph,
    seeds,
    *,
    direction: str = "follows",
    circle: int = 1000,
    top: int = 20,
    damping: float = 0.85,
    alpha: float = 0.15,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
    method: str = "exact",
    epsilon: float = DEFAULT_EPSILON,
    walks: float = DEFAULT_WALKS,
) -> list[Recommendations]:
    """Twin of :func:`compute.algorithms.wtf.wtf`, every method (the local ones: :mod:`compute.gpu.wtf_push`)."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    s = check_wtf(
        g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter, circle=circle, top=top,
        alpha=alpha,
    )  # fmt: skip
    local = check_local(method, epsilon, walks)
    dg = device_graph(g)
    out: list[Recommendations] = []
    for lo in range(0, len(s), BATCH):
        block = s[lo : lo + BATCH]
        est = _estimate(dg, direction, block, damping, tol, max_iter, local, push_epsilon(method, epsilon))
        out += _recommend_block(g, dg, direction, block, est, circle, top, alpha, tol, max_iter)
    return out


def _recommend_block(g: Graph, dg: _DeviceGraph, direction: str, block: np.ndarray, est: tuple, circle: int,
                     top: int, alpha: float, tol: float, max_iter: int, steps: dict | None = None,
                     ) -> list[Recommendations]:  # fmt: skip
    """A block's lists from its PPR estimate ``est`` (what :func:`_estimate` returns): the circles of trust,
    Money on them, and each seed's relevant and similar accounts. ``steps``: a dict for the steps' synchronized
    times (benchmarks), as :class:`._device.Steps`."""
    step = Steps(steps)
    x, ranks, order, iterations, converged, delta = est
    out_csr = dg.out_csr(direction)
    rank = None if order is None else dg.walk(direction).rank
    seed_ppr = x[ranks, cp.arange(len(block))].get()
    candidates = _circle_candidates(x, ranks, order, circle)
    step("circle_candidates", circle_candidates=sum(len(c[0]) for c in candidates))
    circles = []
    for j, (nodes, ppr) in enumerate(candidates):
        circles.append(circle_of_trust(nodes, ppr, int(block[j]), float(seed_ppr[j]), circle))
    step("circle_rank")
    scores = _money_block(dg, direction, block, [np.sort(c[0]) for c in circles], alpha, tol, max_iter, steps)
    step = Steps(steps)  # Money timed its own steps: the lists' clock starts here
    bounds = out_csr.indptr[cp.asarray(np.c_[block, block + 1].ravel())].get()
    # which accounts a seed links to, asked on the device (a flag per account, set from the seed's row and cleared
    # after): a hub's row can hold millions of followers, and the lists ask about a few thousand accounts at most
    flags = cp.zeros(dg.n, dtype=cp.bool_)
    out = []
    for j, seed in enumerate(block.tolist()):
        row = out_csr.indices[int(bounds[2 * j]) : int(bounds[2 * j + 1])]
        flags[row] = True

        def excluded(nodes, seed=seed):
            nodes = np.asarray(nodes, dtype=np.int64)
            hit = flags[cp.asarray(nodes)].get() if len(nodes) else np.zeros(0, dtype=bool)
            return hit | (nodes == seed)

        def ppr_of(nodes, j=j):
            nodes = cp.asarray(np.asarray(nodes, dtype=np.int64))
            return x[nodes if rank is None else rank[nodes], j].get() if len(nodes) else np.zeros(0)

        out.append(
            recommendations(
                g,
                seed=seed,
                direction=direction,
                ppr_stats=(iterations[j], converged[j], delta[j]),
                circle=circles[j],
                money=scores[j],
                linked=excluded,
                top=top,
                ppr_of=ppr_of,
            )
        )
        flags[row] = False
    step("lists")
    return out
