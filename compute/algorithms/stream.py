"""Streaming reconstruction (issue 17, CRGP): influence edges built micro-batch by micro-batch as retweets
arrive — the forward phase applied incrementally. The CPU reference and the one public dispatcher
:func:`stream`, which returns a stateful :class:`~compute.streaming.StreamEngine`.

The rule (CRGP's, and our forward phase's): for a retweet by ``v`` at time ``t`` in cascade ``c``, an edge
``(v, u)`` to every account ``u`` that ``v`` follows and that took part in ``c`` (the publisher included)
strictly before ``t`` — kept when ``u`` is reached from the publisher (``orphans="strict"``, as the batch
phase; ``attach`` adds ``(v, publisher)`` to a retweeter without any). Unlike CRGP, a retweet older than what
its cascade has already seen is not lost: the cascade is rebuilt in full in the same micro-batch. The steps
of a micro-batch and what they guarantee are in :mod:`compute.streaming` and ``docs/stream.md``.

The reference keeps, per participant, its cascade slot, user id, time, follower count, reach flag and an edge
*generation*; participants are found by an open-addressing hash table on ``(slot, user id)``; the edges of a
participant are replaced by bumping its generation (an edge is live while its stamp equals its source's).
Candidate edges are found from the cheaper side per retweeter, as in the batch phase: each account it follows
(CSR row plus the new follows) probed in the table, or each earlier participant of the cascade (a linked list
per cascade) binary-searched in its friend list.
"""

from __future__ import annotations

import numpy as np

from .._jit import HAVE_NUMBA, njit
from ..arrays import unique
from ..backends import resolve_backend
from ..streaming import FOLLOW_POLICIES, StreamCore, StreamEngine, check_stream_args
from ..structures import FollowerGraph

__all__ = ["FOLLOW_POLICIES", "CpuStreamCore", "stream", "stream_cpu"]


def stream(
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    follows: str = "forward",
    hold_seconds: float = 3600.0,
    hold_max: int = 1_000_000,
    backend: str = "auto",
) -> StreamEngine:
    """A stream engine over the follower graph ``graph`` (the public dispatcher).

    ``orphans``: ``"strict"``/``"attach"``, as the forward phase. ``follows``: ``"forward"`` (a new follow
    counts for retweets processed after it; cascades already built keep their edges) or ``"recompute"`` (the
    cascades where the follower took part after the followee are rebuilt at once). ``hold_seconds``: how much
    stream time a retweet of an unknown tweet waits for its original (``inf``: until :meth:`flush`);
    ``hold_max``: at most this many wait (the oldest are given up first); both give-ups are reported in the
    update's ``expired_*``. ``backend``: ``"auto"``, ``"cpu"`` or ``"gpu"`` (the follower graph resident on
    the device)."""
    check_stream_args(graph, orphans, follows, hold_seconds, hold_max)
    if resolve_backend(backend) != "gpu":
        return stream_cpu(graph, orphans=orphans, follows=follows, hold_seconds=hold_seconds, hold_max=hold_max)
    from ..gpu.stream import stream as stream_gpu

    return stream_gpu(graph, orphans=orphans, follows=follows, hold_seconds=hold_seconds, hold_max=hold_max,
                      backend="gpu")  # fmt: skip


def stream_cpu(graph: FollowerGraph, *, orphans: str = "strict", follows: str = "forward",
               hold_seconds: float = 3600.0, hold_max: int = 1_000_000) -> StreamEngine:  # fmt: skip
    """The CPU reference engine."""
    check_stream_args(graph, orphans, follows, hold_seconds, hold_max)
    return StreamEngine(graph, CpuStreamCore(graph, orphans), orphans=orphans, follows=follows,
                        hold_seconds=hold_seconds, hold_max=hold_max, backend="cpu")  # fmt: skip


