"""GPU twin of :mod:`compute.algorithms.influence_max` (issue 16): RR-set sampling, greedy maximum coverage, IMM,
IMGPU's bottom-up traversal and the Monte-Carlo evaluator (alone or paired) in CuPy, with the CPU reference's
names, signatures and defaults.

**Same sets as the CPU.** A set's (or run's) key and every edge coin come from :mod:`compute.influence_model`'s
counter-based splitmix64, mirrored below in CUDA: a coin depends on (set, edge) only, so the frontier-parallel
search here reaches exactly the nodes the CPU's sequential one does. Sets come out sorted by (set, node) — one
sort of packed ``set << 32 | node`` keys — which is the CPU's layout, so ``rr_sets`` is bitwise the CPU's.

**RR sets.** A chunk of sets runs level-synchronously: one thread per frontier entry (set, node) scans the node's
row (the accounts it follows), flips each edge's coin and claims the (set, followee) pair in an open-addressing
hash table (atomicCAS); a new pair joins the next frontier. The table is sized for twice the pairs it may hold
(grown, and refilled from the frontiers kept so far, before a level that could overfill it).

**Greedy.** The inverted index (node -> sets) by one sort; per pick, one reduction for the best (count, smallest
node) packed in an int64, and one kernel over the pick's sets that marks them covered and decrements their
members' counts (atomicSub). Counts are integers, so the picks are the CPU's.

**Evaluator.** Runs in chunks that fit the memory budget, one visited bitmap of n bits per run, frontier entries
(run, node) expanded along the followers CSR; each run's spread is summed with atomicAdd (exact for unit
weights; other weights agree with the CPU up to summation order).

**IMGPU** (``influence_max(method="imgpu")``, :func:`imgpu_device`): the R live-edge snapshots as one disjoint
union on the device (the CPU's coins), SCCs by trimming, min-label propagation and a backward closure (named by
their smallest node, the reference's canonical numbering), the condensation and its levels, then per round a
level-by-level sweep of every snapshot: merged reach lists by one sort/unique of (component, entry) keys per
level, or the reference's bottom-k sketches. docs/influence_max.md says what is equal to the CPU and when.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import cupy as cp
import numpy as np

from ..graphs import transpose
from ..influence_model import (
    BASELINE_RR_SETS,
    EDGE_SALT,
    GOLDEN,
    STREAM_EVALUATE,
    STREAM_SAMPLING,
    STREAM_SELECTION,
    STREAM_SNAPSHOTS,
    ICModel,
    ImmSize,
    IMResult,
    RRSets,
    Selection,
    SpreadComparison,
    SpreadEstimate,
    base_key,
    check_k,
    check_max_sets,
    check_range,
    check_seeds,
    imm_sampling,
    mix64,
    normal_ci,
    paired_comparison,
    selection_from_counts,
)
from ._device import memory_budget, module

__all__ = ["compare_spreads", "evaluate_spread", "imm_sample_size", "influence_max", "rr_sets", "select_seeds"]

#: sets per chunk of RR-set sampling
CHUNK_SETS = 1 << 22
#: frontier entries per expansion launch are cut so their edges stay under this (bounds the next frontier buffer)
SEGMENT_EDGES = 1 << 26

_SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;

__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
__device__ __forceinline__ u64 item_key(u64 base, i64 i) {
    return mix64(base + ((u64)i + 1ULL) * 0x9E3779B97F4A7C15ULL);
}
__device__ __forceinline__ bool is_live(u64 key, i64 e, const u64* thr, int uniform) {
    u64 c = mix64(key ^ (((u64)e + 1ULL) * 0xD6E8FEB86659FD93ULL));
    u64 t = uniform ? thr[0] : thr[e];
    return (c >> 32) < t;
}
__device__ i64 draw_root(u64 key, i64 n, const double* cumw, int unit) {
    u64 u = mix64(key);
    if (unit) return (i64)(((u >> 32) * (u64)n) >> 32);
    double x = (double)(u >> 11) * 1.1102230246251565e-16 * cumw[n - 1];
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) / 2;
        if (cumw[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo < n - 1 ? lo : n - 1;
}
__device__ __forceinline__ bool claim(u64* table, u64 mask, u64 key) {
    u64 h = mix64(key) & mask;
    while (true) {
        u64 prev = atomicCAS(&table[h], 0ULL, key);
        if (prev == 0ULL) return true;
        if (prev == key) return false;
        h = (h + 1ULL) & mask;
    }
}

extern "C" __global__ void rr_roots(u64 base, i64 start, int count, i64 n, const double* cumw, int unit,
                                    u64* table, u64 mask, i64* frontier) {
    int j = blockDim.x * blockIdx.x + threadIdx.x;
    if (j >= count) return;
    i64 root = draw_root(item_key(base, start + j), n, cumw, unit);
    i64 packed = ((i64)j << 32) | root;
    claim(table, mask, (u64)packed + 1ULL);
    frontier[j] = packed;
}

extern "C" __global__ void rr_expand(u64 base, i64 start, const i64* frontier, i64 size, const i64* indptr,
                                     const int* indices, const u64* thr, int uniform, u64* table, u64 mask,
                                     i64* next, unsigned int* next_count, u64* touched) {
    i64 t = (i64)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= size) return;
    i64 packed = frontier[t];
    i64 j = packed >> 32;
    i64 v = packed & 0xffffffffLL;
    u64 key = item_key(base, start + j);
    i64 a = indptr[v], b = indptr[v + 1];
    atomicAdd(touched, (u64)(b - a));
    for (i64 e = a; e < b; ++e) {
        if (!is_live(key, e, thr, uniform)) continue;
        i64 np = (j << 32) | (i64)indices[e];
        if (claim(table, mask, (u64)np + 1ULL)) next[atomicAdd(next_count, 1u)] = np;
    }
}

extern "C" __global__ void rehash(const i64* packed, i64 size, u64* table, u64 mask) {
    i64 t = (i64)blockDim.x * blockIdx.x + threadIdx.x;
    if (t < size) claim(table, mask, (u64)packed[t] + 1ULL);
}

extern "C" __global__ void cover(const i64* inv, i64 a, i64 b, const i64* indptr, const int* nodes,
                                 unsigned char* covered, int* deg) {
    i64 t = a + (i64)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= b) return;
    i64 s = inv[t];
    if (covered[s]) return;
    covered[s] = 1;  // each set appears once in a node's list: no other thread of this launch writes it
    for (i64 q = indptr[s]; q < indptr[s + 1]; ++q) atomicSub(&deg[nodes[q]], 1);
}

extern "C" __global__ void mc_seed(const i64* seeds, int ns, int runs, i64 words, unsigned int* seen,
                                   const double* w, double* spread, i64* frontier) {
    i64 t = (i64)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= (i64)ns * runs) return;
    i64 r = t / ns;
    i64 s = seeds[t % ns];
    atomicOr(&seen[r * words + (s >> 5)], 1u << (s & 31));
    atomicAdd(&spread[r], w[s]);
    frontier[t] = (r << 32) | s;
}

extern "C" __global__ void mc_expand(u64 base, i64 start, const i64* frontier, i64 size, const i64* t_indptr,
                                     const i64* t_indices, const i64* t_perm, const u64* thr, int uniform,
                                     i64 words, unsigned int* seen, const double* w, double* spread,
                                     i64* next, unsigned int* next_count) {
    i64 t = (i64)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= size) return;
    i64 packed = frontier[t];
    i64 r = packed >> 32;
    i64 u = packed & 0xffffffffLL;
    u64 key = item_key(base, start + r);
    unsigned int* row = seen + r * words;
    for (i64 q = t_indptr[u]; q < t_indptr[u + 1]; ++q) {
        i64 f = t_indices[q];
        unsigned int bit = 1u << (f & 31);
        if (row[f >> 5] & bit) continue;
        if (!is_live(key, t_perm[q], thr, uniform)) continue;
        if (atomicOr(&row[f >> 5], bit) & bit) continue;
        atomicAdd(&spread[r], w[f]);
        next[atomicAdd(next_count, 1u)] = (r << 32) | f;
    }
}
"""


