"""Forward phase (thesis Algorithm 1, DESIGN §1): rebuild each cascade's spreading graph S_t.

S_t holds exactly the follower edges inside C_t that go forward in time and whose earlier end is reachable
from the publisher by such edges. Algorithm 1 finds them breadth-first from the publisher over the *whole*
follower list of every reached user. We get the same edge set with work proportional to the follower edges
*among the participants*, as CRGP's GALE does:

* Visit the cascade's nodes in time order. Everything strictly earlier than ``v`` is then final, so ``v`` is
  reachable iff one of the users it follows is an earlier, reachable participant.
* For the retweeter ``v`` either scan the list of users ``v`` follows and look each one up in a per-cascade
  participant table (one random read), or scan the earlier participants and binary-search ``v``'s sorted
  friend list — whichever is shorter. A celebrity retweeter with 100K friends in a 20-node cascade costs 20
  searches, and a huge cascade costs each retweeter only its friend list.
* Edges are ``(v, u)``: ``v`` could have seen ``u``'s post; ``u`` receives ``v``'s share in the backward phase.

Ties in time give no edge. A retweeter that nothing reaches is an *orphan*: under ``strict`` (the thesis) it
stays isolated; under ``attach`` it gets the edge ``(v, publisher)`` and is from then on reached, so its own
followers who retweet later can connect through it (documented choice: attach models "found the tweet by
search and passed it on"). Retweeters missing from the follower graph have no known friends: orphans.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._jit import HAVE_NUMBA, njit
from .backends import resolve_backend
from .structures import Cascades, FollowerGraph, SpreadingGraphs

__all__ = ["ORPHAN_POLICIES", "forward"]

ORPHAN_POLICIES = ("strict", "attach")


def forward(
    cascades: Cascades,
    graph: FollowerGraph,
    *,
    orphans: str = "strict",
    backend: str = "auto",
    threads: int | None = None,
) -> SpreadingGraphs:
    """Spreading graphs of every cascade in ``cascades`` over the follower graph ``graph``.

    ``cascades.times`` is required (the measure is about time order). Returns edges as global node indices,
    grouped by cascade, in the order found (per retweeter in time order).
    """
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if cascades.times is None:
        raise ValueError("the forward phase needs participation times; these cascades have none")
    if resolve_backend(backend) == "gpu":
        from .gpu import forward as gpu_forward

        return gpu_forward(cascades, graph, orphans=orphans, backend="gpu")
    return forward_cpu(cascades, graph, orphans=orphans, threads=threads)


def forward_cpu(
    cascades: Cascades, graph: FollowerGraph, *, orphans: str = "strict", threads: int | None = None
) -> SpreadingGraphs:
    """CPU reference. ``threads``: cascade ranges run concurrently (the kernel releases the GIL); ``None``
    uses every core."""
    node_user = graph.index_of(cascades.user_ids)
    idx_dtype = np.int32 if cascades.n_nodes < 2**31 else np.int64
    k = max(1, min(threads or os.cpu_count() or 1, cascades.n_cascades))
    if not HAVE_NUMBA:
        k = 1  # without numba the kernel holds the GIL: threads would only add overhead
    # cut into 4k ranges of about equal participants so a huge cascade does not leave a thread idle long
    bounds = np.unique(np.searchsorted(cascades.node_offsets, np.linspace(0, cascades.n_nodes, 4 * k + 1)))
    bounds = np.unique(np.clip(np.r_[0, bounds, cascades.n_cascades], 0, cascades.n_cascades))

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
def _grow(src, dst):
    """Double the edge buffers (numba has no growable arrays)."""
    m = len(src)
    src2 = np.empty(2 * m, dtype=src.dtype)
    dst2 = np.empty(2 * m, dtype=dst.dtype)
    src2[:m] = src
    dst2[:m] = dst
    return src2, dst2


@njit
def _forward_kernel(t0, t1, node_offsets, node_user, times, publisher, indptr, indices, n_users, attach):
    """Spreading edges of cascades ``t0:t1``: (edges per cascade, src, dst) with global node indices."""
    n_nodes = node_offsets[t1] - node_offsets[t0]
    src = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    dst = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    counts = np.zeros(t1 - t0, dtype=np.int64)
    pos = np.full(max(n_users, 1), -1, dtype=np.int64)  # dense user -> global node index, per cascade
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
        for i in range(lo, hi):
            u = node_user[i]
            if u >= 0:
                pos[u] = i
        first_of_tie = 0  # rank of the first node with the current time
        for k in range(n):
            v = order[k]
            tv = times[v]
            if k > 0 and times[order[k - 1]] < tv:
                first_of_tie = k
            if v == p:
                continue
            found = False
            uv = node_user[v]
            if uv >= 0:
                a = indptr[uv]
                b = indptr[uv + 1]
                if b - a <= first_of_tie:
                    for e in range(a, b):
                        j = pos[indices[e]]
                        if j >= 0 and times[j] < tv and reach[j - lo]:
                            if m == len(src):
                                src, dst = _grow(src, dst)
                            src[m] = v
                            dst[m] = j
                            m += 1
                            found = True
                else:
                    for kk in range(first_of_tie):
                        j = order[kk]
                        uj = node_user[j]
                        if reach[j - lo] and uj >= 0 and _bsearch(indices, a, b, uj):
                            if m == len(src):
                                src, dst = _grow(src, dst)
                            src[m] = v
                            dst[m] = j
                            m += 1
                            found = True
            if not found and attach:
                if m == len(src):
                    src, dst = _grow(src, dst)
                src[m] = v
                dst[m] = p
                m += 1
                found = True
            if found:
                reach[v - lo] = True
        for i in range(lo, hi):
            u = node_user[i]
            if u >= 0:
                pos[u] = -1
        counts[t - t0] = m - m0
    return counts, src[:m].copy(), dst[:m].copy()
