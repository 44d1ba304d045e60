"""GPU twin of WTF (issue 15): personalized PageRank in blocks of seeds, the circle of trust and Money, in CuPy.
Same functions, signatures and defaults as :mod:`compute.algorithms.wtf`; the values agree with it to 1e-9
relative, and a seed's results are bitwise the same alone or in any batch.

* The graph stays on the device between calls (:func:`device_graph`, one upload per :class:`compute.graphs.Graph`
  object, weakly held): its CSR and the reverse CSR (built here by a sort), and per walk direction a *renumbered*
  pull CSR (:class:`_Walk`): accounts ordered by their out-degree in the walk, highest first, so the entries a PPR
  iteration gathers most often sit together at the front of the vector (fewer cache sectors, more L2 hits), and
  dangling accounts (never gathered) at the end. The numbering stays inside; results come back in node indices.
* Every row sum has one order whatever the number of columns (:data:`_SOURCE`, ``chunk_tree``): a row is cut in
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
  :data:`_MONEY_CHECK` iterations).
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
    check_wtf,
    circle_of_trust,
    recommendations,
)
from ._device import module

__all__ = ["device_graph", "personalized_pagerank", "wtf"]

#: rows longer than this are summed in chunks of this many entries (a multiple of 32), added in chunk order
_LONG = 4096
#: rows per warp and warps per block of the fused PPR pass: the row groups of the column sums (fixed for every
#: width, so a column's sums have one order)
_ROWS_PER_WARP = 16
_WARPS = 8
_ROWS_PER_BLOCK = _ROWS_PER_WARP * _WARPS
_WIDTHS = (1, 2, 4, 8, 16, 32, 64)
#: L2 use of the PPR pass (benchmarks/wtf_gpu.md compares them): 0 plain loads; 1 the streams (entries, x,
#: 1 / out-degree, the outputs) marked evict-first; 2 as 1 and the gathers through one range policy: the first
#: _HOT_BYTES of the gathered vector (the accounts gathered most often) evict-last, the rest evict-first
_L2_MODE = 2
#: bytes of the gathered vector kept in the L2 (modes 2 and 3): half the H100's 50 MB (the L2 is two halves)
_HOT_BYTES = 24 << 20
#: Money iterations launched between two reads of the seeds' flags
_MONEY_CHECK = 8
#: exponent bins of the circle's histogram (values are in (0, 1])
_BINS = 1024

_SOURCE = r"""
#define FULL 0xffffffffu
#define LONG_ROW 4096
#define ROWS_PER_WARP 16
#define WARPS 8

// K columns: VEC doubles per lane and entry, LG lanes per entry, G entries gathered at once, R classes per lane
template <int K> struct Shape {
    static constexpr int VEC = K == 1 ? 1 : 2;
    static constexpr int LG = K / VEC;
    static constexpr int G = 32 / LG;
    static constexpr int R = LG;
};