# --- kernels ----------------------------------------------------------------------------------------------------
if HAVE_NUMBA:

    @njit(inline="always")
    def _mix(s, uid):
        k = np.uint64(uid) ^ (np.uint64(s) * np.uint64(0x9E3779B97F4A7C15))
        k ^= k >> np.uint64(31)
        k *= np.uint64(0xBF58476D1CE4E5B9)
        k ^= k >> np.uint64(29)
        k *= np.uint64(0x94D049BB133111EB)
        k ^= k >> np.uint64(32)
        return k

else:  # the same mixing over Python integers: NumPy scalars would warn on the (intended) wrap-around

    def _mix(s, uid):
        m = (1 << 64) - 1
        k = (int(uid) & m) ^ ((int(s) * 0x9E3779B97F4A7C15) & m)
        k ^= k >> 31
        k = (k * 0xBF58476D1CE4E5B9) & m
        k ^= k >> 29
        k = (k * 0x94D049BB133111EB) & m
        k ^= k >> 32
        return np.uint64(k)


@njit(inline="always")
def _hash(s, uid, mask):
    return np.int64(_mix(s, uid) & np.uint64(mask))


@njit
def _find(s, uid, tab, mask, node_slot, node_uid):
    h = _hash(s, uid, mask)
    while True:
        j = tab[h]
        if j < 0 or (node_slot[j] == s and node_uid[j] == uid):
            return j, h
        h = (h + 1) & mask


@njit(inline="always")
def _set_bit(s, uid, bitmap, bshift):
    bit = _mix(s, uid) >> np.uint64(bshift)
    bitmap[bit >> np.uint64(6)] |= np.uint64(1) << (bit & np.uint64(63))


@njit(inline="always")
def _maybe(s, uid, bitmap, bshift):
    """False when (s, uid) is certainly not a participant: one read of a bitmap of 16 bits per table slot (it
    stays in L2 and answers the ~99% of friend probes that miss)."""
    bit = _mix(s, uid) >> np.uint64(bshift)
    return (bitmap[bit >> np.uint64(6)] >> (bit & np.uint64(63))) & np.uint64(1) != np.uint64(0)


@njit
def _rehash(tab, mask, bitmap, bshift, n_nodes, node_slot, node_uid, node_alive):
    tab[:] = -1
    bitmap[:] = 0
    for j in range(n_nodes):
        if node_alive[j]:
            _, h = _find(node_slot[j], node_uid[j], tab, mask, node_slot, node_uid)
            tab[h] = j
            _set_bit(node_slot[j], node_uid[j], bitmap, bshift)


@njit
def _place(slot, uid, dense, tm, fo, slot_pub_uid, n_nodes, node_slot, node_uid, node_dense, node_time, node_fol,
           node_next, slot_head, slot_size, tab, mask, bitmap, bshift, dirty):  # fmt: skip
    """Insert retweets (known cascades): returns (nodes now, repeats, self-retweets)."""
    n_old = n_nodes
    dups = 0
    selfs = 0
    for i in range(len(slot)):
        s = slot[i]
        u = uid[i]
        if u == slot_pub_uid[s]:
            selfs += 1
            continue
        j, h = _find(s, u, tab, mask, node_slot, node_uid)
        if j >= 0:
            dups += 1
            if tm[i] < node_time[j]:  # the earliest time wins, as in the batch builder
                node_time[j] = tm[i]
                node_fol[j] = fo[i]
                if j < n_old:
                    dirty[s] = 1
            continue
        j = n_nodes
        n_nodes += 1
        node_slot[j] = s
        node_uid[j] = u
        node_dense[j] = dense[i]
        node_time[j] = tm[i]
        node_fol[j] = fo[i]
        node_next[j] = slot_head[s]
        slot_head[s] = j
        slot_size[s] += 1
        tab[h] = j
        _set_bit(s, u, bitmap, bshift)
    return n_nodes, dups, selfs


