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

import numpy as np

from ._jit import njit
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
    return forward_cpu(cascades, graph, orphans=orphans)


def forward_cpu(cascades: Cascades, graph: FollowerGraph, *, orphans: str = "strict") -> SpreadingGraphs:
    node_user = graph.index_of(cascades.user_ids)
    indices = graph.friends_indices
    off, src, dst = _forward_kernel(
        cascades.node_offsets,
        node_user,
        cascades.times,
        cascades.publisher,
        graph.friends_indptr,
        indices,
        graph.n_users,
        orphans == "attach",
    )
    idx_dtype = np.int32 if cascades.n_nodes < 2**31 else np.int64
    return SpreadingGraphs(cascades, off, src.astype(idx_dtype, copy=False), dst.astype(idx_dtype, copy=False),
                           orphans=orphans)


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
def _forward_kernel(node_offsets, node_user, times, publisher, indptr, indices, n_users, attach):
    n_casc = len(node_offsets) - 1
    n_nodes = node_offsets[-1]
    src = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    dst = np.empty(max(1024, 2 * n_nodes), dtype=np.int64)
    edge_offsets = np.zeros(n_casc + 1, dtype=np.int64)
    pos = np.full(max(n_users, 1), -1, dtype=np.int64)  # dense user -> global node index, per cascade
    m = 0
    for t in range(n_casc):
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
        edge_offsets[t + 1] = m
    return edge_offsets, src[:m].copy(), dst[:m].copy()
