"""Streaming reconstruction on the GPU: the twin of :func:`compute.algorithms.stream.stream` (same signature;
the same edges after every micro-batch).

Everything a retweet touches stays on the device between micro-batches: the follower graph (``device_graph``,
uploaded once), the cascade index, the participants (slot, key, user id, time, count, reach flag, edge
generation), an open-addressing table on ``(slot, key)`` with a membership bitmap in front of it (the bitmap,
2 bytes per table slot, stays in L2 and answers most misses with one read), and the live edges. A participant's
*key* is its dense index in the follower graph (or in the users that new follows added after it), and
``-1 - user_id`` for an account the graph does not know: nobody can follow it, so it never matches a friend.

A micro-batch is a few kernels (plus CuPy's scans and gathers around them):

1. ``place``: one thread per retweet inserts its participant (compare-and-swap on the table; a repeat of a
   (cascade, user) pair lowers the existing participant's time with an atomic minimum and marks its cascade
   dirty when that participant was built before);
2. late participants (strictly before their cascade's latest earlier time) mark their cascade dirty; the
   cascades' latest times move up (atomic maximum);
3. ``candidates``: the work participants' friend lists (CSR row plus the new follows) are cut into units of
   ``UNIT`` probes, one warp per unit, each probe a bitmap test and, on a hit, a table lookup; edges go out
   through a warp-aggregated append;
4. reachability among the work participants: edge-parallel sweeps to the fixed point (``reach_sweep``, as
   the batch GPU phase), then the kept edges are stamped with their source's new generation and appended.

Unlike the batch phase, only the friend side is probed (no binary search of earlier participants in the
friend list): a stream's cascades are open-ended and keeping them sorted on the device costs more than the
rare celebrity retweeter saves.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from ..streaming import StreamCore, StreamEngine, check_stream_args
from ..structures import FollowerGraph
from ._device import kernel
from .forward import device_graph

__all__ = ["GpuStreamCore", "stream"]

#: friend probes per warp-sized unit of work
UNIT = 256

_SOURCE = r"""
__device__ __forceinline__ unsigned long long mix(unsigned long long k) {
    k ^= k >> 31; k *= 0xBF58476D1CE4E5B9ull; k ^= k >> 29; k *= 0x94D049BB133111EBull; k ^= k >> 32; return k;
}
__device__ __forceinline__ unsigned long long hkey(int s, long long key) {
    return mix((unsigned long long)key ^ ((unsigned long long)(unsigned int)s * 0x9E3779B97F4A7C15ull));
}
__device__ __forceinline__ double atomic_min_d(double* a, double v) {
    unsigned long long* p = (unsigned long long*)a;
    unsigned long long old = *p;
    while (v < __longlong_as_double(old)) {
        const unsigned long long seen = atomicCAS(p, old, __double_as_longlong(v));
        if (seen == old) break;
        old = seen;
    }
    return __longlong_as_double(old);
}
__device__ __forceinline__ void atomic_max_d(double* a, double v) {
    unsigned long long* p = (unsigned long long*)a;
    unsigned long long old = *p;
    while (v > __longlong_as_double(old)) {
        const unsigned long long seen = atomicCAS(p, old, __double_as_longlong(v));
        if (seen == old) break;
        old = seen;
    }
}

// insert nodes idx[0:n] (unique keys, not in the table yet)
extern "C" __global__ void insert_nodes(const long long* __restrict__ idx, const long long n,
    const int* __restrict__ node_slot, const long long* __restrict__ node_key,
    int* __restrict__ tab, const unsigned long long mask, unsigned int* __restrict__ bitmap, const int bshift)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        const int j = (int)idx[i];
        const unsigned long long h = hkey(node_slot[j], node_key[j]);
        const unsigned long long bit = h >> bshift;
        atomicOr(&bitmap[bit >> 5], 1u << (bit & 31));
        unsigned long long p = h & mask;
        while (atomicCAS(&tab[p], -1, j) != -1) p = (p + 1) & mask;
    }
}