// L2 policies (compile-time MODE: a run-time choice between loads broke the batch of loads in flight). Mode 1:
// the streams (entries, x, 1 / out-degree, outputs) marked evict-first; mode 2: also the gathers through one
// range policy: the first `hot` bytes of the gathered vector (the accounts gathered most often, first in the
// walk's numbering) evict-last, the rest of it evict-first.
__device__ __forceinline__ unsigned long long range_policy(const double* base, unsigned long long hot,
                                                           unsigned long long total) {
    unsigned long long p;
    const unsigned int t = total < 0xffffffffull ? (unsigned int)total : 0xffffffffu;
    const unsigned int h = hot < t ? (unsigned int)hot : t;
    asm volatile("createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %0, [%1], %2, %3;"
                 : "=l"(p) : "l"(base), "r"(h), "r"(t));
    return p;
}
__device__ __forceinline__ double ld_hint(const double* ptr, unsigned long long p) {
    double v;
    asm volatile("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(ptr), "l"(p));
    return v;
}
__device__ __forceinline__ double2 ld_hint2(const double* ptr, unsigned long long p) {
    double2 v;
    asm volatile("ld.global.nc.L2::cache_hint.v2.f64 {%0, %1}, [%2], %3;" : "=d"(v.x), "=d"(v.y) : "l"(ptr), "l"(p));
    return v;
}

// acc[0][*] of every lane: the chunk's sum for the lane's columns (q * VEC + v), in the fixed order: entry e of
// [lo, hi) in class (e - lo) % 32, classes summed in index order, then the butterfly tree over the 32 classes
template <int K, int MODE = 0>
__device__ __forceinline__ void chunk_tree(const int* __restrict__ indices, long long lo, long long hi,
                                           const double* __restrict__ z, int lane,
                                           double (&acc)[Shape<K>::R][Shape<K>::VEC],
                                           unsigned long long policy = 0) {
    constexpr int VEC = Shape<K>::VEC, LG = Shape<K>::LG, G = Shape<K>::G, R = Shape<K>::R;
    const int g = lane / LG, q = lane % LG;
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[i][v] = 0.0;
    constexpr int UNROLL = R == 1 ? 4 : 1;
#pragma unroll UNROLL
    for (long long e0 = lo; e0 < hi; e0 += 32) {
        int idx = 0;
        if (e0 + lane < hi) idx = MODE ? __ldcs(indices + e0 + lane) : __ldg(indices + e0 + lane);
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const int j = g + G * i;
            const int u = G == 32 ? idx : __shfl_sync(FULL, idx, j);
            if (e0 + j < hi) {
                const double* src = z + (long long)u * K + q * VEC;
                if constexpr (VEC == 2) {
                    double2 w;
                    if constexpr (MODE == 2) w = ld_hint2(src, policy);
                    else w = __ldg(reinterpret_cast<const double2*>(src));
                    acc[i][0] = __dadd_rn(acc[i][0], w.x);
                    acc[i][1] = __dadd_rn(acc[i][1], w.y);
                } else {
                    double w;
                    if constexpr (MODE == 2) w = ld_hint(src, policy);
                    else w = __ldg(src);
                    acc[i][0] = __dadd_rn(acc[i][0], w);
                }
            }
        }
    }
    // butterfly offsets 16, 8, ... >= G pair classes inside a lane (i and i + s), the smaller ones across lanes
#pragma unroll
    for (int level = 0; level < 5; ++level) {
        const int s = (R / 2) >> level;
#pragma unroll
        for (int i = 0; i < (R > 1 ? R / 2 : 1); ++i)
            if (i < s)
#pragma unroll
                for (int v = 0; v < VEC; ++v) acc[i][v] = __dadd_rn(acc[i][v], acc[i + s][v]);
    }
#pragma unroll
    for (int off = G / 2; off >= 1; off >>= 1)
#pragma unroll
        for (int v = 0; v < VEC; ++v) acc[0][v] = __dadd_rn(acc[0][v], __shfl_xor_sync(FULL, acc[0][v], off * LG));
}

// the whole row: its chunks' trees added in chunk order
template <int K>
__device__ __forceinline__ void row_tree(const int* __restrict__ indices, long long lo, long long hi,
                                         const double* __restrict__ z, int lane,
                                         double (&out)[Shape<K>::VEC]) {
    constexpr int VEC = Shape<K>::VEC, R = Shape<K>::R;
    double acc[R][VEC];
    if (hi - lo <= LONG_ROW) {
        chunk_tree<K>(indices, lo, hi, z, lane, acc);
#pragma unroll
        for (int v = 0; v < VEC; ++v) out[v] = acc[0][v];
        return;
    }
#pragma unroll
    for (int v = 0; v < VEC; ++v) out[v] = 0.0;
    for (long long c = lo; c < hi; c += LONG_ROW) {
        chunk_tree<K>(indices, c, c + LONG_ROW < hi ? c + LONG_ROW : hi, z, lane, acc);
#pragma unroll
        for (int v = 0; v < VEC; ++v) out[v] = __dadd_rn(out[v], acc[0][v]);
    }
}