@njit
def _follow_dirty(n_nodes, node_slot, node_uid, node_time, node_pub, fs, fd, tab, mask, dirty):
    """Mark cascades where a follower (``fs`` sorted, ``fd`` alike) took part after its followee."""
    for j in range(n_nodes):
        if node_pub[j] or node_slot[j] < 0:
            continue
        u = node_uid[j]
        a = np.searchsorted(fs, u)
        while a < len(fs) and fs[a] == u:
            k, _ = _find(node_slot[j], fd[a], tab, mask, node_slot, node_uid)
            if k >= 0 and node_time[k] < node_time[j]:
                dirty[node_slot[j]] = 1
            a += 1


@njit
def _member(indices, a, b, delta, u, f):
    """Does dense user ``u`` (its CSR row ``a:b``) follow dense user ``f``, in the graph or the new follows?"""
    lo, hi = a, b
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < b and indices[lo] == f:
        return True
    if len(delta):
        key = (np.int64(u) << 32) | np.int64(f)
        p = np.searchsorted(delta, key)
        return p < len(delta) and delta[p] == key
    return False


@njit
def _candidates(work, node_slot, node_uid, node_dense, node_time, node_next, slot_head, slot_size, indptr, indices,
                user_ids, delta, extra_uid, tab, mask, bitmap, bshift):  # fmt: skip
    """Candidate edges (v, u) of the work participants: u followed by v, same cascade, strictly earlier.

    Per retweeter the cheaper side, as the batch phase: probe each account it follows in the participant table
    (``d`` probes), or walk the cascade's participants and binary-search each earlier one in its friend list
    (``n`` times ``log2 d`` steps; the constant 16 is the batch phase's measured cost ratio)."""
    n_base = len(user_ids)
    cap = max(1024, 4 * len(work))
    cs = np.empty(cap, dtype=np.int64)
    cd = np.empty(cap, dtype=np.int64)
    m = 0
    for i in range(len(work)):
        v = work[i]
        u = node_dense[v]
        if u < 0:
            continue
        s = node_slot[v]
        t = node_time[v]
        a = indptr[u] if u < n_base else 0
        b = indptr[u + 1] if u < n_base else 0
        da = np.searchsorted(delta, np.int64(u) << 32)
        db = np.searchsorted(delta, np.int64(u + 1) << 32)
        d = b - a + db - da
        steps = 1
        while (np.int64(1) << steps) < d:
            steps += 1
        if m + slot_size[s] > cap or m + d > cap:
            cap = 2 * cap + slot_size[s] + d
            cs2 = np.empty(cap, dtype=np.int64)
            cd2 = np.empty(cap, dtype=np.int64)
            cs2[:m] = cs[:m]
            cd2[:m] = cd[:m]
            cs, cd = cs2, cd2
        if 16 * slot_size[s] * steps < d:
            j = slot_head[s]
            while j >= 0:
                if node_time[j] < t and node_dense[j] >= 0 and _member(indices, a, b, delta, u, node_dense[j]):
                    cs[m] = v
                    cd[m] = j
                    m += 1
                j = node_next[j]
            continue
        for k in range(d):
            if k < b - a:
                f = indices[a + k]
            else:
                f = delta[da + k - (b - a)] & 0xFFFFFFFF
            fuid = user_ids[f] if f < n_base else extra_uid[f - n_base]
            if not _maybe(s, fuid, bitmap, bshift):
                continue
            j, _ = _find(s, fuid, tab, mask, node_slot, node_uid)
            if j >= 0 and node_time[j] < t:
                cs[m] = v
                cd[m] = j
                m += 1
    return cs[:m], cd[:m]


