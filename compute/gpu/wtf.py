"""GPU twin of WTF (issue 15): personalized PageRank in blocks of seeds, the circle of trust and Money, in CuPy.
Same functions, signatures and defaults as :mod:`compute.algorithms.wtf`; the values agree with it to 1e-9
relative, and a seed's results are bitwise the same alone or in any batch.

* The graph stays on the device between calls (:func:`device_graph`, one upload per :class:`compute.graphs.Graph`
  object, weakly held): its CSR and the reverse CSR, which is built here by a stable sort (the host's
  :func:`compute.graphs.transpose` is a numba kernel, slow where numba is missing).
* Every sum over a CSR row runs in one fixed order whatever the number of columns (:data:`_SOURCE`): a warp per
  row of up to :data:`_LONG` entries (lane-strided, then a butterfly), longer rows in chunks of :data:`_LONG`
  (a block each, warps in order) whose partial sums are added in chunk order. Column sums (dangling mass, the
  L1 change) use a fixed grid. So a column's bits never depend on the other columns of its block.
* PPR: the pull iteration over the reverse CSR on an (n, K) block, K the block's width rounded up to a power of
  two (1..64); a converged column keeps its values (per-seed masks). The circle: an exponent histogram per
  column finds the power of two below the (circle - 1)-th value; what passes it goes to the host, which ranks it
  with the reference's :func:`compute.results.circle_of_trust`.
* Money: the bipartite graphs of all the block's seeds stacked into one (rows of different seeds never mix), so
  one pair of row sums per iteration serves the whole block; a seed that converged keeps its scores.
"""

from __future__ import annotations

import weakref

import cupy as cp
import numpy as np

from ..graphs import Graph
from ..results import (
    BATCH,
    RANK_SLACK,
    MoneyScores,
    PageRank,
    Recommendations,
    check_wtf,
    circle_of_trust,
    recommendations,
)
from ._device import module

__all__ = ["device_graph", "personalized_pagerank", "wtf"]

#: rows longer than this are summed in chunks of this many entries, one thread block each
_LONG = 4096
#: blocks of the column sums: fixed, so a column's sum has one order whatever the block width
_SUM_BLOCKS = 1024
_WIDTHS = (1, 2, 4, 8, 16, 32, 64)