// out[r, :] = row r's sum of y's rows at its entries, a warp per row (the order of every sum of this module)
template <int K>
__global__ void row_sums(const long long* __restrict__ indptr, const int* __restrict__ indices, long long n_rows,
                         const double* __restrict__ y, double* __restrict__ out) {
    constexpr int VEC = Shape<K>::VEC, LG = Shape<K>::LG;
    long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (r >= n_rows) return;
    double s[VEC];
    row_tree<K>(indices, indptr[r], indptr[r + 1], y, lane, s);
    if (lane < LG)
#pragma unroll
        for (int v = 0; v < VEC; ++v) out[r * K + lane * VEC + v] = s[v];
}

struct PprArgs {
    const double* x_old;
    const double* z_old;
    double* x_new;
    double* z_new;
    const double* inv_out;
    const long long* seeds;
    const int* active;
    const double* lost;
    double damping;
    unsigned long long hot;
};
// passed as separate parameters (CuPy passes arrays and scalars)
#define PPR_PARAMS const double* __restrict__ x_old, const double* __restrict__ z_old, double* __restrict__ x_new, \
    double* __restrict__ z_new, const double* __restrict__ inv_out, const long long* __restrict__ seeds, \
    const int* __restrict__ active, const double* __restrict__ lost, double damping, unsigned long long hot
#define PPR_ARGS {x_old, z_old, x_new, z_new, inv_out, seeds, active, lost, damping, hot}

// the iteration's value of (row r, column c) from its pull sum s; adds the L1 and dangling terms
template <int K, int MODE>
__device__ __forceinline__ void ppr_epilogue(const PprArgs& a, long long r, int c, double s, double& l1,
                                             double& dangling) {
    const long long at = r * K + c;
    const double xo = MODE ? __ldcs(a.x_old + at) : a.x_old[at];
    double xn, zn;
    const double inv = MODE ? __ldcs(a.inv_out + r) : a.inv_out[r];
    if (a.active[c]) {
        xn = __dmul_rn(a.damping, s);
        if (r == a.seeds[c]) xn = __dadd_rn(xn, __dadd_rn(__dmul_rn(a.damping, a.lost[c]), 1.0 - a.damping));
        zn = __dmul_rn(xn, inv);
        l1 = __dadd_rn(l1, fabs(__dsub_rn(xn, xo)));
    } else {
        xn = xo;
        zn = a.z_old[at];
    }
    if constexpr (MODE != 0) {
        __stcs(a.x_new + at, xn);
        __stcs(a.z_new + at, zn);
    } else {
        a.x_new[at] = xn;
        a.z_new[at] = zn;
    }
    if (inv == 0.0) dangling = __dadd_rn(dangling, xn);
}

// block sums of the per-lane (l1, dangling) terms, warps in order; lanes hold columns col(lane, v)
template <int K, int PER>
__device__ __forceinline__ void block_terms(const double (&l1)[PER], const double (&dg)[PER], const int (&col)[PER],
                                            double* __restrict__ partial) {
    __shared__ double part[WARPS][2][K];
    const int warp = threadIdx.x >> 5;
    for (int c = threadIdx.x & 31; c < K; c += 32) part[warp][0][c] = part[warp][1][c] = 0.0;
    __syncwarp();
#pragma unroll
    for (int v = 0; v < PER; ++v)
        if (col[v] >= 0) {
            part[warp][0][col[v]] = l1[v];
            part[warp][1][col[v]] = dg[v];
        }
    __syncthreads();
    for (int t = threadIdx.x; t < 2 * K; t += blockDim.x) {
        const int which = t / K, c = t % K;
        double s = part[0][which][c];
        for (int w = 1; w < WARPS; ++w) s = __dadd_rn(s, part[w][which][c]);
        partial[(long long)blockIdx.x * 2 * K + t] = s;
    }
}