@njit
def _reach_keep(work, cs, cd, node_time, node_reached, node_slot, slot_pub_node, attach):
    """Settle reachability of the work participants and return the kept edges."""
    if attach:
        for v in work:
            node_reached[v] = 1
        # work participants with a candidate: a search in the sorted sources (no array over all participants)
        srcs = np.unique(cs)
        has = np.zeros(len(work), dtype=np.bool_)
        for i in range(len(work)):
            p = np.searchsorted(srcs, work[i])
            has[i] = p < len(srcs) and srcs[p] == work[i]
        n_orph = len(work) - int(has.sum())
        ks = np.empty(len(cs) + n_orph, dtype=np.int64)
        kd = np.empty(len(cs) + n_orph, dtype=np.int64)
        ks[: len(cs)] = cs
        kd[: len(cs)] = cd
        m = len(cs)
        for i in range(len(work)):
            if not has[i]:
                v = work[i]
                ks[m] = v
                kd[m] = slot_pub_node[node_slot[v]]
                m += 1
        return ks, kd
    for v in work:
        node_reached[v] = 0
    # edges by their source's time: each edge's target is strictly earlier, so one pass settles everything
    order = np.argsort(node_time[cs], kind="mergesort")
    for e in order:
        if node_reached[cd[e]]:
            node_reached[cs[e]] = 1
    keep = np.zeros(len(cs), dtype=np.bool_)
    m = 0
    for e in range(len(cs)):
        if node_reached[cd[e]]:
            keep[e] = True
            m += 1
    return cs[keep], cd[keep]


@njit
def _cascade_nodes(slots, slot_head, slot_size, node_next):
    """Every participant of the cascades ``slots`` (their linked lists)."""
    n = 0
    for s in slots:
        n += slot_size[s]
    out = np.empty(n, dtype=np.int64)
    m = 0
    for s in slots:
        j = slot_head[s]
        while j >= 0:
            out[m] = j
            m += 1
            j = node_next[j]
    return out[:m]


def _grown(a: np.ndarray, need: int, fill=0) -> np.ndarray:
    if len(a) >= need:
        return a
    b = np.full(max(need, 2 * len(a), 1024), fill, dtype=a.dtype)
    b[: len(a)] = a
    return b