def _k(name: str):
    return module(_SOURCE).get_function(name)


def _grid(size: int, block: int = 256) -> tuple[tuple[int], tuple[int]]:
    return (max(1, (size + block - 1) // block),), (block,)


def _check_twin_backend(backend: str) -> None:
    if backend not in ("auto", "gpu"):
        raise ValueError(f"the GPU twin runs on the GPU: backend must be 'auto' or 'gpu', not {backend!r}")


def device_model(model: ICModel) -> dict:
    """The model's arrays on the device, uploaded once per model (kept in its cache)."""
    if "gpu" not in model._cache:
        g = model.graph
        if g.n_nodes >= 2**31:
            raise NotImplementedError("the GPU twin packs node indices in 32 bits: graphs under 2**31 nodes")
        model._cache["gpu"] = {
            "indptr": cp.asarray(g.indptr, dtype=cp.int64),
            "indices": cp.asarray(g.indices, dtype=cp.int32),
            "deg": cp.asarray(np.diff(g.indptr), dtype=cp.int64),
            "thr": cp.asarray(model.threshold_array()),
            "cumw": cp.asarray(model.cumulative_weights()),
            "w": cp.asarray(model.weights),
        }
    return model._cache["gpu"]


def _device_transpose(model: ICModel, dev: dict) -> None:
    if "t_indptr" not in dev:
        t_indptr, t_indices, perm = transpose(model.graph)
        dev["t_indptr"] = cp.asarray(t_indptr, dtype=cp.int64)
        dev["t_indices"] = cp.asarray(t_indices, dtype=cp.int64)
        dev["t_perm"] = cp.asarray(perm, dtype=cp.int64)
        dev["t_deg"] = cp.asarray(np.diff(t_indptr), dtype=cp.int64)


def _segments(degs: cp.ndarray) -> list[tuple[int, int, int]]:
    """Cut a frontier into runs of entries whose degrees add up to at most SEGMENT_EDGES (an entry above it alone):
    (first, last, edges) each."""
    csum = cp.cumsum(degs).get()
    out = []
    a, done = 0, 0
    while a < len(csum):
        b = int(np.searchsorted(csum, done + SEGMENT_EDGES, side="right"))
        b = max(b, a + 1)
        out.append((a, b, int(csum[b - 1] - done)))
        done = int(csum[b - 1])
        a = b
    return out


def _pow2(x: int) -> int:
    return 1 << max(10, int(x - 1).bit_length())


def _rr_chunk(model: ICModel, dev: dict, base: int, start: int, count: int) -> tuple[cp.ndarray, int]:
    """Packed (set << 32 | node) keys of sets [start, start+count), sorted, and the edges looked at."""
    n = model.n_nodes
    expand = _k("rr_expand")
    cap = _pow2(8 * count)
    table = cp.zeros(cap, dtype=cp.uint64)
    frontier = cp.empty(count, dtype=cp.int64)
    _k("rr_roots")(
        *_grid(count),
        (np.uint64(base), np.int64(start), np.int32(count), np.int64(n), dev["cumw"], np.int32(model.unit_weights),
         table, np.uint64(cap - 1), frontier),
    )  # fmt: skip
    levels = [frontier]
    held = count
    touched = cp.zeros(1, dtype=cp.uint64)
    while len(frontier):
        degs = dev["deg"][frontier & 0xFFFFFFFF]
        segs = _segments(degs)
        bound = sum(s[2] for s in segs)
        if 2 * (held + bound) > cap:  # keep the table at most half full: grow and refill before expanding
            cap = _pow2(2 * (held + bound))
            table = cp.zeros(cap, dtype=cp.uint64)
            for lv in levels:
                _k("rehash")(*_grid(len(lv)), (lv, np.int64(len(lv)), table, np.uint64(cap - 1)))
        nexts = []
        for a, b, edges in segs:
            nxt = cp.empty(max(edges, 1), dtype=cp.int64)
            cnt = cp.zeros(1, dtype=cp.uint32)
            part = frontier[a:b]
            expand(
                *_grid(b - a),
                (np.uint64(base), np.int64(start), part, np.int64(b - a), dev["indptr"], dev["indices"], dev["thr"],
                 np.int32(model.uniform), table, np.uint64(cap - 1), nxt, cnt, touched),
            )  # fmt: skip
            nexts.append(nxt[: int(cnt.get()[0])])
        frontier = cp.concatenate(nexts) if nexts else cp.empty(0, cp.int64)
        held += len(frontier)
        if len(frontier):
            levels.append(frontier)
    keys = cp.sort(cp.concatenate(levels))
    return keys, int(touched.get()[0])


def _rr_device(
    model: ICModel, seed: int, start: int, stop: int, stream: int, guard: Callable[[], object] | None = None
) -> tuple[cp.ndarray, cp.ndarray, int]:
    """(indptr int64, nodes int32, edges touched) of sets [start, stop) on the device; ``guard()`` is called between
    two chunks (it may raise)."""
    dev = device_model(model)
    base = base_key(seed, stream)
    sizes, nodes, touched = [], [], 0
    for a in range(start, stop, CHUNK_SETS):
        if guard is not None and sizes:
            guard()
        count = min(CHUNK_SETS, stop - a)
        keys, t = _rr_chunk(model, dev, base, a, count)
        sizes.append(cp.bincount((keys >> 32).astype(cp.int64), minlength=count))
        nodes.append((keys & 0xFFFFFFFF).astype(cp.int32))
        touched += t
    if not sizes:
        return cp.zeros(1, cp.int64), cp.zeros(0, cp.int32), 0
    indptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(cp.concatenate(sizes))])
    return indptr, cp.concatenate(nodes), touched


