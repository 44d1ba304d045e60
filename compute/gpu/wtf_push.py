"""GPU twin of the local methods of who amplifies whom (:mod:`compute.algorithms.wtf_push`): the forward push
(``method="push"``) and FORA (``method="fora"``: the push, then random walks from the residual it left), for a
block of seeds at once, as the (n, width) estimate matrix the rest of :mod:`compute.gpu.wtf` ranks.

**The push, in synchronous rounds.** The reference pushes one account at a time from a first-in first-out queue;
here every account of a round's frontier is pushed at once:

1. ``take``: each frontier entry (account u, column j) moves its residual r[u, j] into ``taken`` and adds
   ``(1 - d) r`` to the estimate p[u, j]; the residual is zeroed. All takes finish before any scatter.
2. ``scatter``: a warp per entry adds ``d r / deg(u)`` to the residual of each account u leads to (an account
   with nowhere to go sends ``d r`` to the seed, as the exact method's dangling mass). The addition that lifts
   a residual from at most to above ``epsilon`` times its account's out-degree (1 for none) appends the entry
   to the next frontier: exactly one addition does, so every entry is in a frontier at most once per round.

The rounds end when a frontier is empty: then every residual is at most ``epsilon`` times its out-degree, the
reference's stopping rule. The order of pushes differs from the reference's queue, so the set of pushes and the
estimate differ from it (both within the same bound); ``iterations`` counts this version's pushes.

**Residuals in fixed point.** r is an unsigned 64-bit integer in units of 2^-62, so the atomic additions of a
round give the same bits in any order: a seed's push is the same from run to run, alone or in any block. A
share below one unit (d r / deg(u) < 2^-62) is dropped: at most 2^-62 of mass per edge pushed.

**The walks** (FORA, :data:`method` ``fora``): from every entry with residual r, ``ceil(r walks)`` walks, each
stopping at every step with probability ``1 - d`` (an account with nowhere to go sends the walk to the seed);
every account a walk visits, the start included, gets ``(1 - d) r / ceil(r walks)``, added in fixed point (units
of 2^-60) into a second matrix: the visits of a walk of geometric length estimate ``x_u / (1 - d)`` without bias,
with less variance than counting where it stops. Each walk draws from its own counter-based stream (splitmix64
of the seed account, the start account and the walk's number), so the estimate does not depend on the block.
The result is ``p + visits 2^-60``.

Memory per block of K seeds (width W = the next power of two): three (n, W) matrices of 8 bytes (estimate,
residual, visits) and two frontier lists of n W entries of 8 bytes.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from ._device import Steps, module, replayable

__all__ = ["local_block"]

#: push rounds launched (as one CUDA graph) between two reads of the frontier's size, an even number; and the
#: blocks of 256 threads each round launches (grid-stride loops: a round's frontier can be far larger)
_ROUNDS = 8
_GRID = 2048
#: the residual's and the visits' fixed points
_R_ONE = float(1 << 62)
_V_ONE = float(1 << 60)

_SOURCE = r"""
typedef unsigned long long u64;
#define R_ONE 4611686018427387904.0
#define V_ONE 1152921504606846976.0

__device__ __forceinline__ u64 limit(const long long* ptr, long long v, double eps) {
    long long deg = ptr[v + 1] - ptr[v];
    return (u64)(eps * (double)(deg > 0 ? deg : 1) * R_ONE);
}

__device__ __forceinline__ u64 mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// add `share` to residual entry e (account v); append e to `next` when this addition lifts it above its limit
__device__ __forceinline__ void add_residual(u64* r, long long e, long long v, u64 share, const long long* ptr,
                                             double eps, long long* next, u64* n_next) {
    u64 old = atomicAdd(&r[e], share);
    u64 lim = limit(ptr, v, eps);
    if (old <= lim && old + share > lim) next[atomicAdd(n_next, 1ULL)] = e;
}

// round t's frontier has n_front[0] entries; grid-stride loops, so the rounds launch without a host sync
extern "C" __global__ void local_take(const long long* front, const u64* n_front, u64* r, double* p, u64* taken,
                                      double keep, int width, u64* pushes) {
    long long nf = (long long)n_front[0];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nf;
         i += (long long)gridDim.x * blockDim.x) {
        long long e = front[i];
        u64 ru = r[e];
        r[e] = 0;
        taken[i] = ru;
        p[e] += keep * ((double)ru / R_ONE);
        atomicAdd(&pushes[e % width], 1ULL);
    }
}

