"""The CUDA source of the WTF twin (:mod:`compute.gpu.wtf`) and how its kernels are named: the fused PPR pass
(``ppr_rows``, ``ppr_long`` per block width and L2 mode), the row sums, the per-column finish and the circle's
exponent histogram (per block width), and Money's four passes. The layout constants here are compiled into the
source (``#define``) too: change both together. The docstring of :mod:`compute.gpu.wtf` explains the order every
sum is taken in."""

from __future__ import annotations

from ._device import module

#: rows longer than this are summed in chunks of this many entries (a multiple of 32), added in chunk order
_LONG = 4096
#: rows per warp and warps per block of the fused PPR pass: the row groups of the column sums (fixed for every
#: width, so a column's sums have one order)
_ROWS_PER_WARP = 16
_WARPS = 8
_ROWS_PER_BLOCK = _ROWS_PER_WARP * _WARPS
_WIDTHS = (1, 2, 4, 8, 16, 32, 64)
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
