"""numba kernels of the influence-maximisation reference (:mod:`compute.algorithms.influence_max`).

The random numbers are :mod:`compute.influence_model`'s (splitmix64 over uint64: every constant here is a
``np.uint64`` so numba never mixes signed and unsigned arithmetic into floats). Each kernel works on a block
of sets or runs with its own scratch arrays, so the Python side runs blocks on a thread pool (the kernels
release the GIL).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..influence_model import EDGE_SALT, GOLDEN

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(GOLDEN)
_EDGE = np.uint64(EDGE_SALT)
_ONE = np.uint64(1)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_TWO_M53 = 1.1102230246251565e-16  # 2**-53


@njit
def mix64(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def item_key(base, i):
    """The key of set (or run) ``i`` of a stream with key ``base``."""
    return mix64(base + (np.uint64(i) + _ONE) * _GOLD)


@njit
def is_live(key, e, thr, uniform):
    c = mix64(key ^ ((np.uint64(e) + _ONE) * _EDGE))
    t = thr[0] if uniform else thr[e]
    return (c >> _S32) < t


@njit
def draw_root(key, n, cumw, unit):
    u = mix64(key)
    if unit:
        return np.int64(((u >> _S32) * np.uint64(n)) >> _S32)
    x = np.float64(u >> _S11) * _TWO_M53 * cumw[n - 1]
    lo = 0
    hi = n
    while lo < hi:  # first index whose running weight exceeds x: a node of weight 0 is never drawn
        mid = (lo + hi) // 2
        if cumw[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return min(lo, n - 1)


@njit
def rr_block(indptr, indices, thr, uniform, cumw, unit, base, start, stop, mark, queue):
    """RR sets ``[start, stop)``: from a root drawn by weight, a BFS backwards along live edges (row v of the
    follower graph lists the accounts v follows, the ones that can activate v). ``mark`` (int64[n], never equal
    to a set index of this call on entry) and ``queue`` (int32[n]) are the caller's scratch. Returns
    (indptr, nodes ascending per set, edges looked at)."""
    n = len(indptr) - 1
    count = stop - start
    out_ptr = np.zeros(count + 1, dtype=np.int64)
    cap = max(4 * count, 1024)
    out = np.empty(cap, dtype=np.int32)
    touched = 0
    pos = 0
    for j in range(count):
        i = start + j
        key = item_key(base, i)
        root = draw_root(key, n, cumw, unit)
        queue[0] = root
        mark[root] = i
        head = 0
        tail = 1
        while head < tail:
            v = queue[head]
            head += 1
            touched += indptr[v + 1] - indptr[v]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if mark[u] != i and is_live(key, e, thr, uniform):
                    mark[u] = i
                    queue[tail] = u
                    tail += 1
        if pos + tail > cap:
            while pos + tail > cap:
                cap *= 2
            bigger = np.empty(cap, dtype=np.int32)
            bigger[:pos] = out[:pos]
            out = bigger
        if tail <= 32:  # most sets are tiny: an insertion sort in place beats allocating for np.sort
            for q in range(tail):
                x = queue[q]
                z = pos + q
                while z > pos and out[z - 1] > x:
                    out[z] = out[z - 1]
                    z -= 1
                out[z] = x
        else:
            out[pos : pos + tail] = np.sort(queue[:tail])
        pos += tail
        out_ptr[j + 1] = pos
    return out_ptr, out[:pos].copy(), touched


@njit
def greedy_cover(indptr, nodes, n, k):
    """Greedy maximum coverage: k picks (ties: the smallest node), each with the sets it newly covers."""
    n_sets = len(indptr) - 1
    deg = np.zeros(n, dtype=np.int64)
    for t in range(len(nodes)):
        deg[nodes[t]] += 1
    inv_ptr = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        inv_ptr[v + 1] = inv_ptr[v] + deg[v]
    fill = inv_ptr[:-1].copy()
    inv = np.empty(len(nodes), dtype=np.int64)
    for s in range(n_sets):
        for t in range(indptr[s], indptr[s + 1]):
            x = nodes[t]
            inv[fill[x]] = s
            fill[x] += 1
    covered = np.zeros(n_sets, dtype=np.bool_)
    kk = min(k, n)
    chosen = np.empty(kk, dtype=np.int64)
    newly = np.empty(kk, dtype=np.int64)
    for j in range(kk):
        best = 0
        bv = deg[0]
        for v in range(1, n):
            if deg[v] > bv:
                bv = deg[v]
                best = v
        chosen[j] = best
        newly[j] = bv
        for t in range(inv_ptr[best], inv_ptr[best + 1]):
            s = inv[t]
            if not covered[s]:
                covered[s] = True
                for q in range(indptr[s], indptr[s + 1]):
                    deg[nodes[q]] -= 1
        deg[best] = -1  # never picked again
    return chosen, newly


@njit
def cover_in_order(indptr, nodes, n, seeds):
    """Sets newly covered by each of ``seeds`` taken in the given order (the baselines' marginal gains)."""
    n_sets = len(indptr) - 1
    rank = np.full(n, -1, dtype=np.int64)
    for j in range(len(seeds)):
        if rank[seeds[j]] < 0:
            rank[seeds[j]] = j
    newly = np.zeros(len(seeds), dtype=np.int64)
    for s in range(n_sets):
        first = -1
        for t in range(indptr[s], indptr[s + 1]):
            r = rank[nodes[t]]
            if r >= 0 and (first < 0 or r < first):
                first = r
        if first >= 0:
            newly[first] += 1
    return newly


@njit
def mc_block(t_indptr, t_indices, t_perm, thr, uniform, weights, unit, seeds, base, start, stop, mark, queue):
    """Forward IC runs ``[start, stop)`` from ``seeds`` along the followers CSR (``t_perm[k]`` is the edge's
    position in the follower graph, the one its coin is keyed on). Returns each run's spread."""
    out = np.empty(stop - start, dtype=np.float64)
    for j in range(stop - start):
        r = start + j
        key = item_key(base, r)
        tail = 0
        for s in seeds:
            if mark[s] != r:
                mark[s] = r
                queue[tail] = s
                tail += 1
        head = 0
        while head < tail:
            u = queue[head]
            head += 1
            for q in range(t_indptr[u], t_indptr[u + 1]):
                f = t_indices[q]
                if mark[f] != r and is_live(key, t_perm[q], thr, uniform):
                    mark[f] = r
                    queue[tail] = f
                    tail += 1
        if unit:
            out[j] = tail
        else:
            total = 0.0
            for q in range(tail):
                total += weights[queue[q]]
            out[j] = total
    return out


# --------------------------------------------------------------------------------------------------------------
# IMGPU: live-edge snapshots, condensation, bottom-up reach
# --------------------------------------------------------------------------------------------------------------


@njit
def live_mask(m, thr, uniform, key):
    out = np.empty(m, dtype=np.bool_)
    for e in range(m):
        out[e] = is_live(key, e, thr, uniform)
    return out


@njit
def bottom_up_order(dag_ptr, dag_idx, nc):
    """Components ordered by IMGPU's level (sinks 0, else 1 + the highest child level): children come first."""
    level = np.zeros(nc, dtype=np.int64)
    pending = np.zeros(nc, dtype=np.int64)  # children not yet levelled
    parents_ptr = np.zeros(nc + 1, dtype=np.int64)
    for c in range(nc):
        pending[c] = dag_ptr[c + 1] - dag_ptr[c]
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            parents_ptr[dag_idx[t] + 1] += 1
    for c in range(nc):
        parents_ptr[c + 1] += parents_ptr[c]
    fill = parents_ptr[:-1].copy()
    parents = np.empty(len(dag_idx), dtype=np.int64)
    for c in range(nc):
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            ch = dag_idx[t]
            parents[fill[ch]] = c
            fill[ch] += 1
    order = np.empty(nc, dtype=np.int64)
    tail = 0
    for c in range(nc):
        if pending[c] == 0:
            order[tail] = c
            tail += 1
    head = 0
    while head < tail:
        c = order[head]
        head += 1
        for t in range(parents_ptr[c], parents_ptr[c + 1]):
            p = parents[t]
            if level[c] + 1 > level[p]:
                level[p] = level[c] + 1
            pending[p] -= 1
            if pending[p] == 0:
                order[tail] = p
                tail += 1
    return order, level


@njit
def reach_exact(dag_ptr, dag_idx, order, cw, covered, budget):
    """Weight of every component's reach in the DAG, covered components left out (they are closed under
    reachability, so a covered child's whole reach is covered too): IMGPU's eq. (1) with overlap() computed
    exactly, by merging the children's reach lists with a marker. Returns (reach weight, ok); ok False when the
    lists could exceed ``budget`` entries: the sum over the uncovered non-sink components of 1 + their uncovered
    children's list sizes (a sink counts 1), an order-free bound the GPU twin computes the same way (the caller
    then uses the sketch)."""
    nc = len(cw)
    reach = np.zeros(nc, dtype=np.float64)
    start = np.full(nc, -1, dtype=np.int64)
    size = np.zeros(nc, dtype=np.int64)
    mark = np.full(nc, -1, dtype=np.int64)
    pool = np.empty(min(max(4 * nc, 1024), budget), dtype=np.int64)
    pos = 0
    needed = 0
    for c in order:
        if covered[c]:
            continue
        if dag_ptr[c + 1] == dag_ptr[c]:
            reach[c] = cw[c]  # a sink: itself (no list kept; parents add it directly)
            continue
        s0 = pos
        need = 1
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            ch = dag_idx[t]
            if not covered[ch]:
                need += size[ch] if start[ch] >= 0 else 1
        needed += need
        if needed > budget:
            return reach, False
        if pos + need > len(pool):  # pos <= needed <= budget
            bigger = np.empty(min(max(2 * len(pool), pos + need), budget), dtype=np.int64)
            bigger[:pos] = pool[:pos]
            pool = bigger
        mark[c] = c
        pool[pos] = c
        pos += 1
        total = cw[c]
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            ch = dag_idx[t]
            if covered[ch]:
                continue
            if start[ch] < 0:
                if mark[ch] != c:
                    mark[ch] = c
                    pool[pos] = ch
                    pos += 1
                    total += cw[ch]
            else:
                for q in range(start[ch], start[ch] + size[ch]):
                    x = pool[q]
                    if mark[x] != c:
                        mark[x] = c
                        pool[pos] = x
                        pos += 1
                        total += cw[x]
        start[c] = s0
        size[c] = pos - s0
        reach[c] = total
    return reach, True


@njit
def reach_sketch(dag_ptr, dag_idx, order, cw, covered, ranks, kk):
    """The same reach weights estimated with bottom-kk sketches (Cohen 1997): each component carries the kk
    smallest exponential ranks (rate = its weight) over its reach; a reach with fewer than kk components is
    summed exactly, a larger one is estimated from the sketch by rank conditioning."""
    nc = len(cw)
    sk = np.full((nc, kk), np.inf)
    sid = np.full((nc, kk), -1, dtype=np.int64)
    cnt = np.zeros(nc, dtype=np.int64)
    reach = np.zeros(nc, dtype=np.float64)
    buf_r = np.empty(kk * 8, dtype=np.float64)
    buf_i = np.empty(kk * 8, dtype=np.int64)
    for c in order:
        if covered[c]:
            continue
        m = 0
        if cw[c] > 0:
            buf_r[0] = ranks[c]
            buf_i[0] = c
            m = 1
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            ch = dag_idx[t]
            if covered[ch]:
                continue
            if m + cnt[ch] > len(buf_r):
                nb = np.empty(2 * (m + cnt[ch]), dtype=np.float64)
                ni = np.empty(2 * (m + cnt[ch]), dtype=np.int64)
                nb[:m] = buf_r[:m]
                ni[:m] = buf_i[:m]
                buf_r, buf_i = nb, ni
            for q in range(cnt[ch]):
                buf_r[m] = sk[ch, q]
                buf_i[m] = sid[ch, q]
                m += 1
        o = np.argsort(buf_r[:m], kind="mergesort")
        took = 0
        last = -1
        for q in o:
            x = buf_i[q]
            if x == last:
                continue
            dup = False
            for z in range(took):  # the same component may come through two children
                if sid[c, z] == x:
                    dup = True
                    break
            if dup:
                continue
            sk[c, took] = buf_r[q]
            sid[c, took] = x
            last = x
            took += 1
            if took == kk:
                break
        cnt[c] = took
        if took < kk:
            total = 0.0
            for z in range(took):
                total += cw[sid[c, z]]
            reach[c] = total
        else:
            # rank conditioning (Cohen & Kaplan 2007): given the kk-th rank tau, each of the other entries was
            # kept with probability 1 - exp(-w tau); weighting it by the inverse is unbiased for mixed weights
            # (the plain (kk - 1) / tau is not: one heavy component would drag it down)
            tau = sk[c, kk - 1]
            total = 0.0
            for z in range(kk - 1):
                w = cw[sid[c, z]]
                total += w / -np.expm1(-w * tau)
            reach[c] = total
    return reach


@njit
def cover_from(dag_ptr, dag_idx, covered, c0):
    """Mark everything reachable from component ``c0`` covered."""
    if covered[c0]:
        return
    stack = np.empty(len(covered), dtype=np.int64)
    stack[0] = c0
    covered[c0] = True
    top = 1
    while top > 0:
        top -= 1
        c = stack[top]
        for t in range(dag_ptr[c], dag_ptr[c + 1]):
            ch = dag_idx[t]
            if not covered[ch]:
                covered[ch] = True
                stack[top] = ch
                top += 1
