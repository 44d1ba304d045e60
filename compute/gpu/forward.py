"""Forward phase on the GPU: the twin of :func:`compute.algorithms.forward.forward` (same signature, same edge sets).

The CPU reference walks each cascade in time order. On the GPU the two halves of that walk come apart:

1. **Candidate edges** ``(v, u)``: ``u`` is a participant of ``v``'s cascade, strictly earlier than ``v``, and
   ``v`` follows ``u``. These need no reachability, so every retweeter is independent. Per retweeter the
   cheaper side is taken, as GALE (CRGP) and the CPU do: scan its friend list and test each friend against the
   cascade's participants (a 16 MB bitmap over ``(cascade, user)`` that stays in L2 answers the ~99% misses, an
   open-addressing hash table the rest), or take each earlier participant and binary-search it in the sorted
   friend list. The work of all retweeters is cut into units of ``UNIT`` tests, one warp per unit, so a
   celebrity with 100K friends is spread over many warps (load balance without per-item searches).
2. **Reachability**: ``u`` is reached iff a path of candidate edges leads from the publisher to it (each edge
   goes forward in time, so this is exactly the CPU's "some earlier *reached* participant" rule, by induction
   over time). A few edge-parallel sweeps find the fixed point (cascades are shallow). Under ``attach`` every
   participant is reached, and a retweeter without candidates gets ``(v, publisher)``, as on the CPU.
3. The kept edges are sorted by ``(src, dst)``: a deterministic order, grouped by cascade (cascades own
   contiguous node ranges) and by retweeter.

Ties in time give no edge; a user missing from the follower graph has no friends (an orphan). The follower
graph stays on the device between calls (cached per :class:`FollowerGraph` object), since uploading 1.4 GB
for every batch would cost more than the phase.
"""

from __future__ import annotations

import weakref

import cupy as cp
import numpy as np

from ..structures import ORPHAN_POLICIES, Cascades, FollowerGraph, SpreadingGraphs
from ._device import Timer, kernel, log, memory_budget, plan_chunks

__all__ = ["DeviceGraph", "device_graph", "device_graph_bytes", "forward", "forward_bytes"]

#: membership tests per warp-sized unit of work
UNIT = 1024