// one PPR iteration over the short rows (ROWS_PER_WARP consecutive rows a warp) and the chunks of the long ones
template <int K, int MODE>
__global__ void __launch_bounds__(256) ppr_rows(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                                long long n, PPR_PARAMS, long long row_blocks, long long n_chunks,
                                                const long long* __restrict__ chunk_lo,
                                                const long long* __restrict__ chunk_hi,
                                                double* __restrict__ chunk_out, double* __restrict__ partial) {
    constexpr int VEC = Shape<K>::VEC, LG = Shape<K>::LG, R = Shape<K>::R;
    const PprArgs a = PPR_ARGS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    double acc[R][VEC];
    const unsigned long long policy = MODE == 2 ? range_policy(z_old, hot, (unsigned long long)n * K * 8) : 0ull;
    if (blockIdx.x >= row_blocks) {  // a chunk of a long row per warp: its tree to chunk_out
        long long ch = (blockIdx.x - row_blocks) * WARPS + warp;
        if (ch >= n_chunks) return;
        chunk_tree<K, MODE>(indices, chunk_lo[ch], chunk_hi[ch], a.z_old, lane, acc, policy);
        if (lane < LG)
#pragma unroll
            for (int v = 0; v < VEC; ++v) chunk_out[ch * K + lane * VEC + v] = acc[0][v];
        return;
    }
    double l1[VEC], dg[VEC];
    int col[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
        l1[v] = dg[v] = 0.0;
        col[v] = lane < LG ? lane * VEC + v : -1;
    }
    long long r0 = ((long long)blockIdx.x * WARPS + warp) * ROWS_PER_WARP;
    long long r1 = r0 + ROWS_PER_WARP < n ? r0 + ROWS_PER_WARP : n;
    for (long long r = r0; r < r1; ++r) {
        const long long lo = indptr[r], hi = indptr[r + 1];
        if (hi - lo > LONG_ROW) continue;  // ppr_long
        chunk_tree<K, MODE>(indices, lo, hi, a.z_old, lane, acc, policy);
        if (lane < LG)
#pragma unroll
            for (int v = 0; v < VEC; ++v) ppr_epilogue<K, MODE>(a, r, col[v], acc[0][v], l1[v], dg[v]);
    }
    block_terms<K, VEC>(l1, dg, col, partial);
}

// the long rows, a warp each: chunk trees added in order, then the epilogue; row group = WARPS long rows
template <int K, int MODE>
__global__ void __launch_bounds__(256) ppr_long(const long long* __restrict__ long_rows,
                                                const long long* __restrict__ chunk_ptr, long long n_long, PPR_PARAMS,
                                                const double* __restrict__ chunk_out, double* __restrict__ partial) {
    constexpr int PER = K > 32 ? 2 : 1;
    const PprArgs a = PPR_ARGS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    double l1[PER], dg[PER];
    int col[PER];
#pragma unroll
    for (int v = 0; v < PER; ++v) {
        l1[v] = dg[v] = 0.0;
        col[v] = lane + 32 * v < K ? lane + 32 * v : -1;
    }
    long long w = (long long)blockIdx.x * WARPS + warp;
    if (w < n_long) {
        const long long r = long_rows[w];
#pragma unroll
        for (int v = 0; v < PER; ++v)
            if (col[v] >= 0) {
                double s = 0.0;
                for (long long ch = chunk_ptr[w]; ch < chunk_ptr[w + 1]; ++ch)
                    s = __dadd_rn(s, chunk_out[ch * K + col[v]]);
                ppr_epilogue<K, MODE>(a, r, col[v], s, l1[v], dg[v]);
            }
    }
    block_terms<K, PER>(l1, dg, col, partial);
}

// per column (a block each): the L1 change and the dangling mass in row-group order, then convergence
template <int K>
__global__ void ppr_finish(const double* __restrict__ partial, long long n_groups, double* __restrict__ lost,
                           int* __restrict__ active, const int* __restrict__ colmap, long long* __restrict__ iterations,
                           double* __restrict__ delta, int* __restrict__ converged, double tol, long long max_iter) {
    __shared__ double red[2][256];
    const int c = blockIdx.x, t = threadIdx.x;
    double l1 = 0.0, dg = 0.0;
    for (long long b = t; b < n_groups; b += 256) {
        l1 = __dadd_rn(l1, partial[b * 2 * K + c]);
        dg = __dadd_rn(dg, partial[b * 2 * K + K + c]);
    }
    red[0][t] = l1;
    red[1][t] = dg;
    __syncthreads();
    for (int h = 128; h >= 1; h >>= 1) {
        if (t < h) {
            red[0][t] = __dadd_rn(red[0][t], red[0][t + h]);
            red[1][t] = __dadd_rn(red[1][t], red[1][t + h]);
        }
        __syncthreads();
    }
    if (t == 0 && active[c]) {
        const int o = colmap[c];
        const double change = red[0][0];
        iterations[o] += 1;
        delta[o] = change;
        lost[c] = red[1][0];
        if (change < tol) {
            converged[o] = 1;
            active[c] = 0;
        } else if (iterations[o] >= max_iter) {
            active[c] = 0;
        }
    }
}