// a warp per frontier entry; the entries lifted above their limit go to `next`, counted in n_next[0]
extern "C" __global__ void local_scatter(const long long* ptr, const int* idx, const long long* front,
                                         const u64* taken, const u64* n_front, int width, const long long* seeds,
                                         double damping, double eps, u64* r, long long* next, u64* n_next) {
    long long nf = (long long)n_front[0];
    int lane = threadIdx.x & 31;
    long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; w < nf; w += warps) {
        long long e = front[w];
        long long u = e / width;
        int j = (int)(e % width);
        double ru = (double)taken[w];
        long long lo = ptr[u], hi = ptr[u + 1];
        if (hi == lo) {
            long long s = seeds[j];
            u64 share = (u64)(damping * ru);
            if (lane == 0 && share) add_residual(r, s * width + j, s, share, ptr, eps, next, n_next);
            continue;
        }
        u64 share = (u64)(damping * ru / (double)(hi - lo));
        if (!share) continue;
        for (long long a = lo + lane; a < hi; a += 32) {
            long long v = idx[a];
            add_residual(r, v * width + j, v, share, ptr, eps, next, n_next);
        }
    }
}

// one thread per walk: `ends[i]` is one past entry i's last walk (an inclusive prefix sum of the walk counts)
extern "C" __global__ void local_walks(const long long* ptr, const int* idx, const long long* entries,
                                       const u64* residual, const long long* ends, long long n_entries,
                                       long long n_walks, int width, const long long* seeds, double damping,
                                       u64* visits) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= n_walks) return;
    long long lo = 0, hi = n_entries - 1;  // the first entry whose end is past t
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ends[mid] > t) hi = mid; else lo = mid + 1;
    }
    long long first = lo ? ends[lo - 1] : 0;
    long long count = ends[lo] - first;
    long long e = entries[lo];
    long long u = e / width;
    int j = (int)(e % width);
    long long s = seeds[j];
    u64 weight = (u64)((1.0 - damping) * ((double)residual[lo] / R_ONE) / (double)count * V_ONE);
    u64 state = mix((u64)s * 0x9e3779b97f4a7c15ULL ^ mix((u64)u + 0x632be59bd9b4e019ULL) ^ (u64)(t - first));
    unsigned int go = (unsigned int)(damping * 4294967296.0);
    // every walk of the entry visits its start: the entry's first walk adds them all at once (the same integer
    // sum), instead of `count` atomic additions to one address
    if (t == first) atomicAdd(&visits[e], weight * (u64)count);
    long long v = u;
    while (true) {
        state += 0x9e3779b97f4a7c15ULL;
        u64 x = mix(state);
        if ((unsigned int)(x >> 32) >= go) break;
        long long a = ptr[v], deg = ptr[v + 1] - a;
        v = deg ? (long long)idx[a + (long long)(((x & 0xffffffffULL) * (u64)deg) >> 32)] : s;
        atomicAdd(&visits[v * width + j], weight);
    }
}

extern "C" __global__ void local_reset(u64* counts, int rounds) {
    counts[0] = counts[rounds];
    for (int t = 1; t <= rounds; t++) counts[t] = 0;
}

// per column, the sum of the residual (integers: exact in any order); out[] zero on entry
extern "C" __global__ void local_column_sums(const u64* r, long long size, int width, u64* out) {
    __shared__ u64 acc[64];
    for (int c = threadIdx.x; c < width; c += blockDim.x) acc[c] = 0;
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < size;
         i += (long long)gridDim.x * blockDim.x) {
        u64 v = r[i];
        if (v) atomicAdd(&acc[i % width], v);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < width; c += blockDim.x)
        if (acc[c]) atomicAdd(&out[c], acc[c]);
}