_SOURCE = r"""
#define EMPTY 0xFFFFFFFFFFFFFFFFull

__device__ __forceinline__ unsigned long long pkey(long long cas, int user) {
    return ((unsigned long long)cas << 32) | (unsigned int)user;
}
__device__ __forceinline__ unsigned long long mix(unsigned long long k) {
    k ^= k >> 31; k *= 0x9E3779B97F4A7C15ull; k ^= k >> 29; return k;
}

// participants -> hash table (key (cascade, user) -> smallest global node) and the membership bitmap
extern "C" __global__ void insert_participants(
    const int* __restrict__ node_user, const int* __restrict__ node_cas, const long long n,
    unsigned long long* __restrict__ keys, int* __restrict__ vals, const unsigned long long mask,
    unsigned int* __restrict__ bitmap, const int bshift)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        const int u = node_user[i];
        if (u < 0) continue;
        const unsigned long long k = pkey(node_cas[i], u);
        const unsigned long long h = mix(k);
        const unsigned long long bit = h >> bshift;
        atomicOr(&bitmap[bit >> 5], 1u << (bit & 31));
        unsigned long long s = h & mask;
        while (true) {
            const unsigned long long old = atomicCAS(&keys[s], EMPTY, k);
            if (old == EMPTY || old == k) { atomicMin(&vals[s], (int)i); break; }
            s = (s + 1) & mask;
        }
    }
}

__device__ __forceinline__ int lookup(long long cas, int user, const unsigned long long* __restrict__ keys,
                                      const int* __restrict__ vals, const unsigned long long mask,
                                      const unsigned int* __restrict__ bitmap, const int bshift)
{
    const unsigned long long k = pkey(cas, user);
    const unsigned long long h = mix(k);
    const unsigned long long bit = h >> bshift;
    if (!((__ldg(&bitmap[bit >> 5]) >> (bit & 31)) & 1u)) return -1;
    unsigned long long s = h & mask;
    while (true) {
        const unsigned long long kk = keys[s];
        if (kk == k) return vals[s];
        if (kk == EMPTY) return -1;
        s = (s + 1) & mask;
    }
}

// one warp per unit of UNIT membership tests; writes candidate edges (v, u) through a warp-aggregated append
extern "C" __global__ void candidates(
    const long long n_units, const int unit,
    const int* __restrict__ unit_node, const long long* __restrict__ unit_off,
    const int* __restrict__ work, const signed char* __restrict__ side,
    const int* __restrict__ node_user, const int* __restrict__ node_cas, const double* __restrict__ times,
    const long long* __restrict__ indptr, const int* __restrict__ indices,
    const int* __restrict__ sorted_nodes, const long long* __restrict__ sorted_lo,
    const unsigned long long* __restrict__ keys, const int* __restrict__ vals, const unsigned long long mask,
    const unsigned int* __restrict__ bitmap, const int bshift,
    int* __restrict__ out_src, int* __restrict__ out_dst, unsigned long long* __restrict__ count,
    const unsigned long long capacity)
{
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= n_units) return;
    const int v = unit_node[warp];
    const long long k0 = (warp - unit_off[v]) * (long long)unit;
    const long long w = work[v];
    const long long k1 = k0 + unit < w ? k0 + unit : w;
    const int uv = node_user[v];
    const long long a = indptr[uv];
    const long long b = indptr[uv + 1];
    const long long cas = node_cas[v];
    const double tv = times[v];
    const bool friend_side = side[v] == 0;
    const long long s0 = sorted_lo[cas];
    for (long long base = k0; base < k1; base += 32) {
        const long long k = base + lane;
        int j = -1;
        if (k < k1) {
            if (friend_side) {
                j = lookup(cas, indices[a + k], keys, vals, mask, bitmap, bshift);
                if (j >= 0 && !(times[j] < tv)) j = -1;
            } else {
                const int c = sorted_nodes[s0 + k];
                const int uc = node_user[c];
                if (uc >= 0) {
                    long long lo = a, hi = b;
                    while (lo < hi) {
                        const long long mid = (lo + hi) >> 1;
                        if (indices[mid] < uc) lo = mid + 1; else hi = mid;
                    }
                    if (lo < b && indices[lo] == uc) j = c;
                }
            }
        }
        const unsigned m = __ballot_sync(0xffffffffu, j >= 0);
        if (m) {
            unsigned long long pos = 0;
            if (lane == 0) pos = atomicAdd(count, (unsigned long long)__popc(m));
            pos = __shfl_sync(0xffffffffu, pos, 0) + __popc(m & ((1u << lane) - 1u));
            if (j >= 0 && pos < capacity) { out_src[pos] = v; out_dst[pos] = j; }
        }
    }
}

// one sweep of reachability over the candidate edges (v, u): u reached => v reached
extern "C" __global__ void reach_sweep(const int* __restrict__ src, const int* __restrict__ dst, const long long m,
                                       unsigned char* reached, int* __restrict__ changed)
{
    int any = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m; e += stride) {
        const int v = src[e];
        if (reached[dst[e]] && !reached[v]) { reached[v] = 1; any = 1; }
    }
    if (__syncthreads_or(any) && threadIdx.x == 0) *changed = 1;
}
"""


class DeviceGraph:
    """The follower graph's CSR on the device (``user_ids`` sorted, for the id -> index lookup)."""

    def __init__(self, graph: FollowerGraph, timer: Timer | None = None) -> None:
        timer = timer or Timer()
        with timer.region("graph_upload"):
            self.user_ids = cp.asarray(graph.user_ids)
            self.indptr = cp.asarray(graph.friends_indptr)
            self.indices = cp.asarray(graph.friends_indices).astype(cp.int32, copy=False)
        self.nbytes = int(self.user_ids.nbytes + self.indptr.nbytes + self.indices.nbytes)
        self.timings = timer.result()


_graphs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_graph(graph: FollowerGraph) -> DeviceGraph:
    """The device copy of ``graph`` (uploaded once per graph object; the previous one is released)."""
    dg = _graphs.get(graph)
    if dg is None:
        _graphs.clear()
        if graph.n_users >= 2**31 - 1:
            raise ValueError(f"the GPU forward phase supports < 2^31 users; the graph has {graph.n_users:,}")
        dg = DeviceGraph(graph)
        _graphs[graph] = dg
    return dg