def _greedy_device(indptr: cp.ndarray, nodes: cp.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Greedy maximum coverage on the device: (picks, sets newly covered by each), ties to the smallest node."""
    n_sets = len(indptr) - 1
    set_of = _set_of(indptr, len(nodes))
    order = cp.argsort(nodes.astype(cp.int64) * max(n_sets, 1) + set_of)
    inv = set_of[order]
    deg = cp.bincount(nodes, minlength=n).astype(cp.int32)
    inv_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(deg.astype(cp.int64))]).get()
    covered = cp.zeros(max(n_sets, 1), dtype=cp.uint8)
    ids = cp.arange(n, dtype=cp.int64)
    kernel = _k("cover")
    chosen, newly = [], []
    for _ in range(min(k, n)):
        # the largest count, then the smallest node: one reduction over (count << 32 | (2^32 - 1 - node))
        packed = int(cp.max((deg.astype(cp.int64) + 1) * (1 << 32) + (0xFFFFFFFF - ids)).get())
        best = 0xFFFFFFFF - (packed & 0xFFFFFFFF)
        gain = (packed >> 32) - 1
        chosen.append(best)
        newly.append(max(gain, 0))
        a, b = int(inv_ptr[best]), int(inv_ptr[best + 1])
        if b > a and gain > 0:
            kernel(*_grid(b - a), (inv, np.int64(a), np.int64(b), indptr, nodes, covered, deg))
        deg[best] = -1
    return np.asarray(chosen, np.int64), np.asarray(newly, np.int64)


# --------------------------------------------------------------------------------------------------------------
# The twins of the dispatchers
# --------------------------------------------------------------------------------------------------------------


def rr_sets(
    model: ICModel, *, seed: int = 0, start: int = 0, stop: int = 0, stream: int = 0, backend: str = "auto"
) -> RRSets:
    _check_twin_backend(backend)
    check_range(start, stop)
    if model.n_nodes == 0 or stop == start:
        return RRSets(np.zeros(stop - start + 1, np.int64), np.zeros(0, np.int32), seed, stream, start, 0)
    if model.total_weight <= 0:
        raise ValueError("weights: every node weighs 0, so there is no root to draw an RR set from")
    indptr, nodes, touched = _rr_device(model, seed, start, stop, stream)
    return RRSets(indptr.get(), nodes.get(), seed, stream, start, touched)


def select_seeds(model: ICModel, rr: RRSets, *, k: int = 50, backend: str = "auto") -> Selection:
    _check_twin_backend(backend)
    check_k(k)
    chosen, newly = _greedy_device(cp.asarray(rr.indptr), cp.asarray(rr.nodes), model.n_nodes, k)
    return selection_from_counts(chosen, newly, rr.count, model.total_weight)


def imm_sample_size(
    model: ICModel,
    *,
    k: int = 50,
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    backend: str = "auto",
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> ImmSize:
    _check_twin_backend(backend)
    check_k(k)
    check_max_sets(max_sets)
    pool: list[tuple[cp.ndarray, cp.ndarray]] = []

    def generate(a: int, b: int) -> int:
        indptr, nodes, _ = _rr_device(model, seed, a, b, STREAM_SAMPLING, stop)
        pool.append((indptr, nodes))
        return len(nodes)

    def covered(kk: int) -> int:
        if len(pool) > 1:
            sizes = cp.concatenate([cp.diff(p[0]) for p in pool])
            nodes = cp.concatenate([p[1] for p in pool])
            pool[:] = [(cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(sizes)]), nodes)]
        return int(_greedy_device(pool[0][0], pool[0][1], model.n_nodes, kk)[1].sum())

    return imm_sampling(model, k, eps, ell, generate, covered, max_sets=max_sets, stop=stop)


def evaluate_spread(
    model: ICModel, seeds: np.ndarray, *, runs: int = 20000, seed: int = 1, backend: str = "auto"
) -> SpreadEstimate:
    _check_twin_backend(backend)
    s = check_seeds(model, seeds)
    return normal_ci(_spread_runs(model, s, runs, seed), seed)


def compare_spreads(
    model: ICModel, seed_sets, *, runs: int = 20000, seed: int = 1, backend: str = "auto"
) -> SpreadComparison:
    _check_twin_backend(backend)
    sets = [check_seeds(model, s) for s in seed_sets]
    if not sets:
        raise ValueError("seed_sets must hold at least one seed set")
    return paired_comparison(np.stack([_spread_runs(model, s, runs, seed) for s in sets]), seed)


def _spread_runs(model: ICModel, s: np.ndarray, runs: int, seed: int) -> np.ndarray:
    """float64[runs]: the spread of ``s`` in each world of (``seed``, stream 2), the CPU's values."""
    n = model.n_nodes
    if n == 0 or len(s) == 0:
        return np.zeros(runs)
    dev = device_model(model)
    _device_transpose(model, dev)
    base = np.uint64(base_key(seed, STREAM_EVALUATE))
    words = (n + 31) // 32
    per_run = words * 4 + 8
    chunk = int(max(1, min(runs, (memory_budget() // 4) // per_run)))
    seeds_d = cp.asarray(s, dtype=cp.int64)
    expand = _k("mc_expand")
    out = []
    for r0 in range(0, runs, chunk):
        nr = min(chunk, runs - r0)
        seen = cp.zeros(nr * words, dtype=cp.uint32)
        spread = cp.zeros(nr, dtype=cp.float64)
        frontier = cp.empty(nr * len(s), dtype=cp.int64)
        _k("mc_seed")(
            *_grid(nr * len(s)),
            (seeds_d, np.int32(len(s)), np.int32(nr), np.int64(words), seen, dev["w"], spread, frontier),
        )
        while len(frontier):
            nexts = []
            for a, b, edges in _segments(dev["t_deg"][frontier & 0xFFFFFFFF]):
                nxt = cp.empty(max(edges, 1), dtype=cp.int64)
                cnt = cp.zeros(1, dtype=cp.uint32)
                expand(
                    *_grid(b - a),
                    (base, np.int64(r0), frontier[a:b], np.int64(b - a), dev["t_indptr"], dev["t_indices"],
                     dev["t_perm"], dev["thr"], np.int32(model.uniform), np.int64(words), seen, dev["w"], spread,
                     nxt, cnt),
                )  # fmt: skip
                nexts.append(nxt[: int(cnt.get()[0])])
            frontier = cp.concatenate(nexts) if nexts else cp.empty(0, cp.int64)
        out.append(spread.get())
        del seen
    return np.concatenate(out)


def influence_max(
    model: ICModel,
    *,
    k: int = 50,
    method: str = "imm",
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    scores: np.ndarray | None = None,
    snapshots: int = 200,
    backend: str = "auto",
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> IMResult:
    _check_twin_backend(backend)
    check_k(k)
    check_max_sets(max_sets)
    t0 = time.perf_counter()
    params = {"method": method, "k": int(k), "seed": int(seed), "model": "ic", "probabilities": model.kind}
    if model.p is not None:
        params["p"] = model.p
    n = model.n_nodes
    notes: list[str] = []
    if method == "imgpu":
        params["snapshots"] = int(snapshots)
        chosen, gains, notes = imgpu_device(model, k=k, snapshots=snapshots, seed=seed, stop=stop)
        rr_count, sampling, lb = 0, 0, float("nan")
    elif method == "imm":
        params.update(eps=float(eps), ell=float(ell))
        size = imm_sample_size(model, k=k, eps=eps, ell=ell, seed=seed, backend="gpu", max_sets=max_sets, stop=stop)
        indptr, nodes, _ = _rr_device(model, seed, 0, size.theta, STREAM_SELECTION, stop)
        chosen, newly = _greedy_device(indptr, nodes, n, k)
        gains = newly * (model.total_weight / size.theta) if size.theta else newly * 0.0
        rr_count, sampling, lb = size.theta, size.sampling_rr_sets, size.lower_bound
    else:
        idx = np.arange(n)
        kk = min(k, n)
        if method == "degree":
            chosen = np.lexsort((idx, -model.graph.in_degree))[:kk].astype(np.int64)
        elif method == "influence":
            if scores is None:
                raise ValueError("scores: method 'influence' needs one score per node")
            chosen = np.lexsort((idx, -np.asarray(scores, dtype=np.float64)))[:kk].astype(np.int64)
        elif method == "random":
            chosen = np.random.default_rng(seed).choice(n, size=kk, replace=False).astype(np.int64)
        else:
            raise ValueError(f"unknown method {method!r}")
        indptr, nodes, _ = _rr_device(model, seed, 0, BASELINE_RR_SETS, STREAM_SELECTION)
        newly = _cover_in_order(indptr, nodes, n, chosen)
        gains = newly * (model.total_weight / BASELINE_RR_SETS)
        rr_count, sampling, lb = BASELINE_RR_SETS, 0, float("nan")
    gains = np.asarray(gains, dtype=np.float64)
    curve = np.cumsum(gains)
    return IMResult(
        method=method,
        k=int(k),
        nodes=np.asarray(chosen, np.int64),
        user_ids=model.graph.ids[np.asarray(chosen, np.int64)],
        gains=gains,
        curve=curve,
        estimate=float(curve[-1]) if len(curve) else 0.0,
        rr_sets=int(rr_count),
        sampling_rr_sets=int(sampling),
        lower_bound=float(lb),
        snapshots=int(snapshots) if method == "imgpu" else 0,
        seconds=time.perf_counter() - t0,
        backend="gpu",
        params=params,
        notes=notes,
    )


def _set_of(indptr: cp.ndarray, size: int) -> cp.ndarray:
    """The set each of the ``size`` entries belongs to (cupy.repeat takes no device array of counts)."""
    return cp.searchsorted(indptr[1:], cp.arange(size, dtype=cp.int64), side="right")


def _cover_in_order(indptr: cp.ndarray, nodes: cp.ndarray, n: int, seeds: np.ndarray) -> np.ndarray:
    """Sets newly covered by each of the (distinct) seeds in the given order: a set counts for its earliest seed.
    One sort of (set, rank) keys: set blocks keep their positions, so each block's first key has its minimum."""
    big = len(seeds)
    rank = cp.full(n, big, dtype=cp.int64)
    rank[cp.asarray(seeds)] = cp.arange(big, dtype=cp.int64)
    keys = cp.sort(_set_of(indptr, len(nodes)) * (big + 1) + rank[nodes])
    first = keys[indptr[:-1]] % (big + 1)
    return cp.bincount(first[first < big], minlength=big).get().astype(np.int64)


# --------------------------------------------------------------------------------------------------------------
# IMGPU's bottom-up traversal on the device
# --------------------------------------------------------------------------------------------------------------

#: reach-list entries one snapshot may use before it switches to sketches (the CPU reference's EXACT_ENTRIES)
EXACT_ENTRIES = int(os.environ.get("SPREADWATCH_IMGPU_EXACT_ENTRIES", 1 << 25))
#: entries of a bottom-k reachability sketch (the reference's SKETCH_K)
SKETCH_K = 64

_U = np.uint64


def _mix64_dev(z: cp.ndarray) -> cp.ndarray:
    z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
    return z ^ (z >> _U(31))


def _expand(lens: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray]:
    """For segments of ``lens`` entries laid end to end: each entry's segment and its offset in it."""
    if len(lens) == 0:
        return cp.zeros(0, cp.int64), cp.zeros(0, cp.int64)
    ends = cp.cumsum(lens)
    total = int(ends[-1])
    j = cp.arange(total, dtype=cp.int64)
    seg = cp.searchsorted(ends, j, side="right")
    return seg, j - (ends[seg] - lens[seg])


def _lower_to_min(a: cp.ndarray, idx: cp.ndarray, v: cp.ndarray, span: int) -> None:
    """``a[i] = min(a[i], every v at i)`` for values below ``span`` (a sort of packed (index, value) keys: the
    first key of each index holds its smallest value)."""
    keys = cp.sort(idx * span + v)
    at = keys // span
    first = cp.ones(len(keys), dtype=cp.bool_)
    first[1:] = at[1:] != at[:-1]
    at, low = at[first], keys[first] % span
    a[at] = cp.minimum(a[at], low)


def _scc_min_labels(size: int, a: cp.ndarray, b: cp.ndarray) -> cp.ndarray:
    """Every node's strongly connected component, named by its smallest node, in the graph of edges a -> b.
    Trimming (a node with no live edge in or out is a component alone) until nothing changes, then forward
    min-label propagation: the nodes whose label is themselves are the smallest of their components, and their
    components are what reaches them back among the nodes of their label; those are removed and the rest
    repeats."""
    label = cp.arange(size, dtype=cp.int64)
    active = cp.ones(size, dtype=cp.bool_)
    idx = cp.arange(size, dtype=cp.int64)
    while len(a):
        while True:
            keep = active[a] & active[b]
            a, b = a[keep], b[keep]
            dead = active & ((cp.bincount(b, minlength=size) == 0) | (cp.bincount(a, minlength=size) == 0))
            if not bool(dead.any()):
                break
            active &= ~dead
        if not len(a):
            break
        color = cp.where(active, idx, size)
        while True:
            cand = color[a]
            upd = cand < color[b]
            if not bool(upd.any()):
                break
            _lower_to_min(color, b[upd], cand[upd], size + 1)
        done = active & (color == idx)
        while True:
            grow = (color[a] == color[b]) & done[b] & ~done[a]
            if not bool(grow.any()):
                break
            done[a[grow]] = True
        label[done] = color[done]
        active &= ~done
    return label


def _imgpu_snapshots(model: ICModel, dev: dict, snapshots: int, seed: int) -> dict:
    """The R live-edge snapshots (the CPU's coins), condensed, as one disjoint union: node v of snapshot r is
    r * n + v; components are numbered per snapshot by their smallest node (the reference's canonical labels)
    and laid out snapshot after snapshot; the DAG (influence direction) in CSR, every component's level."""
    g = model.graph
    n, m = g.n_nodes, g.n_edges
    base = base_key(seed, STREAM_SNAPSHOTS)
    e1 = (cp.arange(m, dtype=cp.uint64) + _U(1)) * _U(EDGE_SALT)
    thr = dev["thr"] if not model.uniform else dev["thr"][0]
    followee = dev["indices"].astype(cp.int64)
    follower = _set_of(dev["indptr"], m)
    a_parts, b_parts = [], []
    for r in range(snapshots):
        key = _U(mix64((base + (r + 1) * GOLDEN) & 0xFFFFFFFFFFFFFFFF))
        live = (_mix64_dev(e1 ^ key) >> _U(32)) < thr
        a_parts.append(followee[live] + r * n)  # influence: followee -> follower
        b_parts.append(follower[live] + r * n)
    a = cp.concatenate(a_parts) if a_parts else cp.zeros(0, cp.int64)
    b = cp.concatenate(b_parts) if b_parts else cp.zeros(0, cp.int64)
    del a_parts, b_parts
    size = snapshots * n
    label = _scc_min_labels(size, a, b)
    roots = cp.flatnonzero(label == cp.arange(size, dtype=cp.int64))
    comp = cp.searchsorted(roots, label)
    nc = len(roots)
    comp_off = cp.searchsorted(roots, cp.arange(snapshots + 1, dtype=cp.int64) * n).get()
    w = cp.asarray(model.weights, dtype=cp.float64)
    cw = cp.bincount(comp, weights=w[cp.arange(size, dtype=cp.int64) % n], minlength=nc)
    ca, cb = comp[a], comp[b]
    keep = ca != cb
    keys = cp.unique(ca[keep] * nc + cb[keep])
    dag_src, dag_dst = keys // nc, keys % nc
    dag_ptr = cp.zeros(nc + 1, dtype=cp.int64)
    dag_ptr[1:] = cp.cumsum(cp.bincount(dag_src, minlength=nc))
    # levels (sinks 0, else 1 + the highest child's), level-synchronously from the sinks
    order = cp.argsort(dag_dst * nc + dag_src)
    parents = dag_src[order]
    par_ptr = cp.zeros(nc + 1, dtype=cp.int64)
    par_ptr[1:] = cp.cumsum(cp.bincount(dag_dst, minlength=nc))
    pending = cp.diff(dag_ptr)
    level = cp.zeros(nc, dtype=cp.int64)
    frontier = cp.flatnonzero(pending == 0)
    depth = 0
    while len(frontier):
        seg, off = _expand(par_ptr[frontier + 1] - par_ptr[frontier])
        p = parents[par_ptr[frontier][seg] + off]
        pending -= cp.bincount(p, minlength=nc)
        cand = cp.unique(p)
        frontier = cand[pending[cand] == 0]
        depth += 1
        level[frontier] = depth
    by_level = cp.argsort(level * nc + cp.arange(nc, dtype=cp.int64))
    level_ptr = cp.searchsorted(level[by_level], cp.arange(depth + 2, dtype=cp.int64)).get()
    return {
        "comp": comp.reshape(snapshots, n),
        "cw": cw,
        "nc": nc,
        "comp_off": comp_off,
        "dag_ptr": dag_ptr,
        "dag_idx": dag_dst,
        "by_level": by_level,
        "level_ptr": level_ptr,
        "sink": cp.diff(dag_ptr) == 0,
        "snap_of": cp.searchsorted(cp.asarray(comp_off[1:]), cp.arange(nc, dtype=cp.int64), side="right"),
    }


def _children(s: dict, cs: cp.ndarray, covered: cp.ndarray) -> tuple[cp.ndarray, cp.ndarray]:
    """(position in ``cs`` of the parent, child) for every uncovered child of the components ``cs``."""
    ptr = s["dag_ptr"]
    seg, off = _expand(ptr[cs + 1] - ptr[cs])
    ch = s["dag_idx"][ptr[cs][seg] + off]
    keep = ~covered[ch]
    return seg[keep], ch[keep]


def _reach_exact_group(
    s: dict, covered: cp.ndarray, snaps: np.ndarray, budget: int
) -> tuple[cp.ndarray, list, np.ndarray]:
    """Exact reach (IMGPU's eq. 1, overlap() by merged lists) of every uncovered component of the snapshots
    ``snaps``, level by level: a component's list is the union of itself and its uncovered children's lists (one
    sort and unique of (parent, entry) keys per level; a sink, level 0, keeps no list and counts as itself).
    Returns (reach over all components, the snapshots whose lists would pass ``budget`` entries by the
    reference's order-free count (their reach is left 0), that count per snapshot)."""
    nc = s["nc"]
    reach = cp.zeros(nc, dtype=cp.float64)
    in_group = cp.zeros(len(s["comp_off"]) - 1, dtype=cp.bool_)
    in_group[cp.asarray(snaps)] = True
    needed = cp.zeros(len(in_group), dtype=cp.int64)
    lstart = cp.full(nc, -1, dtype=cp.int64)
    lsize = cp.zeros(nc, dtype=cp.int64)
    pool = cp.empty(1 << 16, dtype=cp.int64)
    pos = 0
    over = np.zeros(0, dtype=np.int64)
    lp = s["level_ptr"]
    for lev in range(len(lp) - 1):
        cs = s["by_level"][lp[lev] : lp[lev + 1]]
        cs = cs[in_group[s["snap_of"][cs]] & ~covered[cs]]
        if not len(cs):
            continue
        if lev == 0:  # the sinks (most components at small p): their reach is their weight, their list themselves
            reach[cs] = s["cw"][cs]
            lsize[cs] = 1
            continue
        par, ch = _children(s, cs, covered)
        child = cp.bincount(par, weights=lsize[ch].astype(cp.float64), minlength=len(cs))
        need = cp.where(s["sink"][cs], 0, 1 + child.astype(cp.int64))
        needed += cp.bincount(s["snap_of"][cs], weights=need.astype(cp.float64), minlength=len(in_group)).astype(
            cp.int64
        )
        now_over = in_group & (needed > budget)
        if bool(now_over.any()):
            over = np.union1d(over, cp.flatnonzero(now_over).get())
            in_group &= ~now_over
            ok = in_group[s["snap_of"][cs]]
            remap = cp.cumsum(ok) - 1
            cs = cs[ok]
            keep = ok[par]
            par, ch = remap[par[keep]], ch[keep]
            if not len(cs):
                continue
        seg, off = _expand(lsize[ch])
        at = lstart[ch][seg]
        ent = cp.where(at < 0, ch[seg], pool[cp.maximum(at + off, 0)])  # a sink child keeps no list: itself
        keys = cp.concatenate([cs * nc + cs, cs[par[seg]] * nc + ent])
        uniq = cp.unique(keys)
        upar, uent = uniq // nc, uniq % nc
        count = len(uniq)
        if pos + count > len(pool):
            bigger = cp.empty(max(2 * len(pool), pos + count), dtype=cp.int64)
            bigger[:pos] = pool[:pos]
            pool = bigger
        pool[pos : pos + count] = uent
        first = cp.searchsorted(upar, cs)
        lstart[cs] = pos + first
        lsize[cs] = cp.diff(cp.concatenate([first, cp.asarray([count], dtype=cp.int64)]))
        pos += count
        reach[cs] = cp.bincount(cp.searchsorted(cs, upar), weights=s["cw"][uent], minlength=len(cs))
    return reach, over.tolist(), needed.get()


def _reach_sketch(s: dict, covered: cp.ndarray, snaps: list, ranks: cp.ndarray, kk: int) -> cp.ndarray:
    """The reference's bottom-kk sketches (Cohen 1997) for the snapshots ``snaps``, level by level: a component's
    sketch is the kk smallest ranks among its own (if it weighs anything) and its uncovered children's, each
    component once; a reach of fewer than kk components is summed, a larger one estimated by rank conditioning.
    Sums run entry by entry in rank order, as the reference's do."""
    nc = s["nc"]
    reach = cp.zeros(nc, dtype=cp.float64)
    in_set = cp.zeros(len(s["comp_off"]) - 1, dtype=cp.bool_)
    in_set[cp.asarray(np.asarray(snaps, dtype=np.int64))] = True
    members = cp.flatnonzero(in_set[s["snap_of"]])
    loc = cp.full(nc, -1, dtype=cp.int64)
    loc[members] = cp.arange(len(members), dtype=cp.int64)
    sk_rank = cp.full((len(members), kk), np.inf)
    sk_id = cp.full((len(members), kk), -1, dtype=cp.int64)
    cnt = cp.zeros(len(members), dtype=cp.int64)
    cw = s["cw"]
    lp = s["level_ptr"]
    for lev in range(len(lp) - 1):
        cs = s["by_level"][lp[lev] : lp[lev + 1]]
        cs = cs[in_set[s["snap_of"][cs]] & ~covered[cs]]
        if not len(cs):
            continue
        par, ch = _children(s, cs, covered)
        lch = loc[ch]
        seg, off = _expand(cnt[lch])
        own = cp.flatnonzero(cw[cs] > 0)
        e_par = cp.concatenate([own, par[seg]])
        e_id = cp.concatenate([cs[own], sk_id[lch[seg], off]])
        e_rank = cp.concatenate([ranks[cs[own]], sk_rank[lch[seg], off]])
        lcs = loc[cs]
        if len(e_par):
            rank_pos = cp.empty(len(e_rank), dtype=cp.int64)
            rank_pos[cp.argsort(e_rank)] = cp.arange(len(e_rank), dtype=cp.int64)
            o = cp.argsort(e_par * len(e_rank) + rank_pos)
            e_par, e_id, e_rank = e_par[o], e_id[o], e_rank[o]
            dup = cp.zeros(len(e_par), dtype=cp.bool_)
            dup[1:] = (e_par[1:] == e_par[:-1]) & (e_id[1:] == e_id[:-1])
            e_par, e_id, e_rank = e_par[~dup], e_id[~dup], e_rank[~dup]
            slot = cp.arange(len(e_par), dtype=cp.int64) - cp.searchsorted(e_par, e_par)
            take = slot < kk
            rows = lcs[e_par[take]]
            sk_rank[rows, slot[take]] = e_rank[take]
            sk_id[rows, slot[take]] = e_id[take]
            cnt[lcs] = cp.minimum(cp.bincount(e_par, minlength=len(cs)), kk)
        took = cnt[lcs]
        ids = sk_id[lcs]
        w = cp.where(ids >= 0, cw[cp.maximum(ids, 0)], 0.0)
        full = took == kk
        tau = cp.where(full, sk_rank[lcs, kk - 1], 0.0)
        total = cp.zeros(len(cs), dtype=cp.float64)
        for z in range(kk):  # entry by entry, the reference's order of summation
            wz = w[:, z]
            if z < kk - 1:
                den = cp.where(full & (wz > 0), -cp.expm1(-wz * tau), 1.0)
                term = cp.where(full, wz / den, wz)
            else:
                term = cp.where(full, 0.0, wz)
            total += cp.where(z < took, term, 0.0)
        reach[cs] = total
    return reach


def _cover_dev(s: dict, covered: cp.ndarray, start: cp.ndarray) -> None:
    frontier = cp.unique(start[~covered[start]])
    while len(frontier):
        covered[frontier] = True
        _, ch = _children(s, frontier, covered)
        frontier = cp.unique(ch)


def imgpu_device(
    model: ICModel, *, k: int, snapshots: int, seed: int, stop: Callable[[], object] | None = None
) -> tuple[np.ndarray, np.ndarray, list]:
    """IMGPU (Liu et al., Alg. 2) on the device, the reference's ``imgpu_cpu`` step for step: the same snapshots
    (counter-based coins), the same canonical components, the same reach by level, the same picks. ``stop`` is
    called between rounds (it may raise)."""
    n = model.n_nodes
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0), [f"imgpu: {snapshots} live-edge snapshots of an empty graph"]
    dev = device_model(model)
    s = _imgpu_snapshots(model, dev, snapshots, seed)
    nc = s["nc"]
    covered = cp.zeros(nc, dtype=cp.bool_)
    ranks = cp.zeros(nc, dtype=cp.float64)
    sketched: list[int] = []
    off = s["comp_off"]
    # snapshots swept together: their lists (8 bytes an entry, about 6 with a level's sort and unique) must fit the
    # device; a snapshot's count only shrinks as the picks cover more, so the last round's count bounds this one's
    room = memory_budget() // 48
    entries = np.full(snapshots, EXACT_ENTRIES, dtype=np.int64)
    chosen: list[int] = []
    gains: list[float] = []
    for _ in range(min(k, n)):
        if stop is not None:
            stop()
        reach = cp.zeros(nc, dtype=cp.float64)
        exact = [r for r in range(snapshots) if r not in sketched]
        groups: list[list[int]] = []
        used = room
        for r in exact:
            if used + entries[r] > room and (not groups or groups[-1]):
                groups.append([])
                used = 0
            groups[-1].append(r)
            used += entries[r]
        for grp in groups:
            part, over, needed = _reach_exact_group(s, covered, np.asarray(grp), EXACT_ENTRIES)
            entries[grp] = np.minimum(needed[grp], EXACT_ENTRIES)
            reach += part
            for r in over:
                sketched.append(int(r))
                cw_r = s["cw"][off[r] : off[r + 1]].get()
                rng = np.random.default_rng([seed, int(r)])
                with np.errstate(divide="ignore"):
                    ranks[off[r] : off[r + 1]] = cp.asarray(rng.exponential(size=len(cw_r)) / cw_r)
        if sketched:
            reach += _reach_sketch(s, covered, sketched, ranks, SKETCH_K)
        comp = s["comp"]
        gain = cp.where(covered[comp], 0.0, reach[comp])
        total = cp.zeros(n, dtype=cp.float64)
        for r in range(snapshots):  # snapshot by snapshot, the reference's order of summation
            total += gain[r]
        if chosen:
            total[cp.asarray(chosen)] = -1.0
        best = int(cp.argmax(total))
        chosen.append(best)
        gains.append(max(float(total[best]), 0.0) / snapshots)
        _cover_dev(s, covered, comp[:, best])
    notes = [
        f"imgpu: {snapshots} live-edge snapshots; overlap() exact in {snapshots - len(sketched)}, "
        f"bottom-{SKETCH_K} sketches in {len(sketched)}"
    ]
    return np.asarray(chosen, dtype=np.int64), np.asarray(gains), notes