_SOURCE = r"""
#define FULL 0xffffffffu

template <int K>
__device__ __forceinline__ void warp_sum(double (&acc)[K]) {
#pragma unroll
    for (int c = 0; c < K; ++c) {
        double v = acc[c];
        // butterfly: every lane ends with the same bits (a + b == b + a), one order for every row
        v += __shfl_xor_sync(FULL, v, 16);
        v += __shfl_xor_sync(FULL, v, 8);
        v += __shfl_xor_sync(FULL, v, 4);
        v += __shfl_xor_sync(FULL, v, 2);
        v += __shfl_xor_sync(FULL, v, 1);
        acc[c] = v;
    }
}

// out[r, :] = sum of y[indices[e], :] over the row, one warp per row (rows of at most LONG entries)
template <int K>
__global__ void pull_short(const long long* __restrict__ indptr, const int* __restrict__ indices,
                           const long long* __restrict__ rows, long long n_rows,
                           const double* __restrict__ y, double* __restrict__ out) {
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (w >= n_rows) return;  // whole warps leave together
    long long r = rows[w];
    double acc[K];
#pragma unroll
    for (int c = 0; c < K; ++c) acc[c] = 0.0;
    long long end = indptr[r + 1];
    for (long long e = indptr[r] + lane; e < end; e += 32) {
        const double* src = y + (long long)indices[e] * K;
#pragma unroll
        for (int c = 0; c < K; ++c) acc[c] += src[c];
    }
    warp_sum<K>(acc);
#pragma unroll
    for (int c = 0; c < K; ++c)
        if ((c & 31) == lane) out[r * K + c] = acc[c];
}

// partial[ch, :] = sum over the chunk's entries, one block of 256 per chunk
template <int K>
__global__ void pull_chunks(const int* __restrict__ indices, const long long* __restrict__ lo,
                            const long long* __restrict__ hi, const double* __restrict__ y,
                            double* __restrict__ partial) {
    __shared__ double part[8][K];
    long long ch = blockIdx.x;
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    double acc[K];
#pragma unroll
    for (int c = 0; c < K; ++c) acc[c] = 0.0;
    for (long long e = lo[ch] + t; e < hi[ch]; e += 256) {
        const double* src = y + (long long)indices[e] * K;
#pragma unroll
        for (int c = 0; c < K; ++c) acc[c] += src[c];
    }
    warp_sum<K>(acc);
    if (lane == 0) {
#pragma unroll
        for (int c = 0; c < K; ++c) part[warp][c] = acc[c];
    }
    __syncthreads();
    for (int c = t; c < K; c += 256) {
        double s = part[0][c];
        for (int w = 1; w < 8; ++w) s += part[w][c];
        partial[ch * K + c] = s;
    }
}

// out[rows[i], c] = the row's chunk partials added in chunk order
template <int K>
__global__ void pull_long(const long long* __restrict__ rows, const long long* __restrict__ chunk_ptr,
                          long long n_rows, const double* __restrict__ partial, double* __restrict__ out) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_rows * K) return;
    long long r = i / K;
    int c = (int)(i % K);
    double s = 0.0;
    for (long long ch = chunk_ptr[r]; ch < chunk_ptr[r + 1]; ++ch) s += partial[ch * K + c];
    out[rows[r] * K + c] = s;
}

// per column, block partial sums of a[rows[i], c] (b == NULL) or |a[i, c] - b[i, c]| (rows == NULL);
// launched on a fixed grid, so each column is summed in one order whatever K is
template <int K>
__global__ void column_sums(const double* __restrict__ a, const double* __restrict__ b,
                            const long long* __restrict__ rows, long long n_items, double* __restrict__ partial) {
    __shared__ double part[8][K];
    int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    double acc[K];
#pragma unroll
    for (int c = 0; c < K; ++c) acc[c] = 0.0;
    for (long long i = (long long)blockIdx.x * 256 + t; i < n_items; i += (long long)gridDim.x * 256) {
        long long r = rows ? rows[i] : i;
#pragma unroll
        for (int c = 0; c < K; ++c) acc[c] += b ? fabs(a[r * K + c] - b[r * K + c]) : a[r * K + c];
    }
    warp_sum<K>(acc);
    if (lane == 0) {
#pragma unroll
        for (int c = 0; c < K; ++c) part[warp][c] = acc[c];
    }
    __syncthreads();
    for (int c = t; c < K; c += 256) {
        double s = part[0][c];
        for (int w = 1; w < 8; ++w) s += part[w][c];
        partial[(long long)blockIdx.x * K + c] = s;
    }
}

// out[c] = partial[0, c] + partial[1, c] + ... in block order
template <int K>
__global__ void finish_sums(const double* __restrict__ partial, int n_blocks, double* __restrict__ out) {
    int c = threadIdx.x;
    if (c >= K) return;
    double s = 0.0;
    for (int b = 0; b < n_blocks; ++b) s += partial[(long long)b * K + c];
    out[c] = s;
}

// out[j] = v[ptr[j]] + v[ptr[j] + 1] + ... + v[ptr[j + 1] - 1], in order
extern "C" __global__ void segment_sums(const double* __restrict__ v, const long long* __restrict__ ptr,
                                        long long k, double* __restrict__ out) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= k) return;
    double s = 0.0;
    for (long long i = ptr[j]; i < ptr[j + 1]; ++i) s += v[i];
    out[j] = s;
}

// hist[c, e]: values of column c (not its seed's row) with biased exponent e, for x > 0
template <int K>
__global__ void exponent_histogram(const double* __restrict__ x, long long n, const long long* __restrict__ seeds,
                                   unsigned long long* __restrict__ hist) {
    __shared__ unsigned int h[2048];
    int c = blockIdx.y;
    for (int i = threadIdx.x; i < 2048; i += blockDim.x) h[i] = 0;
    __syncthreads();
    long long skip = seeds[c];
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = x[i * K + c];
        if (v > 0.0 && i != skip) atomicAdd(&h[(unsigned long long)__double_as_longlong(v) >> 52], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2048; i += blockDim.x)
        if (h[i]) atomicAdd(&hist[(long long)c * 2048 + i], (unsigned long long)h[i]);
}
"""