// one thread per retweet of a known cascade: node n_old + i, or a repeat of an existing (slot, key)
// status: 0 new, 1 repeat (target[i] = the participant it repeats), 2 self-retweet
extern "C" __global__ void place(const long long k, const long long n_old,
    const int* __restrict__ slot, const long long* __restrict__ key, const long long* __restrict__ uid,
    const double* __restrict__ tm, const double* __restrict__ fo, const long long* __restrict__ slot_pub_uid,
    int* node_slot, long long* node_key, long long* __restrict__ node_uid, double* node_time,
    double* __restrict__ node_fol, int* tab, const unsigned long long mask, unsigned int* __restrict__ bitmap,
    const int bshift, unsigned char* __restrict__ dirty, int* __restrict__ status, int* __restrict__ target)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= k) return;
    const int s = slot[i];
    if (uid[i] == slot_pub_uid[s]) { status[i] = 2; return; }
    const int j = (int)(n_old + i);
    const long long kk = key[i];
    node_slot[j] = s; node_key[j] = kk; node_uid[j] = uid[i]; node_time[j] = tm[i]; node_fol[j] = fo[i];
    __threadfence();
    const unsigned long long h = hkey(s, kk);
    unsigned long long p = h & mask;
    while (true) {
        const int old = atomicCAS(&tab[p], -1, j);
        if (old == -1) {
            const unsigned long long bit = h >> bshift;
            atomicOr(&bitmap[bit >> 5], 1u << (bit & 31));
            status[i] = 0;
            return;
        }
        if (__ldcg(&node_slot[old]) == s && __ldcg(&node_key[old]) == kk) {
            node_slot[j] = -1;
            status[i] = 1;
            target[i] = old;
            const double prev = atomic_min_d(&node_time[old], tm[i]);
            if (tm[i] < prev && old < n_old) dirty[s] = 1;
            return;
        }
        p = (p + 1) & mask;
    }
}

extern "C" __global__ void late(const long long lo, const long long hi, const int* __restrict__ node_slot,
    const unsigned char* __restrict__ node_pub, const double* __restrict__ node_time,
    const double* __restrict__ slot_maxtime, unsigned char* __restrict__ dirty)
{
    const long long j = lo + blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= hi) return;
    const int s = node_slot[j];
    if (s >= 0 && !node_pub[j] && node_time[j] < slot_maxtime[s]) dirty[s] = 1;
}

extern "C" __global__ void raise_maxtime(const long long lo, const long long hi, const int* __restrict__ node_slot,
    const double* __restrict__ node_time, double* slot_maxtime)
{
    const long long j = lo + blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= hi) return;
    const int s = node_slot[j];
    if (s >= 0) atomic_max_d(&slot_maxtime[s], node_time[j]);
}

__device__ __forceinline__ int lookup(int s, long long key, const int* __restrict__ tab, const unsigned long long mask,
    const unsigned int* __restrict__ bitmap, const int bshift,
    const int* __restrict__ node_slot, const long long* __restrict__ node_key)
{
    const unsigned long long h = hkey(s, key);
    const unsigned long long bit = h >> bshift;
    if (!((__ldg(&bitmap[bit >> 5]) >> (bit & 31)) & 1u)) return -1;
    unsigned long long p = h & mask;
    while (true) {
        const int j = tab[p];
        if (j == -1) return -1;
        if (node_slot[j] == s && node_key[j] == key) return j;
        p = (p + 1) & mask;
    }
}