class CpuStreamCore(StreamCore):
    """Per-cascade state in host arrays, kernels in numba (see the module docs)."""

    def __init__(self, graph: FollowerGraph, orphans: str) -> None:
        self.graph = graph
        self.attach = orphans == "attach"
        self.indptr = graph.friends_indptr
        self.indices = graph.friends_indices
        self.delta = np.zeros(0, np.int64)
        self.extra_ids = np.zeros(0, np.int64)
        self.extra_dense = np.zeros(0, np.int64)
        self.extra_uid = np.zeros(0, np.int64)
        z = 1024
        self.n_slots = 0
        self.slot_tweet = np.zeros(z, np.int64)
        self.slot_pub_node = np.zeros(z, np.int64)
        self.slot_pub_uid = np.zeros(z, np.int64)
        self.slot_maxtime = np.zeros(z, np.float64)
        self.slot_head = np.full(z, -1, np.int64)
        self.slot_size = np.zeros(z, np.int64)
        self.dirty = np.zeros(z, np.uint8)
        self.opened: list[np.ndarray] = []
        self.idx_tweet = np.zeros(0, np.int64)
        self.idx_slot = np.zeros(0, np.int64)
        self.n_nodes = 0
        self.built = 0  # nodes below this have their edges built
        self.node_slot = np.full(z, -1, np.int64)
        self.node_uid = np.zeros(z, np.int64)
        self.node_dense = np.zeros(z, np.int64)
        self.node_next = np.zeros(z, np.int64)
        self.node_time = np.zeros(z, np.float64)
        self.node_fol = np.zeros(z, np.float64)
        self.node_pub = np.zeros(z, np.uint8)
        self.node_reached = np.zeros(z, np.uint8)
        self.node_gen = np.zeros(z, np.int32)
        self._new_table(2 * z)
        self.n_edges = 0
        self.e_src = np.zeros(z, np.int64)
        self.e_dst = np.zeros(z, np.int64)
        self.e_gen = np.zeros(z, np.int32)

    # -- capacity --------------------------------------------------------------------------------------------
    def _new_table(self, cap: int) -> None:
        self.tab = np.full(cap, -1, np.int64)
        self.mask = cap - 1
        bits = 16 * cap
        self.bitmap = np.zeros(bits // 64, np.uint64)
        self.bshift = 64 - (bits.bit_length() - 1)

    def _reserve_nodes(self, extra: int) -> None:
        need = self.n_nodes + extra
        if need > len(self.node_slot):
            self.node_slot = _grown(self.node_slot, need, -1)
            for name in ("node_uid", "node_dense", "node_next", "node_time", "node_fol", "node_pub", "node_reached",
                         "node_gen"):  # fmt: skip
                setattr(self, name, _grown(getattr(self, name), len(self.node_slot)))
        if 2 * need > len(self.tab):
            cap = len(self.tab)
            while cap < 2 * need:
                cap *= 2
            self._new_table(cap)
            _rehash(self.tab, self.mask, self.bitmap, self.bshift, self.n_nodes, self.node_slot, self.node_uid,
                    self.node_slot >= 0)  # fmt: skip

    def _reserve_slots(self, extra: int) -> None:
        need = self.n_slots + extra
        for name in ("slot_tweet", "slot_pub_node", "slot_pub_uid", "slot_maxtime", "slot_size", "dirty"):
            setattr(self, name, _grown(getattr(self, name), need))
        self.slot_head = _grown(self.slot_head, len(self.slot_tweet), -1)

    # -- StreamCore ------------------------------------------------------------------------------------------
    def set_graph_delta(self, delta, extra_ids, extra_dense, extra_uid_by_dense) -> None:
        grew = len(extra_ids) != len(self.extra_ids)
        self.delta, self.extra_ids, self.extra_dense = delta, extra_ids, extra_dense
        self.extra_uid = extra_uid_by_dense
        if grew:  # accounts the graph did not know now have dense indices
            self.node_dense[: self.n_nodes] = self._dense(self.node_uid[: self.n_nodes])

    def open_cascades(self, tweet, user, time, followers, index_tweet, index_slot) -> None:
        k = len(tweet)
        self._reserve_slots(k)
        self._reserve_nodes(k)
        s = np.arange(self.n_slots, self.n_slots + k)
        j = np.arange(self.n_nodes, self.n_nodes + k)
        self.slot_tweet[s], self.slot_pub_node[s], self.slot_pub_uid[s] = tweet, j, user
        self.slot_maxtime[s] = time
        self.node_slot[j], self.node_uid[j], self.node_time[j], self.node_fol[j] = s, user, time, followers
        self.node_dense[j] = self._dense(np.asarray(user, dtype=np.int64))
        self.node_next[j] = -1
        self.slot_head[s] = j
        self.slot_size[s] = 1
        self.node_pub[j] = 1
        self.node_reached[j] = 1
        # new cascades hold only their publisher: no conflict in the table
        self.n_slots += k
        for i in range(k):
            _, h = _find(s[i], user[i], self.tab, self.mask, self.node_slot, self.node_uid)
            self.tab[h] = j[i]
            _set_bit(s[i], user[i], self.bitmap, self.bshift)
        self.n_nodes += k
        self.idx_tweet, self.idx_slot = index_tweet, index_slot
        self.opened.append(s)

    def mark_dirty(self, slots) -> None:
        self.dirty[np.asarray(slots, dtype=np.int64)] = 1

    def mark_follow_dirty(self, follower_ids, followee_ids) -> None:
        o = np.lexsort((followee_ids, follower_ids))
        _follow_dirty(self.n_nodes, self.node_slot, self.node_uid, self.node_time, self.node_pub,
                      follower_ids[o], followee_ids[o], self.tab, self.mask, self.dirty)  # fmt: skip

    def place(self, tweet, user, time, followers):
        if len(self.idx_tweet):
            p = np.minimum(np.searchsorted(self.idx_tweet, tweet), len(self.idx_tweet) - 1)
            slot = np.where(self.idx_tweet[p] == tweet, self.idx_slot[p], -1)
        else:
            slot = np.full(len(tweet), -1, np.int64)
        unknown = slot < 0
        known = ~unknown
        self._reserve_nodes(int(known.sum()))
        n0 = self.n_nodes
        uk = user[known]
        self.n_nodes, dups, selfs = _place(
            slot[known], uk, self._dense(uk), time[known], followers[known], self.slot_pub_uid, self.n_nodes,
            self.node_slot, self.node_uid, self.node_dense, self.node_time, self.node_fol, self.node_next,
            self.slot_head, self.slot_size, self.tab, self.mask, self.bitmap, self.bshift, self.dirty,
        )  # fmt: skip
        return unknown, {"accepted": self.n_nodes - n0, "duplicates": dups, "self_retweets": selfs}

    def _dense(self, uids: np.ndarray) -> np.ndarray:
        d = self.graph.index_of(uids)
        if len(self.extra_ids):
            miss = d < 0
            p = np.minimum(np.searchsorted(self.extra_ids, uids[miss]), len(self.extra_ids) - 1)
            d[miss] = np.where(self.extra_ids[p] == uids[miss], self.extra_dense[p], -1)
        return d

    def build(self, collect: bool) -> dict:
        lo, hi = self.built, self.n_nodes
        new = np.arange(lo, hi)
        # late or out of order: a new participant strictly before what its cascade had seen
        ns = self.node_slot[new]
        late = self.node_time[new] < self.slot_maxtime[ns]
        self.dirty[ns[late]] = 1
        np.maximum.at(self.slot_maxtime, ns, self.node_time[new])
        dirty_slots = np.flatnonzero(self.dirty[: self.n_slots])
        work = new[self.node_pub[new] == 0]
        if len(dirty_slots):  # every participant of a rebuilt cascade, from the cascades' lists
            old = _cascade_nodes(dirty_slots, self.slot_head, self.slot_size, self.node_next)
            old = old[(old < lo) & (self.node_pub[old] == 0)]
            work = np.sort(np.concatenate([old, work]))
        cs, cd = _candidates(work, self.node_slot, self.node_uid, self.node_dense, self.node_time, self.node_next,
                             self.slot_head, self.slot_size, self.indptr, self.indices, self.graph.user_ids,
                             self.delta, self.extra_uid, self.tab, self.mask, self.bitmap, self.bshift)  # fmt: skip
        ks, kd = _reach_keep(work, cs, cd, self.node_time[:hi], self.node_reached, self.node_slot,
                             self.slot_pub_node, self.attach)  # fmt: skip
        self.node_gen[work] += 1
        self._append_edges(ks, kd)
        out = {"n_work": len(work)}
        if collect:
            touched = unique(np.concatenate([ns, dirty_slots, *self.opened]))
            out.update(
                edge_tweet=self.slot_tweet[self.node_slot[ks]], edge_src=self.node_uid[ks], edge_dst=self.node_uid[kd],
                recomputed=self.slot_tweet[dirty_slots], touched=self.slot_tweet[touched],
            )  # fmt: skip
        self.opened = []
        self.dirty[dirty_slots] = 0
        self.built = hi
        return out

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
        self.e_src[m:need], self.e_dst[m:need] = ks, kd
        self.e_gen[m:need] = self.node_gen[ks]
        self.n_edges = need

    def _live_edges(self) -> np.ndarray:
        m = self.n_edges
        return np.flatnonzero(self.e_gen[:m] == self.node_gen[self.e_src[:m]])

    def snapshot(self):
        n = self.n_nodes
        alive = np.flatnonzero(self.node_slot[:n] >= 0)
        pos = np.full(n, -1, np.int64)
        pos[alive] = np.arange(len(alive))
        live = self._live_edges()
        return (
            self.slot_tweet[: self.n_slots].copy(), self.node_slot[alive], self.node_uid[alive],
            self.node_time[alive], self.node_fol[alive], self.node_pub[alive].astype(bool),
            pos[self.e_src[live]], pos[self.e_dst[live]],
        )  # fmt: skip
