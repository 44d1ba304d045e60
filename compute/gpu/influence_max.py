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

**IMGPU** (``influence_max(method="imgpu")``): the bottom-up traversal is :mod:`compute.gpu._imgpu`'s
``imgpu_device`` (live-edge snapshots, their SCCs and condensation, a level-by-level sweep of merged reach lists
or bottom-k sketches per round); this module hands it ``device_model`` and wraps its picks in the result.
docs/influence_max.md says what is equal to the CPU and when.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import cupy as cp
import numpy as np

from ..graphs import transpose
from ..influence_model import (
    BASELINE_RR_SETS,
    STREAM_EVALUATE,
    STREAM_SAMPLING,
    STREAM_SELECTION,
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
    normal_ci,
    paired_comparison,
    selection_from_counts,
)
from ._device import memory_budget, module, set_of
from ._imgpu import imgpu_device

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
    owner = set_of(indptr, len(nodes))
    order = cp.argsort(nodes.astype(cp.int64) * max(n_sets, 1) + owner)
    inv = owner[order]
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
        chosen, gains, notes = imgpu_device(model, device_model, k=k, snapshots=snapshots, seed=seed, stop=stop)
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


def _cover_in_order(indptr: cp.ndarray, nodes: cp.ndarray, n: int, seeds: np.ndarray) -> np.ndarray:
    """Sets newly covered by each of the (distinct) seeds in the given order: a set counts for its earliest seed.
    One sort of (set, rank) keys: set blocks keep their positions, so each block's first key has its minimum."""
    big = len(seeds)
    rank = cp.full(n, big, dtype=cp.int64)
    rank[cp.asarray(seeds)] = cp.arange(big, dtype=cp.int64)
    keys = cp.sort(set_of(indptr, len(nodes)) * (big + 1) + rank[nodes])
    first = keys[indptr[:-1]] % (big + 1)
    return cp.bincount(first[first < big], minlength=big).get().astype(np.int64)