// one warp per unit of UNIT friend probes of a work participant (CSR row first, then its new follows)
extern "C" __global__ void candidates(const long long n_units, const int unit,
    const int* __restrict__ unit_item, const long long* __restrict__ unit_off,
    const int* __restrict__ work, const long long* __restrict__ row_a, const long long* __restrict__ row_n,
    const long long* __restrict__ delta_a, const long long* __restrict__ total,
    const int* __restrict__ indices, const long long* __restrict__ delta,
    const int* __restrict__ node_slot, const long long* __restrict__ node_key, const double* __restrict__ node_time,
    const int* __restrict__ tab, const unsigned long long mask, const unsigned int* __restrict__ bitmap,
    const int bshift, int* __restrict__ out_src, int* __restrict__ out_dst,
    unsigned long long* __restrict__ count, const unsigned long long capacity)
{
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= n_units) return;
    const int it = unit_item[warp];
    const long long k0 = (warp - unit_off[it]) * (long long)unit;
    const long long w = total[it];
    const long long k1 = k0 + unit < w ? k0 + unit : w;
    const int v = work[it];
    const int s = node_slot[v];
    const double tv = node_time[v];
    const long long a = row_a[it], nb = row_n[it], da = delta_a[it];
    for (long long base = k0; base < k1; base += 32) {
        const long long k = base + lane;
        int j = -1;
        if (k < k1) {
            const long long f = k < nb ? (long long)indices[a + k] : (delta[da + k - nb] & 0xFFFFFFFFll);
            j = lookup(s, f, tab, mask, bitmap, bshift, node_slot, node_key);
            if (j >= 0 && !(node_time[j] < tv)) j = -1;
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

// cascades where a follower (fs sorted, fd alike, as keys) took part after its followee
extern "C" __global__ void follow_dirty(const long long n, const int* __restrict__ node_slot,
    const long long* __restrict__ node_key, const unsigned char* __restrict__ node_pub,
    const double* __restrict__ node_time, const long long* __restrict__ fs, const long long* __restrict__ fd,
    const long long nf, const int* __restrict__ tab, const unsigned long long mask,
    const unsigned int* __restrict__ bitmap, const int bshift, unsigned char* __restrict__ dirty)
{
    const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= n) return;
    const int s = node_slot[j];
    if (s < 0 || node_pub[j]) return;
    const long long u = node_key[j];
    long long lo = 0, hi = nf;
    while (lo < hi) { const long long mid = (lo + hi) >> 1; if (fs[mid] < u) lo = mid + 1; else hi = mid; }
    for (; lo < nf && fs[lo] == u; ++lo) {
        const int k = lookup(s, fd[lo], tab, mask, bitmap, bshift, node_slot, node_key);
        if (k >= 0 && node_time[k] < node_time[j]) dirty[s] = 1;
    }
}
"""


def stream(
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    follows: str = "forward",
    hold_seconds: float = 3600.0,
    hold_max: int = 1_000_000,
    backend: str = "auto",
) -> StreamEngine:
    """A stream engine whose state lives on the GPU: the twin of :func:`compute.algorithms.stream.stream`
    (``backend`` must not ask for the CPU)."""
    if backend not in ("gpu", "auto"):
        raise ValueError(
            f"compute.gpu.stream runs on the GPU; backend={backend!r} belongs to compute.algorithms.stream"
        )
    check_stream_args(graph, orphans, follows, hold_seconds, hold_max)
    return StreamEngine(graph, GpuStreamCore(graph, orphans), orphans=orphans, follows=follows,
                        hold_seconds=hold_seconds, hold_max=hold_max, backend="gpu")  # fmt: skip


def _grown(a, need: int, fill=0):
    if len(a) >= need:
        return a
    b = cp.full(max(need, 2 * len(a), 1024), fill, dtype=a.dtype)
    b[: len(a)] = a
    return b


def _grid(n: int, block: int = 256) -> tuple[int]:
    return (max(1, (n + block - 1) // block),)


class GpuStreamCore(StreamCore):
    """Per-cascade state in device arrays (see the module docs)."""

    def __init__(self, graph: FollowerGraph, orphans: str) -> None:
        self.graph = graph
        self.dg = device_graph(graph)
        self.n_base = graph.n_users
        self.attach = orphans == "attach"
        self.delta = cp.zeros(0, cp.int64)
        self.extra_ids = cp.zeros(0, cp.int64)
        self.extra_dense = cp.zeros(0, cp.int64)
        z = 1024
        self.n_slots = 0
        self.slot_tweet = cp.zeros(z, cp.int64)
        self.slot_pub_node = cp.zeros(z, cp.int32)
        self.slot_pub_uid = cp.zeros(z, cp.int64)
        self.slot_maxtime = cp.zeros(z, cp.float64)
        self.dirty = cp.zeros(z, cp.uint8)
        self.opened: list = []
        self.idx_tweet = cp.zeros(0, cp.int64)
        self.idx_slot = cp.zeros(0, cp.int64)
        self.n_nodes = 0
        self.built = 0
        self.node_slot = cp.full(z, -1, cp.int32)
        self.node_key = cp.zeros(z, cp.int64)
        self.node_uid = cp.zeros(z, cp.int64)
        self.node_time = cp.zeros(z, cp.float64)
        self.node_fol = cp.zeros(z, cp.float64)
        self.node_pub = cp.zeros(z, cp.uint8)
        self.node_reached = cp.zeros(z, cp.uint8)
        self.node_gen = cp.zeros(z, cp.int32)
        self._new_table(2 * z)
        self.n_edges = 0
        self.e_src = cp.zeros(z, cp.int32)
        self.e_dst = cp.zeros(z, cp.int32)
        self.e_gen = cp.zeros(z, cp.int32)
        self.last_candidates = 0

    # -- table -----------------------------------------------------------------------------------------------
    def _new_table(self, cap: int) -> None:
        self.tab = cp.full(cap, -1, cp.int32)
        self.mask = cap - 1
        bbits = max(10, int(16 * cap - 1).bit_length())  # 16 bits per slot: 2 bytes
        self.bitmap = cp.zeros((1 << bbits) // 32, dtype=cp.uint32)
        self.bshift = 64 - bbits

    def _rehash(self) -> None:
        alive = cp.flatnonzero(self.node_slot[: self.n_nodes] >= 0)
        self.tab.fill(-1)
        self.bitmap.fill(0)
        if len(alive):
            kernel(_SOURCE, "insert_nodes")(
                _grid(len(alive)), (256,), (alive, np.int64(len(alive)), self.node_slot, self.node_key, self.tab,
                                            np.uint64(self.mask), self.bitmap, np.int32(self.bshift)),
            )  # fmt: skip

    def _reserve_nodes(self, extra: int) -> None:
        need = self.n_nodes + extra
        if need >= 2**31 - 1:
            raise ValueError(f"the GPU stream engine holds < 2^31 participants; {need:,} asked")
        if need > len(self.node_slot):
            self.node_slot = _grown(self.node_slot, need, -1)
            n = len(self.node_slot)
            for name in ("node_key", "node_uid", "node_time", "node_fol", "node_pub", "node_reached", "node_gen"):
                setattr(self, name, _grown(getattr(self, name), n))
        if 2 * need > len(self.tab):
            cap = len(self.tab)
            while cap < 2 * need:
                cap *= 2
            self._new_table(cap)
            self._rehash()

    def _reserve_slots(self, extra: int) -> None:
        need = self.n_slots + extra
        for name in ("slot_tweet", "slot_pub_node", "slot_pub_uid", "slot_maxtime", "dirty"):
            setattr(self, name, _grown(getattr(self, name), need))

    def _keys(self, uids):
        """Participant keys of device user ids: dense index, else ``-1 - uid``."""
        ids = self.dg.user_ids
        if len(ids):
            p = cp.minimum(cp.searchsorted(ids, uids), len(ids) - 1)
            key = cp.where(ids[p] == uids, p, -1 - uids)
        else:
            key = -1 - uids
        if len(self.extra_ids):
            p = cp.minimum(cp.searchsorted(self.extra_ids, uids), len(self.extra_ids) - 1)
            key = cp.where((key < 0) & (self.extra_ids[p] == uids), self.extra_dense[p], key)
        return key.astype(cp.int64)

    # -- StreamCore ------------------------------------------------------------------------------------------
    def set_graph_delta(self, delta, extra_ids, extra_dense, extra_uid_by_dense) -> None:
        grew = len(extra_ids) != len(self.extra_ids)
        self.delta = cp.asarray(delta)
        self.extra_ids = cp.asarray(extra_ids)
        self.extra_dense = cp.asarray(extra_dense)
        if grew and self.n_nodes:  # accounts the graph did not know now have dense indices: re-key, re-table
            self.node_key[: self.n_nodes] = self._keys(self.node_uid[: self.n_nodes])
            self._rehash()

    def open_cascades(self, tweet, user, time, followers, index_tweet, index_slot) -> None:
        k = len(tweet)
        self._reserve_slots(k)
        self._reserve_nodes(k)
        s0, j0 = self.n_slots, self.n_nodes
        s = cp.arange(s0, s0 + k, dtype=cp.int64)
        j = cp.arange(j0, j0 + k, dtype=cp.int64)
        uid = cp.asarray(user)
        tm = cp.asarray(time)
        self.slot_tweet[s0 : s0 + k] = cp.asarray(tweet)
        self.slot_pub_node[s0 : s0 + k] = j.astype(cp.int32)
        self.slot_pub_uid[s0 : s0 + k] = uid
        self.slot_maxtime[s0 : s0 + k] = tm
        self.node_slot[j0 : j0 + k] = s.astype(cp.int32)
        self.node_key[j0 : j0 + k] = self._keys(uid)
        self.node_uid[j0 : j0 + k] = uid
        self.node_time[j0 : j0 + k] = tm
        self.node_fol[j0 : j0 + k] = cp.asarray(followers)
        self.node_pub[j0 : j0 + k] = 1
        self.node_reached[j0 : j0 + k] = 1
        kernel(_SOURCE, "insert_nodes")(
            _grid(k), (256,), (j, np.int64(k), self.node_slot, self.node_key, self.tab, np.uint64(self.mask),
                               self.bitmap, np.int32(self.bshift)),
        )  # fmt: skip
        self.n_slots += k
        self.n_nodes += k
        self.idx_tweet, self.idx_slot = cp.asarray(index_tweet), cp.asarray(index_slot)
        self.opened.append(s)

    def mark_dirty(self, slots) -> None:
        if len(slots):
            self.dirty[cp.asarray(slots)] = 1

    def mark_follow_dirty(self, follower_ids, followee_ids) -> None:
        fs = self._keys(cp.asarray(follower_ids))
        fd = self._keys(cp.asarray(followee_ids))
        o = cp.lexsort(cp.stack([fd, fs]))
        fs, fd = fs[o], fd[o]
        n = self.n_nodes
        if n:
            kernel(_SOURCE, "follow_dirty")(
                _grid(n), (256,), (np.int64(n), self.node_slot, self.node_key, self.node_pub, self.node_time, fs, fd,
                                   np.int64(len(fs)), self.tab, np.uint64(self.mask), self.bitmap,
                                   np.int32(self.bshift), self.dirty),
            )  # fmt: skip

    def place(self, tweet, user, time, followers):
        tw = cp.asarray(tweet)
        if len(self.idx_tweet):
            p = cp.minimum(cp.searchsorted(self.idx_tweet, tw), len(self.idx_tweet) - 1)
            slot = cp.where(self.idx_tweet[p] == tw, self.idx_slot[p], -1)
        else:
            slot = cp.full(len(tw), -1, cp.int64)
        unknown = slot < 0
        unknown_host = unknown.get()
        n_known = int(len(tw) - unknown_host.sum())
        counts = {"accepted": 0, "duplicates": 0, "self_retweets": 0}
        if not n_known:
            return unknown_host, counts
        if n_known == len(tw):
            sl, uid, tm, fo = slot.astype(cp.int32), cp.asarray(user), cp.asarray(time), cp.asarray(followers)
        else:
            known = cp.flatnonzero(~unknown)
            sl = slot[known].astype(cp.int32)
            uid, tm, fo = cp.asarray(user)[known], cp.asarray(time)[known], cp.asarray(followers)[known]
        self._reserve_nodes(n_known)
        n_old = self.n_nodes
        status = cp.empty(n_known, cp.int32)
        target = cp.full(n_known, -1, cp.int32)
        kernel(_SOURCE, "place")(
            _grid(n_known), (256,),
            (np.int64(n_known), np.int64(n_old), sl, self._keys(uid), uid, tm, fo, self.slot_pub_uid, self.node_slot,
             self.node_key, self.node_uid, self.node_time, self.node_fol, self.tab, np.uint64(self.mask), self.bitmap,
             np.int32(self.bshift), self.dirty, status, target),
        )  # fmt: skip
        self.n_nodes = n_old + n_known
        hist = cp.bincount(status, minlength=3).get()
        if hist[1]:  # a repeat that moved a participant earlier brings its own follower count
            r = cp.flatnonzero(status == 1)
            t = target[r].astype(cp.int64)
            own = cp.where(t >= n_old, tm[cp.maximum(t - n_old, 0)], cp.inf)
            moved = (tm[r] == self.node_time[t]) & (tm[r] < own)
            self.node_fol[t[moved]] = fo[r[moved]]
        counts.update(accepted=int(hist[0]), duplicates=int(hist[1]), self_retweets=int(hist[2]))
        return unknown_host, counts

    def build(self, collect: bool) -> dict:
        lo, hi = self.built, self.n_nodes
        if hi > lo:
            kernel(_SOURCE, "late")(
                _grid(hi - lo), (256,), (np.int64(lo), np.int64(hi), self.node_slot, self.node_pub, self.node_time,
                                         self.slot_maxtime, self.dirty),
            )  # fmt: skip
            kernel(_SOURCE, "raise_maxtime")(
                _grid(hi - lo), (256,), (np.int64(lo), np.int64(hi), self.node_slot, self.node_time, self.slot_maxtime)
            )
        dirty_slots = cp.flatnonzero(self.dirty[: self.n_slots])
        any_dirty = len(dirty_slots) > 0
        ns = self.node_slot[:hi]
        if any_dirty:
            work = cp.flatnonzero((ns >= 0) & (self.node_pub[:hi] == 0) & (
                (cp.arange(hi) >= lo) | (self.dirty[cp.maximum(ns, 0)] == 1)))  # fmt: skip
        else:
            seg = ns[lo:hi]
            work = cp.flatnonzero((seg >= 0) & (self.node_pub[lo:hi] == 0)) + lo
        work = work.astype(cp.int32)
        nw = len(work)
        ks = kd = cp.zeros(0, cp.int32)
        if nw:
            ks, kd = self._edges(work)
            self.node_gen[work] += 1
            self._append_edges(ks, kd)
        out = {"n_work": nw}
        if collect:
            new_slots = self.node_slot[lo:hi]
            touched = cp.unique(cp.concatenate([new_slots[new_slots >= 0].astype(cp.int64), dirty_slots,
                                                *self.opened]))  # fmt: skip
            out.update(
                edge_tweet=self.slot_tweet[self.node_slot[ks]].get(), edge_src=self.node_uid[ks].get(),
                edge_dst=self.node_uid[kd].get(), recomputed=self.slot_tweet[dirty_slots].get(),
                touched=self.slot_tweet[touched].get(),
            )  # fmt: skip
        self.opened = []
        if any_dirty:
            self.dirty[dirty_slots] = 0
        self.built = hi
        return out

    def _edges(self, work):
        """Kept edges (src, dst) of the work participants."""
        g = self.dg
        key = self.node_key[work]
        in_base = (key >= 0) & (key < self.n_base)
        kb = cp.where(in_base, key, 0)
        row_a = g.indptr[kb]
        row_n = cp.where(in_base, g.indptr[kb + 1] - row_a, 0)
        if len(self.delta):
            has = key >= 0
            da = cp.searchsorted(self.delta, cp.where(has, key, 0) << 32)
            db = cp.searchsorted(self.delta, (cp.where(has, key, 0) + 1) << 32)
            dn = cp.where(has, db - da, 0)
        else:
            da = cp.zeros(len(work), cp.int64)
            dn = da
        total = (row_n + dn).astype(cp.int64)
        units = (total + UNIT - 1) // UNIT
        unit_off = cp.zeros(len(work) + 1, cp.int64)
        cp.cumsum(units, out=unit_off[1:])
        n_units = int(unit_off[-1].get())
        m = 0
        cs = cd = cp.zeros(0, cp.int32)
        if n_units:
            unit_item = (cp.searchsorted(unit_off, cp.arange(n_units, dtype=cp.int64), side="right") - 1).astype(
                cp.int32)  # fmt: skip
            capacity = max(1 << 16, 4 * len(work))
            while True:
                out_src = cp.empty(capacity, cp.int32)
                out_dst = cp.empty(capacity, cp.int32)
                count = cp.zeros(1, cp.uint64)
                kernel(_SOURCE, "candidates")(
                    ((n_units * 32 + 255) // 256,), (256,),
                    (np.int64(n_units), np.int32(UNIT), unit_item, unit_off, work, row_a, row_n, da, total,
                     g.indices, self.delta if len(self.delta) else cp.zeros(1, cp.int64), self.node_slot,
                     self.node_key, self.node_time, self.tab, np.uint64(self.mask), self.bitmap, np.int32(self.bshift),
                     out_src, out_dst, count, np.uint64(capacity)),
                )  # fmt: skip
                m = int(count.get()[0])
                if m <= capacity:
                    break
                capacity = m
            cs, cd = out_src[:m], out_dst[:m]
        self.last_candidates = m
        if self.attach:
            self.node_reached[work] = 1
            has = cp.zeros(self.n_nodes, cp.bool_)
            has[cs] = True
            orphan = work[~has[work]]
            pub = self.slot_pub_node[self.node_slot[orphan]]
            return cp.concatenate([cs, orphan]), cp.concatenate([cd, pub])
        self.node_reached[work] = 0
        if m:
            changed = cp.zeros(1, cp.int32)
            while True:
                changed.fill(0)
                kernel(_SOURCE, "reach_sweep")(
                    (min(4096, (m + 255) // 256),), (256,), (cs, cd, np.int64(m), self.node_reached, changed)
                )
                if not int(changed.get()[0]):
                    break
        ok = self.node_reached[cd].astype(cp.bool_)
        return cs[ok], cd[ok]

    def _append_edges(self, ks, kd) -> None:
        need = self.n_edges + len(ks)
        if need > len(self.e_src):
            live = self._live_edges()
            m = len(live)
            self.e_src[:m], self.e_dst[:m], self.e_gen[:m] = self.e_src[live], self.e_dst[live], self.e_gen[live]
            self.n_edges = m
            need = m + len(ks)
            self.e_src, self.e_dst, self.e_gen = (_grown(a, need) for a in (self.e_src, self.e_dst, self.e_gen))
        m = self.n_edges
        self.e_src[m:need] = ks
        self.e_dst[m:need] = kd
        self.e_gen[m:need] = self.node_gen[ks]
        self.n_edges = need

    def _live_edges(self):
        m = self.n_edges
        return cp.flatnonzero(self.e_gen[:m] == self.node_gen[self.e_src[:m]])

    def snapshot(self):
        n = self.n_nodes
        alive = cp.flatnonzero(self.node_slot[:n] >= 0)
        pos = cp.full(max(n, 1), -1, cp.int64)
        pos[alive] = cp.arange(len(alive))
        live = self._live_edges()
        return (
            self.slot_tweet[: self.n_slots].get(), self.node_slot[alive].get().astype(np.int64),
            self.node_uid[alive].get(), self.node_time[alive].get(), self.node_fol[alive].get(),
            self.node_pub[alive].get().astype(bool), pos[self.e_src[live]].get(), pos[self.e_dst[live]].get(),
        )  # fmt: skip