_NAMES = tuple(
    f"{kernel}<{k}>"
    for k in _WIDTHS
    for kernel in ("pull_short", "pull_chunks", "pull_long", "column_sums", "finish_sums", "exponent_histogram")
)


def _kernel(name: str, k: int):
    return module(_SOURCE, _NAMES).get_function(f"{name}<{k}>")


def _width(k: int) -> int:
    return next(w for w in _WIDTHS if w >= k)


# --------------------------------------------------------------------------------------------------------------
# The graph on the device
# --------------------------------------------------------------------------------------------------------------


class _Csr:
    """A CSR on the device with its rows split for :func:`_pull`: short rows (a warp each) and long ones (chunks
    of :data:`_LONG` entries, a block each)."""

    def __init__(self, indptr: cp.ndarray, indices: cp.ndarray) -> None:
        self.indptr = indptr.astype(cp.int64, copy=False)
        self.indices = indices.astype(cp.int32, copy=False)
        self.n_rows = len(indptr) - 1
        deg = cp.diff(self.indptr)
        self.degree = deg
        long = deg > _LONG
        self.short_rows = cp.flatnonzero(~long & (deg > 0)).astype(cp.int64)
        self.empty_rows = cp.flatnonzero(deg == 0).astype(cp.int64)
        self.long_rows = cp.flatnonzero(long).astype(cp.int64)
        n_chunks = (deg[self.long_rows] + _LONG - 1) // _LONG
        self.chunk_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(n_chunks)])
        total = int(self.chunk_ptr[-1].get())
        chunk = cp.arange(total, dtype=cp.int64)
        owner = cp.searchsorted(self.chunk_ptr[1:], chunk, side="right")
        self.chunk_lo = self.indptr[self.long_rows[owner]] + (chunk - self.chunk_ptr[owner]) * _LONG
        self.chunk_hi = cp.minimum(self.chunk_lo + _LONG, self.indptr[self.long_rows[owner] + 1])
        self.n_chunks = total

    @property
    def nbytes(self) -> int:
        return int(self.indptr.nbytes + self.indices.nbytes)