// hist[c, e]: values of column c (not its seed's row) with biased exponent e (1023 and above in bin 1023)
template <int K>
__global__ void exponent_histogram(const double* __restrict__ x, long long n, const long long* __restrict__ seeds,
                                   unsigned long long* __restrict__ hist) {
    constexpr int CB = K < 8 ? K : 8;
    __shared__ unsigned int h[CB][1024];
    const int c0 = blockIdx.y * CB;
    for (int i = threadIdx.x; i < CB * 1024; i += blockDim.x) (&h[0][0])[i] = 0;
    __syncthreads();
    long long skip[CB];
#pragma unroll
    for (int j = 0; j < CB; ++j) skip[j] = seeds[c0 + j];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
#pragma unroll
        for (int j = 0; j < CB; ++j) {
            const double v = x[i * K + c0 + j];
            if (v > 0.0 && i != skip[j]) {
                unsigned long long e = (unsigned long long)__double_as_longlong(v) >> 52;
                atomicAdd(&h[j][e < 1023 ? e : 1023], 1u);
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < CB * 1024; i += blockDim.x) {
        const unsigned int v = (&h[0][0])[i];
        if (v) atomicAdd(&hist[(long long)(c0 + i / 1024) * 1024 + i % 1024], (unsigned long long)v);
    }
}

// Money, relevance: rel[a] = sum over the hubs of authority a of simz (= sim / out-degree); relz = rel / in-degree
extern "C" __global__ void money_relevance(const long long* __restrict__ ptr, const int* __restrict__ idx,
                                           long long n_auth, const double* __restrict__ simz,
                                           const long long* __restrict__ auth_seed, const int* __restrict__ active,
                                           const double* __restrict__ inv_in, double* __restrict__ rel,
                                           double* __restrict__ relz) {
    long long a = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (a >= n_auth || !active[auth_seed[a]]) return;  // a converged seed keeps its relevance
    double s[1];
    row_tree<1>(idx, ptr[a], ptr[a + 1], simz, lane, s);
    if (lane == 0) {
        rel[a] = s[0];
        relz[a] = __dmul_rn(s[0], inv_in[a]);
    }
}

// Money: the chunks of the long hub rows, a warp each (their trees, added in order by money_similarity)
extern "C" __global__ void money_chunks(const int* __restrict__ idx, long long n_chunks,
                                        const long long* __restrict__ chunk_lo, const long long* __restrict__ chunk_hi,
                                        const long long* __restrict__ chunk_seed, const int* __restrict__ active,
                                        const double* __restrict__ relz, double* __restrict__ chunk_out) {
    long long ch = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (ch >= n_chunks || !active[chunk_seed[ch]]) return;
    double acc[1][1];
    chunk_tree<1>(idx, chunk_lo[ch], chunk_hi[ch], relz, lane, acc);
    if (lane == 0) chunk_out[ch] = acc[0][0];
}

// Money, similarity: sim[h] = (1 - alpha) sum over the authorities of hub h of relz (+ alpha at the seed)
extern "C" __global__ void money_similarity(const long long* __restrict__ ptr, const int* __restrict__ idx,
                                            long long n_hubs, const double* __restrict__ relz,
                                            const long long* __restrict__ hub_seed, const int* __restrict__ active,
                                            const unsigned char* __restrict__ own, double alpha,
                                            const double* __restrict__ inv_out,
                                            const long long* __restrict__ hub_chunks,
                                            const double* __restrict__ chunk_out, double* __restrict__ sim,
                                            double* __restrict__ simz, double* __restrict__ diff) {
    long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (h >= n_hubs) return;
    if (!active[hub_seed[h]]) {
        if (lane == 0) diff[h] = 0.0;
        return;
    }
    double s[1];
    if (ptr[h + 1] - ptr[h] > LONG_ROW) {  // the same sum as row_tree's, its chunks summed by money_chunks
        s[0] = 0.0;
        for (long long ch = hub_chunks[h]; ch < hub_chunks[h + 1]; ++ch) s[0] = __dadd_rn(s[0], chunk_out[ch]);
    } else {
        row_tree<1>(idx, ptr[h], ptr[h + 1], relz, lane, s);
    }
    if (lane == 0) {
        double v = __dmul_rn(s[0], 1.0 - alpha);
        if (own[h]) v = __dadd_rn(v, alpha);
        diff[h] = fabs(__dsub_rn(v, sim[h]));
        sim[h] = v;
        simz[h] = __dmul_rn(v, inv_out[h]);
    }
}

// Money, per seed (a block each): the L1 change over its hubs in a fixed order, then convergence
extern "C" __global__ void money_finish(const double* __restrict__ diff, const long long* __restrict__ hub_ptr,
                                        int* __restrict__ active, long long* __restrict__ iterations,
                                        int* __restrict__ converged, double tol, long long max_iter) {
    __shared__ double red[256];
    const int j = blockIdx.x, t = threadIdx.x;
    if (!active[j]) return;  // uniform over the block
    double s = 0.0;
    for (long long i = hub_ptr[j] + t; i < hub_ptr[j + 1]; i += 256) s = __dadd_rn(s, diff[i]);
    red[t] = s;
    __syncthreads();
    for (int h = 128; h >= 1; h >>= 1) {
        if (t < h) red[t] = __dadd_rn(red[t], red[t + h]);
        __syncthreads();
    }
    if (t == 0) {
        iterations[j] += 1;
        if (red[0] < tol) {
            converged[j] = 1;
            active[j] = 0;
        } else if (iterations[j] >= max_iter) {
            active[j] = 0;
        }
    }
}
"""

_TEMPLATES = ("row_sums", "ppr_finish", "exponent_histogram")
_MODES = (0, 1, 2)
_NAMES = (
    *(f"{kernel}<{k}>" for k in _WIDTHS for kernel in _TEMPLATES),
    *(f"{kernel}<{k}, {m}>" for k in _WIDTHS for m in _MODES for kernel in ("ppr_rows", "ppr_long")),
    "money_relevance",
    "money_chunks",
    "money_similarity",
    "money_finish",
)


def _kernel(name: str, k: int | None = None, mode: int | None = None):
    if k is not None:
        name = f"{name}<{k}>" if mode is None else f"{name}<{k}, {mode}>"
    return module(_SOURCE, _NAMES).get_function(name)


def _width(k: int) -> int:
    return next(w for w in _WIDTHS if w >= k)


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
        src = self.rank[cp.searchsorted(out.indptr[1:], cp.arange(m, dtype=cp.int64), side="right")]
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
        src = cp.searchsorted(indptr[1:], cp.arange(len(indices), dtype=cp.int64), side="right")
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
    """Twin of :func:`compute.algorithms.wtf.personalized_pagerank`: the exact method (the local ones run on the
    CPU)."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    if method != "exact":
        raise ValueError(f"method={method!r} runs on the CPU only: use backend='cpu' or 'auto'")
    s = check_wtf(g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter)
    dg = device_graph(g)
    walk = dg.walk(direction)
    k = len(s)
    values = np.zeros((k, g.n_nodes))
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.zeros(k)
    for lo in range(0, k, BATCH):
        block = s[lo : lo + BATCH]
        x, it, conv, d = _ppr_block(dg, direction, block, damping, tol, max_iter)
        values[lo : lo + len(block)] = x[walk.rank, : len(block)].T.get()
        iterations[lo : lo + BATCH], converged[lo : lo + BATCH], delta[lo : lo + BATCH] = it, conv, d
    return PageRank(s.astype(np.int64), values, iterations, converged, delta)


def _circle_candidates(walk: _Walk, x: cp.ndarray, seeds: np.ndarray, circle: int):
    """Per column j: (nodes, ppr) on the host of every non-seed node whose PPR is at least the power of two at or
    below the (circle - 1)-th largest non-seed value, less the ranking's slack (a superset of the circle's other
    members; the seed may be among them). Node indices, not the walk's numbering."""
    k, width = len(seeds), x.shape[1]
    want = circle - 1
    if want == 0:
        return [(np.zeros(0, np.int64), np.zeros(0)) for _ in range(k)]
    hist = cp.zeros((width, _BINS), dtype=cp.uint64)
    dev_seeds = cp.full(width, -1, dtype=cp.int64)
    dev_seeds[:k] = walk.rank[cp.asarray(seeds)]
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
    nodes = walk.order[rows].get()
    cols = cols.get()
    order = np.argsort(cols, kind="stable")
    bounds = np.searchsorted(cols[order], np.arange(k + 1))
    return [(nodes[order[bounds[j] : bounds[j + 1]]], values[order[bounds[j] : bounds[j + 1]]]) for j in range(k)]


# --------------------------------------------------------------------------------------------------------------
# Money, all seeds of a block at once
# --------------------------------------------------------------------------------------------------------------


def _money_block(dg: _DeviceGraph, direction: str, seeds: np.ndarray, circles: list[np.ndarray], alpha: float,
                 tol: float, max_iter: int) -> list[MoneyScores]:  # fmt: skip
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
    # authorities per seed: (seed, account) keys, unique, so each seed's authorities are ascending and apart
    keys, col = cp.unique(hub_seed[owner] * n + targets, return_inverse=True)
    col = col.ravel()
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
    done = 0
    while True:
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
        done += _MONEY_CHECK
        if done >= max_iter or not active.get().any():
            break
    sim_h, rel_h = sim.get(), rel.get()
    auth_h, auth_seed_h = authorities.get(), auth_seed.get()
    auth_ptr = np.searchsorted(auth_seed_h, np.arange(k + 1))
    it_h, conv_h = iterations.get(), converged.get()
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
    """Twin of :func:`compute.algorithms.wtf.wtf`: the exact method (the local ones run on the CPU)."""
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on backend 'gpu' (or 'auto'), not {backend!r}")
    if method != "exact":
        raise ValueError(f"method={method!r} runs on the CPU only: use backend='cpu' or 'auto'")
    s = check_wtf(
        g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter, circle=circle, top=top,
        alpha=alpha,
    )  # fmt: skip
    dg = device_graph(g)
    walk = dg.walk(direction)
    out_csr = dg.out_csr(direction)
    out: list[Recommendations] = []
    for lo in range(0, len(s), BATCH):
        block = s[lo : lo + BATCH]
        x, iterations, converged, delta = _ppr_block(dg, direction, block, damping, tol, max_iter)
        ranks = walk.rank[cp.asarray(block)]
        seed_ppr = x[ranks, cp.arange(len(block))].get()
        circles = []
        for j, (nodes, ppr) in enumerate(_circle_candidates(walk, x, block, circle)):
            circles.append(circle_of_trust(nodes, ppr, int(block[j]), float(seed_ppr[j]), circle))
        scores = _money_block(dg, direction, block, [np.sort(c[0]) for c in circles], alpha, tol, max_iter)
        bounds = out_csr.indptr[cp.asarray(np.c_[block, block + 1].ravel())].get()
        for j, seed in enumerate(block.tolist()):
            lo_e, hi_e = int(bounds[2 * j]), int(bounds[2 * j + 1])
            linked = out_csr.indices[lo_e:hi_e].get().astype(np.int64)

            def ppr_of(nodes, j=j, x=x):
                nodes = np.asarray(nodes, dtype=np.int64)
                return x[walk.rank[cp.asarray(nodes)], j].get() if len(nodes) else np.zeros(0)

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