def device_graph_bytes(graph: FollowerGraph) -> int:
    """Device bytes of ``graph``'s :class:`DeviceGraph` (ids, row pointers, 32-bit friend indices)."""
    return int(graph.user_ids.nbytes + graph.friends_indptr.nbytes + 4 * graph.n_edges)


def forward_bytes(cascades: Cascades) -> np.ndarray:
    """Device bytes the forward phase needs per cascade beside the graph (an estimate with headroom)."""
    return 160.0 * np.diff(cascades.node_offsets).astype(np.float64) + 64


def forward(
    cascades: Cascades,
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    backend: str = "auto",
    threads: int | None = None,
) -> SpreadingGraphs:
    """Spreading graphs on the GPU: the twin of :func:`compute.algorithms.forward.forward`, with its signature
    (``threads`` is accepted and ignored; ``backend`` must not ask for the CPU). The same edge sets as the CPU
    reference, sorted by ``(src, dst)``.

    Cascades are processed in chunks that fit the device beside the follower graph. A cascade too large for
    what is left, or every cascade if the graph itself does not fit, is left without edges and named in
    ``deferred``: the dispatcher computes those on the CPU reference (logged)."""
    if backend not in ("gpu", "auto"):
        raise ValueError(
            f"compute.gpu.forward runs on the GPU; backend={backend!r} belongs to compute.algorithms.forward"
        )
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if cascades.times is None:
        raise ValueError("the forward phase needs participation times; these cascades have none")
    t = cascades.n_cascades
    budget = memory_budget()
    graph_bytes = device_graph_bytes(graph)
    if graph_bytes > 0.7 * budget:
        log.warning(
            "the follower graph (%.2f GB) does not fit beside the cascades in the GPU memory budget (%.2f GB)",
            graph_bytes / 1e9, budget / 1e9,
        )  # fmt: skip
        return _without_edges(cascades, np.arange(t), orphans)
    dg = device_graph(graph)
    cost = forward_bytes(cascades)
    chunks, oversized = plan_chunks(cost, max(budget - graph_bytes, 1))
    if oversized:  # a cascade whose participants alone exceed what is left: the dispatcher runs it elsewhere
        log.warning("%d cascade(s) too large for the GPU are left to the CPU reference", len(oversized))
        chunks = sorted(chunks + [(i, i + 1) for i in oversized])
    if len(chunks) == 1 and chunks[0] == (0, t):
        return _forward_chunk(cascades, dg, orphans)
    parts = []
    for a, b in chunks:
        sub = cascades.subset(np.arange(a, b))
        sg = _without_edges(sub, np.arange(1), orphans) if a in oversized else _forward_chunk(sub, dg, orphans)
        parts.append((a, sg))
    return _concat(cascades, parts, orphans, deferred=np.asarray(sorted(oversized), dtype=np.int64))


def _without_edges(cascades: Cascades, deferred: np.ndarray, orphans: str) -> SpreadingGraphs:
    """No edges at all, every cascade in ``deferred`` left for the dispatcher."""
    idx = np.int32 if cascades.n_nodes < 2**31 else np.int64
    none = np.zeros(0, idx)
    return SpreadingGraphs(
        cascades, np.zeros(cascades.n_cascades + 1, np.int64), none, none, orphans=orphans,
        deferred=np.asarray(deferred, dtype=np.int64),
    )  # fmt: skip