extern "C" __global__ void local_sum(double* p, const u64* visits, long long size) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < size) p[i] += (double)visits[i] / V_ONE;
}
"""


def _kernel(name: str):
    return module(_SOURCE).get_function(name)


def _grid(threads: int) -> tuple[int]:
    return (max(1, (threads + 255) // 256),)


def local_block(out_ptr: cp.ndarray, out_idx: cp.ndarray, seeds: np.ndarray, width: int, *, damping: float,
                epsilon: float | None, walks: float, steps: dict | None = None):  # fmt: skip
    """The local estimate of each seed's PPR on the walk's CSR (``out_ptr`` int64, ``out_idx`` int32, node
    indices): (x (n, ``width``) float64 in node indices, zero past the seeds' columns; the pushes per seed;
    the residual the push left per seed). ``walks`` 0: the push alone; ``epsilon`` None: no push, the walks start
    at the seeds (plain Monte-Carlo). ``steps``: a dict to add each step's synchronized time to (benchmarks; it
    syncs the device between steps)."""
    step = Steps(steps)
    n = len(out_ptr) - 1
    k = len(seeds)
    size = n * width
    dev_seeds = cp.full(width, 0, dtype=cp.int64)
    dev_seeds[:k] = cp.asarray(seeds, dtype=cp.int64)
    p = cp.zeros((n, width), dtype=cp.float64)
    r = cp.zeros((n, width), dtype=cp.uint64)
    start = cp.asarray(np.asarray(seeds, dtype=np.int64) * width + np.arange(k))
    r.ravel()[start] = np.uint64(1 << 62)
    bufs = (cp.empty(max(size, 1), dtype=cp.int64), cp.empty(max(size, 1), dtype=cp.int64))
    bufs[0][:k] = start
    taken = cp.empty(max(size, 1), dtype=cp.uint64)
    pushes = cp.zeros(width, dtype=cp.uint64)
    take, scatter, reset = _kernel("local_take"), _kernel("local_scatter"), _kernel("local_reset")
    grid = (_GRID,)
    # counts[t]: round t's frontier size, written by round t - 1; a group of _ROUNDS rounds (an even number, so
    # each group starts from bufs[0]) first carries the last count over to counts[0]
    counts = cp.zeros(_ROUNDS + 1, dtype=cp.uint64)
    counts[_ROUNDS] = k

    def rounds() -> None:
        reset((1,), (1,), (counts, np.int32(_ROUNDS)))
        for t in range(_ROUNDS):
            front, nxt = bufs[t % 2], bufs[(t + 1) % 2]
            take(grid, (256,), (front, counts[t:], r, p, taken, np.float64(1.0 - damping), np.int32(width), pushes))
            scatter(
                grid, (256,),
                (out_ptr, out_idx, front, taken, counts[t:], np.int32(width), dev_seeds, np.float64(damping),
                 np.float64(epsilon), r, nxt, counts[t + 1 :]),
            )  # fmt: skip

    step("setup")
    if epsilon is not None:
        rounds = replayable(rounds)
        step("capture")
        groups = 0
        while True:  # no host sync within a group: one read of the last count per group
            rounds()
            groups += 1
            if not int(counts[_ROUNDS].get()):
                break
        step("push", groups=groups)
    rounds = bufs = taken = None  # the frontiers go before the walks allocate
    # CuPy's sum over axis 0 of an (n, width) array took 3 ms for one column: one pass of our own instead
    sums = cp.zeros(width, dtype=cp.uint64)
    _kernel("local_column_sums")((1024,), (256,), (r, np.int64(size), np.int32(width), sums))
    residual = sums.get()[:k].astype(np.float64) / _R_ONE
    step("residual")
    if walks > 0:
        entries = cp.flatnonzero(r)
        if len(entries):
            left = r.ravel()[entries]
            del r
            counts = cp.ceil(left.astype(cp.float64) / _R_ONE * walks).astype(cp.int64)
            ends = cp.cumsum(cp.maximum(counts, 1))
            del counts
            n_walks = int(ends[-1].get())
            visits = cp.zeros((n, width), dtype=cp.uint64)
            step("walk_setup", entries=len(entries), walks=n_walks)
            _kernel("local_walks")(
                _grid(n_walks), (256,),
                (out_ptr, out_idx, entries, left, ends, np.int64(len(entries)), np.int64(n_walks), np.int32(width),
                 dev_seeds, np.float64(damping), visits),
            )  # fmt: skip
            step("walks")
            _kernel("local_sum")(_grid(size), (256,), (p, visits, np.int64(size)))
            step("sum")
    return p, pushes.get()[:k].astype(np.int64), residual