def _pull(csr: _Csr, y: cp.ndarray) -> cp.ndarray:
    """out (n_rows, K): row r = sum of y's rows at the row's entries, in the fixed order of :data:`_SOURCE`."""
    k = y.shape[1]
    out = cp.empty((csr.n_rows, k), dtype=cp.float64)
    if len(csr.empty_rows):
        out[csr.empty_rows] = 0.0
    n = len(csr.short_rows)
    if n:
        _kernel("pull_short", k)(
            ((n * 32 + 255) // 256,), (256,), (csr.indptr, csr.indices, csr.short_rows, np.int64(n), y, out)
        )
    if csr.n_chunks:
        partial = cp.empty((csr.n_chunks, k), dtype=cp.float64)
        _kernel("pull_chunks", k)((csr.n_chunks,), (256,), (csr.indices, csr.chunk_lo, csr.chunk_hi, y, partial))
        nl = len(csr.long_rows)
        _kernel("pull_long", k)(
            ((nl * k + 255) // 256,), (256,), (csr.long_rows, csr.chunk_ptr, np.int64(nl), partial, out)
        )
    return out


def _column_sums(a: cp.ndarray, b: cp.ndarray | None = None, rows: cp.ndarray | None = None) -> cp.ndarray:
    """float64[K]: per column, the sum of a's ``rows`` (b None) or of |a - b| over every row."""
    k = a.shape[1]
    n = len(rows) if rows is not None else a.shape[0]
    partial = cp.empty((_SUM_BLOCKS, k), dtype=cp.float64)
    null = np.uint64(0)
    _kernel("column_sums", k)(
        (_SUM_BLOCKS,), (256,), (a, null if b is None else b, null if rows is None else rows, np.int64(n), partial)
    )
    out = cp.empty(k, dtype=cp.float64)
    _kernel("finish_sums", k)((1,), (64,), (partial, np.int32(_SUM_BLOCKS), out))
    return out


class _DeviceGraph:
    """A graph resident on the device: its CSR and reverse CSR, each walk's pull side, 1 / out-degree and
    dangling accounts."""

    def __init__(self, g: Graph) -> None:
        indptr = cp.asarray(g.indptr)
        indices = cp.asarray(g.indices.astype(np.int32, copy=False))
        self.n = g.n_nodes
        self.forward = _Csr(indptr, indices)
        # the reverse CSR: (target, source) keys sorted, so each reverse row lists its sources ascending
        src = cp.searchsorted(indptr[1:], cp.arange(len(indices), dtype=cp.int64), side="right")
        keys = cp.sort(indices.astype(cp.int64) * max(self.n, 1) + src)
        del src
        t_indptr = cp.zeros(self.n + 1, dtype=cp.int64)
        t_indptr[1:] = cp.cumsum(cp.bincount(indices, minlength=self.n))
        self.backward = _Csr(t_indptr, (keys % max(self.n, 1)).astype(cp.int32))
        del keys
        self.walks: dict[str, tuple[_Csr, _Csr, cp.ndarray, cp.ndarray]] = {}

    def walk(self, direction: str) -> tuple[_Csr, _Csr, cp.ndarray, cp.ndarray]:
        """(out CSR, pull CSR, 1 / out-degree, dangling accounts) of the walk in ``direction``."""
        if direction not in self.walks:
            out, pull = (self.forward, self.backward) if direction == "follows" else (self.backward, self.forward)
            deg = out.degree
            inv = cp.where(deg > 0, 1.0 / cp.maximum(deg, 1), 0.0)
            self.walks[direction] = (out, pull, inv, cp.flatnonzero(deg == 0).astype(cp.int64))
        return self.walks[direction]

    @property
    def nbytes(self) -> int:
        return self.forward.nbytes + self.backward.nbytes


_RESIDENT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_graph(g: Graph) -> _DeviceGraph:
    """``g`` on the device, uploaded on first use and kept while ``g`` lives (a worker keeps its graph)."""
    dg = _RESIDENT.get(g)
    if dg is None:
        dg = _DeviceGraph(g)
        _RESIDENT[g] = dg
    return dg


# --------------------------------------------------------------------------------------------------------------
# PPR
# --------------------------------------------------------------------------------------------------------------


def _ppr_block(dg: _DeviceGraph, direction: str, seeds: np.ndarray, damping: float, tol: float, max_iter: int):
    """PPR of up to BATCH seeds on the device: (x (n, K) with K >= len(seeds), iterations, converged, delta)."""
    _, pull, inv_out, dangling = dg.walk(direction)
    k = len(seeds)
    width = _width(k)
    cols = cp.arange(k)
    dev_seeds = cp.asarray(seeds)
    x = cp.zeros((dg.n, width), dtype=cp.float64)
    x[dev_seeds, cols] = 1.0
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.full(k, np.inf)
    active = np.ones(k, dtype=bool)
    while active.any():
        nxt = _pull(pull, x * inv_out[:, None])
        lost = _column_sums(x, rows=dangling)[:k] if len(dangling) else cp.zeros(k)
        nxt *= damping
        nxt[dev_seeds, cols] += damping * lost + (1.0 - damping)
        change = _column_sums(nxt, x).get()[:k]
        frozen = np.flatnonzero(~active)
        if len(frozen):  # a converged column keeps its values: the bits it would have alone
            nxt[:, cp.asarray(frozen)] = x[:, cp.asarray(frozen)]
        x = nxt
        iterations[active] += 1
        delta[active] = change[active]
        done = active & (change < tol)
        converged |= done
        active &= ~done & (iterations < max_iter)
    return x, iterations, converged, delta


def personalized_pagerank(
    g: Graph,
    seeds,
    *,
    direction: str = "follows",
    damping: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
) -> PageRank:
    """Twin of :func:`compute.algorithms.wtf.personalized_pagerank`."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    s = check_wtf(g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter)
    dg = device_graph(g)
    k = len(s)
    values = np.zeros((k, g.n_nodes))
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.zeros(k)
    for lo in range(0, k, BATCH):
        block = s[lo : lo + BATCH]
        x, it, conv, d = _ppr_block(dg, direction, block, damping, tol, max_iter)
        values[lo : lo + len(block)] = x[:, : len(block)].T.get()
        iterations[lo : lo + BATCH], converged[lo : lo + BATCH], delta[lo : lo + BATCH] = it, conv, d
    return PageRank(s.astype(np.int64), values, iterations, converged, delta)


def _circle_candidates(x: cp.ndarray, seeds: np.ndarray, circle: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per column j: (nodes, ppr) on the host of every non-seed node whose PPR is at least the power of two at or
    below the (circle - 1)-th largest non-seed value, less the ranking's slack (a superset of the circle's other
    members)."""
    k, width = len(seeds), x.shape[1]
    want = circle - 1
    out = []
    if want == 0:
        return [(np.zeros(0, np.int64), np.zeros(0)) for _ in range(k)]
    hist = cp.zeros((width, 2048), dtype=cp.uint64)
    dev_seeds = cp.asarray(np.r_[seeds, np.full(width - k, -1)].astype(np.int64))
    blocks = min(4096, max(1, (x.shape[0] + 255) // 256))
    _kernel("exponent_histogram", width)((blocks, width), (256,), (x, np.int64(x.shape[0]), dev_seeds, hist))
    hist = hist.get()
    for j in range(k):
        above = np.cumsum(hist[j, ::-1])  # counts at or above each exponent, from the top
        reach = np.flatnonzero(above >= want)
        exponent = 2047 - int(reach[0]) if len(reach) else 0  # everyone > 0 when fewer than want
        threshold = np.float64(np.ldexp(1.0 - RANK_SLACK, exponent - 1023)) if exponent else np.float64(5e-324)
        col = x[:, j]
        nodes = cp.flatnonzero(col >= threshold)
        out.append((nodes.get().astype(np.int64), col[nodes].get()))
    return out


# --------------------------------------------------------------------------------------------------------------
# Money, all seeds of a block at once
# --------------------------------------------------------------------------------------------------------------


def _money_block(dg: _DeviceGraph, direction: str, seeds: np.ndarray, circles: list[np.ndarray], alpha: float,
                 tol: float, max_iter: int) -> list[MoneyScores]:  # fmt: skip
    out_csr, _, _, _ = dg.walk(direction)
    n, k = dg.n, len(seeds)
    hubs_host = np.concatenate(circles)
    hub_seed_host = np.repeat(np.arange(k), [len(c) for c in circles])
    hubs = cp.asarray(hubs_host)
    hub_seed = cp.asarray(hub_seed_host)
    hub_ptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum([len(c) for c in circles], out=hub_ptr[1:])
    own = cp.asarray(hub_ptr[:-1] + np.array([np.searchsorted(c, s) for c, s in zip(circles, seeds)]))
    d_out = out_csr.degree[hubs]
    row_ptr = cp.zeros(len(hubs) + 1, dtype=cp.int64)
    row_ptr[1:] = cp.cumsum(d_out)
    m = int(row_ptr[-1].get())
    edge = cp.arange(m, dtype=cp.int64)
    owner = cp.searchsorted(row_ptr[1:], edge, side="right")
    targets = out_csr.indices[out_csr.indptr[hubs[owner]] + edge - row_ptr[owner]].astype(cp.int64)
    # authorities per seed: (seed, account) keys, unique, so each seed's authorities are ascending and apart
    keys, col = cp.unique(hub_seed[owner] * n + targets, return_inverse=True)
    col = col.ravel()
    auth_seed, authorities = keys // n, keys % n
    n_auth = len(keys)
    d_in = cp.bincount(col, minlength=n_auth).astype(cp.float64) if m else cp.zeros(0, dtype=cp.float64)
    b = _Csr(row_ptr, col.astype(cp.int32))
    n_hubs = len(hubs)
    pairs = cp.sort(col.astype(cp.int64) * n_hubs + owner)  # (authority, hub): each row's hubs ascending
    bt_ptr = cp.zeros(n_auth + 1, dtype=cp.int64)
    if m:
        bt_ptr[1:] = cp.cumsum(cp.bincount(col, minlength=n_auth))
    bt = _Csr(bt_ptr, (pairs % n_hubs).astype(cp.int32))
    del pairs
    inv_out = cp.where(d_out > 0, 1.0 / cp.maximum(d_out, 1), 0.0)[:, None]
    inv_in = cp.where(d_in > 0, 1.0 / cp.maximum(d_in, 1.0), 0.0)[:, None]
    sim = cp.zeros((len(hubs), 1), dtype=cp.float64)
    sim[own, 0] = 1.0
    rel = cp.zeros((n_auth, 1), dtype=cp.float64)
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    active = np.ones(k, dtype=bool)
    hub_bounds = cp.asarray(hub_ptr)
    change_dev = cp.empty(k, dtype=cp.float64)
    segment_sums = module(_SOURCE, _NAMES).get_function("segment_sums")
    while active.any():
        rel_new = _pull(bt, sim * inv_out)
        new = _pull(b, rel_new * inv_in)
        new *= 1.0 - alpha
        new[own, 0] += alpha
        # per seed L1 change, each summed over its own hubs in order (alone or in a batch: the same bits)
        diff = cp.abs(new - sim).ravel()
        segment_sums(((k + 127) // 128,), (128,), (diff, hub_bounds, np.int64(k), change_dev))
        change = change_dev.get()
        moving = cp.asarray(active)
        sim = cp.where(moving[hub_seed][:, None], new, sim)
        rel = cp.where(moving[auth_seed][:, None], rel_new, rel)
        iterations[active] += 1
        done = active & (change < tol)
        converged |= done
        active &= ~done & (iterations < max_iter)
    sim_h, rel_h = sim.ravel().get(), rel.ravel().get()
    auth_h, auth_seed_h = authorities.get(), auth_seed.get()
    auth_ptr = np.searchsorted(auth_seed_h, np.arange(k + 1))
    return [
        MoneyScores(
            hubs_host[hub_ptr[j] : hub_ptr[j + 1]],
            sim_h[hub_ptr[j] : hub_ptr[j + 1]],
            auth_h[auth_ptr[j] : auth_ptr[j + 1]].astype(np.int64),
            rel_h[auth_ptr[j] : auth_ptr[j + 1]],
            int(iterations[j]),
            bool(converged[j]),
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
) -> list[Recommendations]:
    """Twin of :func:`compute.algorithms.wtf.wtf`."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    s = check_wtf(
        g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter, circle=circle, top=top,
        alpha=alpha,
    )  # fmt: skip
    dg = device_graph(g)
    out_csr, _, _, _ = dg.walk(direction)
    out: list[Recommendations] = []
    for lo in range(0, len(s), BATCH):
        block = s[lo : lo + BATCH]
        x, iterations, converged, delta = _ppr_block(dg, direction, block, damping, tol, max_iter)
        seed_ppr = x[cp.asarray(block), cp.arange(len(block))].get()
        circles = []
        for j, (nodes, ppr) in enumerate(_circle_candidates(x, block, circle)):
            circles.append(circle_of_trust(nodes, ppr, int(block[j]), float(seed_ppr[j]), circle))
        scores = _money_block(dg, direction, block, [np.sort(c[0]) for c in circles], alpha, tol, max_iter)
        for j, seed in enumerate(block.tolist()):
            lo_e, hi_e = (int(v) for v in out_csr.indptr[seed : seed + 2].get())
            linked = out_csr.indices[lo_e:hi_e].get().astype(np.int64)

            def ppr_of(nodes, j=j, x=x):
                nodes = np.asarray(nodes, dtype=np.int64)
                return x[cp.asarray(nodes), j].get() if len(nodes) else np.zeros(0)

            out.append(
                recommendations(
                    g,
                    seed=seed,
                    direction=direction,
                    ppr_stats=(iterations[j], converged[j], delta[j]),
                    circle=circles[j],
                    money=scores[j],
                    linked=linked,
                    top=top,
                    ppr_of=ppr_of,
                )
            )
    return out