def _concat(cascades: Cascades, parts, orphans: str, deferred: np.ndarray | None = None) -> SpreadingGraphs:
    counts = np.concatenate([np.diff(sg.edge_offsets) for _, sg in parts])
    off = np.zeros(cascades.n_cascades + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    src, dst = [], []
    for a, sg in parts:
        shift = cascades.node_offsets[a]
        src.append(sg.edge_src.astype(np.int64) + shift)
        dst.append(sg.edge_dst.astype(np.int64) + shift)
    idx = np.int32 if cascades.n_nodes < 2**31 else np.int64
    src_all, dst_all = np.concatenate(src).astype(idx), np.concatenate(dst).astype(idx)
    if deferred is None:
        return SpreadingGraphs(cascades, off, src_all, dst_all, orphans=orphans)
    return SpreadingGraphs(cascades, off, src_all, dst_all, orphans=orphans, deferred=deferred)


class ForwardRun:
    """One chunk of cascades on the device; :meth:`run` computes the edges (device arrays), repeatable."""

    def __init__(self, cascades: Cascades, dg: DeviceGraph, orphans: str, timer: Timer | None = None) -> None:
        self.cascades = cascades
        self.dg = dg
        self.attach = orphans == "attach"
        c = cascades
        n = c.n_nodes
        if n >= 2**31:
            raise ValueError(f"a GPU chunk holds at most 2^31-1 participants; this one has {n:,}")
        timer = timer or Timer()
        with timer.region("upload"):
            self.node_off = cp.asarray(c.node_offsets)
            self.user_ids = cp.asarray(c.user_ids)
            self.times = cp.asarray(c.times)
            self.publisher = cp.asarray(c.publisher)
            # participants in (cascade, time) order: the identity for cascades built by build_cascades (publisher
            # first, retweeters in time order); otherwise a stable host sort (ties keep the node order)
            self.sorted_nodes = cp.asarray(_time_order(c))
        self.n = n
        self.timer = timer

    def run(self, timer: Timer | None = None):
        """``(src, dst)`` device arrays of the spreading edges, sorted by ``(src, dst)``."""
        timer = timer or self.timer
        c, dg, n = self.cascades, self.dg, self.n
        t = c.n_cascades
        with timer.region("setup"):
            # dense user index of every participant (-1: not in the follower graph)
            pos = cp.searchsorted(dg.user_ids, self.user_ids)
            pos = cp.minimum(pos, max(len(dg.user_ids) - 1, 0))
            node_user = cp.where(dg.user_ids[pos] == self.user_ids, pos, -1).astype(cp.int32) if len(
                dg.user_ids) else cp.full(n, -1, cp.int32)  # fmt: skip
            node_cas = (cp.searchsorted(self.node_off, cp.arange(n), side="right") - 1).astype(cp.int32)
            sorted_nodes = self.sorted_nodes
            st = self.times[sorted_nodes]
            sc = node_cas[sorted_nodes]
            new_group = cp.ones(n, dtype=cp.bool_)
            if n > 1:
                new_group[1:] = (st[1:] != st[:-1]) | (sc[1:] != sc[:-1])
            starts = cp.flatnonzero(new_group)
            tie_start = starts[cp.searchsorted(starts, cp.arange(n), side="right") - 1]
            earlier = cp.empty(n, dtype=cp.int64)  # strictly earlier participants of each node
            earlier[sorted_nodes] = tie_start - self.node_off[sc]
            sorted_lo = self.node_off[:-1]
            # work per retweeter and the cheaper side (0: probe each friend, 1: search each earlier participant)
            has_user = node_user >= 0
            u_safe = cp.where(has_user, node_user, 0)
            deg = cp.where(has_user, dg.indptr[u_safe + 1] - dg.indptr[u_safe], 0)
            is_pub = cp.zeros(n, dtype=cp.bool_)
            is_pub[self.publisher] = True
            active = has_user & ~is_pub & (earlier > 0) & (deg > 0)
            steps = cp.ceil(cp.log2(deg.astype(cp.float64) + 1.0))
            participant = earlier * steps < deg
            side = participant.astype(cp.int8)
            work = cp.where(active, cp.where(participant, earlier, deg), 0).astype(cp.int32)
            units = (work.astype(cp.int64) + UNIT - 1) // UNIT
            unit_off = cp.zeros(n + 1, dtype=cp.int64)
            cp.cumsum(units, out=unit_off[1:])
            n_units = int(unit_off[-1].get())
            unit_node = (cp.searchsorted(unit_off, cp.arange(n_units, dtype=cp.int64), side="right") - 1).astype(
                cp.int32
            )
            # participant hash table (load <= 1/2) and a bitmap of 32 bits per participant
            cap = 1 << max(4, int(2 * max(n, 1) - 1).bit_length())
            keys = cp.full(cap, 0xFFFFFFFFFFFFFFFF, dtype=cp.uint64)
            vals = cp.full(cap, 2**31 - 1, dtype=cp.int32)
            bbits = max(10, int(32 * max(n, 1) - 1).bit_length())
            bitmap = cp.zeros((1 << bbits) // 32, dtype=cp.uint32)
            if n:
                kernel(_SOURCE, "insert_participants")(
                    (min(4096, (n + 255) // 256),), (256,),
                    (node_user, node_cas, np.int64(n), keys, vals, np.uint64(cap - 1), bitmap, np.int32(64 - bbits)),
                )  # fmt: skip
        with timer.region("candidates"):
            capacity = max(1 << 20, 4 * n)
            while True:
                out_src = cp.empty(capacity, dtype=cp.int32)
                out_dst = cp.empty(capacity, dtype=cp.int32)
                count = cp.zeros(1, dtype=cp.uint64)
                if n_units:
                    kernel(_SOURCE, "candidates")(
                        ((n_units * 32 + 255) // 256,), (256,),
                        (np.int64(n_units), np.int32(UNIT), unit_node, unit_off, work, side, node_user, node_cas,
                         self.times, dg.indptr, dg.indices, sorted_nodes, sorted_lo, keys, vals, np.uint64(cap - 1),
                         bitmap, np.int32(64 - bbits), out_src, out_dst, count, np.uint64(capacity)),
                    )  # fmt: skip
                m = int(count.get()[0])
                if m <= capacity:
                    break
                capacity = m  # rare: more candidates than the first guess; run again with room for all
            cs, cd = out_src[:m], out_dst[:m]
        with timer.region("reach"):
            if self.attach:
                keep_s, keep_d = cs, cd
                has_cand = cp.zeros(n, dtype=cp.bool_)
                has_cand[cs] = True
                orphan = cp.flatnonzero(~has_cand & ~is_pub).astype(cp.int32)
                keep_s = cp.concatenate([keep_s, orphan])
                keep_d = cp.concatenate([keep_d, self.publisher[node_cas[orphan]].astype(cp.int32)])
            else:
                reached = cp.zeros(max(n, 1), dtype=cp.uint8)
                reached[self.publisher] = 1
                changed = cp.zeros(1, dtype=cp.int32)
                sweeps = 0
                while m:
                    changed.fill(0)
                    kernel(_SOURCE, "reach_sweep")(
                        (min(4096, (m + 255) // 256),), (256,), (cs, cd, np.int64(m), reached, changed)
                    )
                    sweeps += 1
                    if not int(changed.get()[0]):
                        break
                self.sweeps = sweeps
                ok = reached[cd].astype(cp.bool_)
                keep_s, keep_d = cs[ok], cd[ok]
        with timer.region("sort"):
            key = cp.sort((keep_s.astype(cp.uint64) << 32) | keep_d.astype(cp.uint32).astype(cp.uint64))
            src = (key >> 32).astype(cp.int32)
            dst = (key & cp.uint64(0xFFFFFFFF)).astype(cp.int32)
            edge_counts = cp.bincount(node_cas[src], minlength=t) if len(src) else cp.zeros(t, cp.int64)
        self.n_candidates = m
        return src, dst, edge_counts

    def to_graphs(self, src, dst, edge_counts, orphans: str) -> SpreadingGraphs:
        c = self.cascades
        off = np.zeros(c.n_cascades + 1, dtype=np.int64)
        np.cumsum(edge_counts.get(), out=off[1:])
        return SpreadingGraphs(c, off, src.get(), dst.get(), orphans=orphans)


def _time_order(c: Cascades) -> np.ndarray:
    n = c.n_nodes
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    step_ok = np.diff(c.times) >= 0
    bounds = c.node_offsets[1:-1]
    step_ok[bounds[(bounds > 0) & (bounds < n)] - 1] = True  # no order is needed across cascades
    if step_ok.all():
        return np.arange(n, dtype=np.int32)
    cas = c.cascade_of_node()
    return np.lexsort((np.arange(n), c.times, cas)).astype(np.int32)


def _forward_chunk(cascades: Cascades, dg: DeviceGraph, orphans: str) -> SpreadingGraphs:
    run = ForwardRun(cascades, dg, orphans)
    src, dst, counts = run.run()
    return run.to_graphs(src, dst, counts, orphans)
