"""Forward phase (thesis Algorithm 1; docs/measure.md): rebuild each cascade's spreading graph S_t.

S_t holds exactly the follower edges inside C_t that go forward in time and whose earlier end is reachable
from the publisher by such edges. Algorithm 1 finds them breadth-first from the publisher over the *whole*
follower list of every reached user. We get the same edge set with work proportional to the follower edges
*among the participants*, as CRGP's GALE does:

* Visit the cascade's nodes in time order. Everything strictly earlier than ``v`` is then final, so ``v`` is
  reachable iff one of the users it follows is an earlier, reachable participant.
* For the retweeter ``v`` either scan the list of users ``v`` follows and look each one up in a per-cascade
  participant hash table, or scan the earlier reached participants and binary-search ``v``'s sorted friend
  list — whichever costs less. A celebrity retweeter with 100K friends in a 20-node cascade costs 20
  searches, and a huge cascade costs each retweeter only its friend list.
* Edges are ``(v, u)``: ``v`` could have seen ``u``'s post; ``u`` receives ``v``'s share in the backward phase.

Ties in time give no edge. A retweeter that nothing reaches is an *orphan*: under ``strict`` (the thesis) it
stays isolated; under ``attach`` it gets the edge ``(v, publisher)`` and is from then on reached, so its own
followers who retweet later can connect through it (documented choice: attach models "found the tweet by
search and passed it on"). Retweeters missing from the follower graph have no known friends: orphans.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import HAVE_NUMBA, njit
from ..arrays import unique
from ..backends import resolve_backend
from ..results import complete_forward
from ..structures import ORPHAN_POLICIES, Cascades, FollowerGraph, SpreadingGraphs

__all__ = ["ORPHAN_POLICIES", "forward", "forward_cpu"]

log = logging.getLogger(__name__)


def forward(
    cascades: Cascades,
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    backend: str = "auto",
    threads: int | None = None,
) -> SpreadingGraphs:
    """Spreading graphs of every cascade in ``cascades`` over the follower graph ``graph`` (the public
    dispatcher).

    ``cascades.times`` is required (the measure is about time order). Returns edges as global node indices,
    grouped by cascade, in the order found (per retweeter in time order) on the CPU, sorted by ``(src, dst)``
    on the GPU. ``backend``: ``"auto"``, ``"cpu"`` or ``"gpu"``; cascades the GPU cannot hold (or all, when
    the follower graph does not fit beside them) run on the CPU reference, logged.
    """
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if cascades.times is None:
        raise ValueError("the forward phase needs participation times; these cascades have none")
    if resolve_backend(backend) != "gpu":
        return forward_cpu(cascades, graph, orphans=orphans, threads=threads)
    from ..gpu.forward import forward as forward_gpu

    graphs = forward_gpu(cascades, graph, orphans=orphans, backend="gpu", threads=threads)
    if len(graphs.deferred):
        log.warning("running %d cascade(s) the GPU could not hold on the CPU reference", len(graphs.deferred))
        graphs = complete_forward(cascades, graphs, lambda c: forward_cpu(c, graph, orphans=orphans, threads=threads))
    return graphs


def forward_cpu(
    cascades: Cascades, graph: FollowerGraph, *, orphans: str = "strict", threads: int | None = None
) -> SpreadingGraphs:
    """The CPU reference. ``threads``: cascade ranges run concurrently (the kernel releases the GIL); ``None``
    uses every core."""
    node_user = graph.index_of(cascades.user_ids)
    idx_dtype = np.int32 if cascades.n_nodes < 2**31 else np.int64
    k = max(1, min(threads or os.cpu_count() or 1, cascades.n_cascades))
    if not HAVE_NUMBA:
        k = 1  # without numba the kernel holds the GIL: threads would only add overhead
    # cut into 4k ranges of about equal participants so a huge cascade does not leave a thread idle long
    cuts = np.searchsorted(cascades.node_offsets, np.linspace(0, cascades.n_nodes, 4 * k + 1))
    bounds = unique(np.clip(np.r_[0, cuts, cascades.n_cascades], 0, cascades.n_cascades))

    def run(r: int):
        return _forward_kernel(
            int(bounds[r]),
            int(bounds[r + 1]),
            cascades.node_offsets,
            node_user,
            cascades.times,
            cascades.publisher,
            graph.friends_indptr,
            graph.friends_indices,
            graph.n_users,
            orphans == "attach",
        )

    if k == 1 or len(bounds) <= 2:
        parts = [run(r) for r in range(len(bounds) - 1)]
    else:
        with ThreadPoolExecutor(k) as pool:
            parts = list(pool.map(run, range(len(bounds) - 1)))
    counts = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    off = np.zeros(cascades.n_cascades + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    src = np.concatenate([p[1] for p in parts]).astype(idx_dtype) if parts else np.zeros(0, idx_dtype)
    dst = np.concatenate([p[2] for p in parts]).astype(idx_dtype) if parts else np.zeros(0, idx_dtype)
    return SpreadingGraphs(cascades, off, src, dst, orphans=orphans)


@njit
def _bsearch(a, lo, hi, x):
    end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < end and a[lo] == x


@njit
def _grow(src, dst, need):
    """Edge buffers of at least ``need`` slots, doubling (numba has no growable arrays)."""
    m = len(src)
    size = 2 * m
    while size < need:
        size *= 2
    src2 = np.empty(size, dtype=src.dtype)
    dst2 = np.empty(size, dtype=dst.dtype)
    src2[:m] = src
    dst2[:m] = dst
    return src2, dst2


@njit(inline="always")
def _slot(u, mask, shift):
    """Home slot of user ``u`` in a table of ``mask + 1`` (a power of two) slots: Fibonacci hashing."""
    return ((np.int64(u) * 2654435761) & 0xFFFFFFFF) >> shift & mask  # int64: u < 2**31 cannot overflow


@njit
def _forward_kernel(t0, t1, node_offsets, node_user, times, publisher, indptr, indices, n_users, attach):
    """Spreading edges of cascades ``t0:t1``: (edges per cascade, src, dst) with global node indices.

    Participants are looked up in a per-cascade open-addressing hash table (user -> local node), sized to
    twice the cascade: a typical cascade's table sits in L1, where a lookup in a table over all users (25 MB
    for ``bigger4``) missed the caches every time. Per retweeter the cheaper side is taken: probe each friend
    (``d`` probes) or binary-search each earlier *reached* participant in the sorted friend list (``e`` times
    ``log2 d`` steps).
    """
    n_nodes = node_offsets[t1] - node_offsets[t0]
    src = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    dst = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    counts = np.zeros(t1 - t0, dtype=np.int64)
    max_n = 1
    for t in range(t0, t1):
        max_n = max(max_n, node_offsets[t + 1] - node_offsets[t])
    cap_max = 16
    while cap_max < 2 * max_n:
        cap_max *= 2
    # one bit per user: is it in the current cascade? 400 KB for bigger4's 3.18M users, so it stays in L2 and
    # answers the ~99% of friend probes that miss with one read; only hits go on to the hash table
    present = np.zeros((n_users + 63) // 64 + 1, dtype=np.uint64)
    keys = np.full(cap_max, -1, dtype=np.int64)  # dense user index, -1 = empty
    vals = np.empty(cap_max, dtype=np.int64)  # global node index
    reached = np.empty(max_n, dtype=np.int64)  # reached nodes in time order
    # the current retweeter's edges (at most one per earlier node). The inner loops write only here: an
    # append to the growable output there made numba keep reference counts inside them, 4x slower overall
    cand = np.empty(max_n, dtype=np.int64)
    m = 0
    for t in range(t0, t1):
        m0 = m
        lo = node_offsets[t]
        hi = node_offsets[t + 1]
        n = hi - lo
        p = publisher[t]
        order = np.argsort(times[lo:hi], kind="mergesort") + lo
        reach = np.zeros(n, dtype=np.bool_)
        reach[p - lo] = True
        cap = 16
        bits = 4
        while cap < 2 * n:
            cap *= 2
            bits += 1
        mask = cap - 1
        shift = 32 - bits
        for i in range(lo, hi):
            u = node_user[i]
            if u >= 0:
                present[u >> 6] |= np.uint64(1) << np.uint64(u & 63)
                h = _slot(u, mask, shift)
                while keys[h] != -1:
                    h = (h + 1) & mask
                keys[h] = u
                vals[h] = i
        n_reached = 0  # reached nodes strictly earlier than the current one, in time order
        pending = 0  # reached nodes at the current time, not yet visible to later ones
        for k in range(n):
            v = order[k]
            tv = times[v]
            if k > 0 and times[order[k - 1]] < tv:
                n_reached += pending
                pending = 0
            nc = 0
            uv = node_user[v]
            if v != p and uv >= 0:
                a = indptr[uv]
                b = indptr[uv + 1]
                d = b - a
                # cost model, measured on bigger4: scanning the friends streams memory (a miss per 16 ids)
                # and tests an L2-resident bitmap, ~2 ns a friend; a binary search in a friend list far away
                # in memory misses on about every step past the first cache line, ~16x that per step
                steps = 1
                while (16 << steps) < d:
                    steps += 1
                if d <= 16 * n_reached * steps:
                    for e in range(a, b):
                        f = indices[e]
                        if not (present[f >> 6] >> np.uint64(f & 63)) & np.uint64(1):
                            continue
                        h = _slot(f, mask, shift)
                        while keys[h] != -1:
                            if keys[h] == f:
                                j = vals[h]
                                if times[j] < tv and reach[j - lo]:
                                    cand[nc] = j
                                    nc += 1
                                break
                            h = (h + 1) & mask
                else:
                    for r in range(n_reached):
                        j = reached[r]
                        uj = node_user[j]
                        if uj >= 0 and _bsearch(indices, a, b, uj):
                            cand[nc] = j
                            nc += 1
            if v != p and nc == 0 and attach:
                cand[0] = p
                nc = 1
            if m + nc > len(src):
                src, dst = _grow(src, dst, m + nc)
            for r in range(nc):
                src[m] = v
                dst[m] = cand[r]
                m += 1
            found = nc > 0
            if v == p or found:
                reach[v - lo] = True
                reached[n_reached + pending] = v
                pending += 1
        for h in range(cap):
            keys[h] = -1
        for i in range(lo, hi):
            u = node_user[i]
            if u >= 0:
                present[u >> 6] = np.uint64(0)
        counts[t - t0] = m - m0
    return counts, src[:m].copy(), dst[:m].copy()
