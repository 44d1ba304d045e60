"""Personalized PageRank by forward push (Andersen, Chung and Lang, 2006): the local method of who amplifies whom.

The exact method (:mod:`compute.algorithms.wtf`) iterates over the whole graph until the L1 change is below
``tol``. PPR is concentrated near its seed, so a local method touches only the seed's neighbourhood: it keeps an
estimate ``p`` and a residual ``r`` (``r = e_s`` at the start) and *pushes* any account ``u`` whose residual is
above ``epsilon`` times its out-degree in the walk's direction:

    p[u] += (1 - d) r[u];  r[v] += d r[u] / deg(u) for each v that u's walk goes to;  r[u] = 0

An account with no edge in that direction sends its share to the seed, as the exact method's dangling mass does.
The PPR of the exact method is ``x = p + sum_u r[u] x_u`` (``x_u``: where a walk of geometric length from u ends)
at every step, so when no account is left to push, ``p <= x`` everywhere and ``||x - p||_1 = sum(r)``, which is
returned as ``delta``: the exact L1 distance to the converged vector. Each push removes at least
``(1 - d) epsilon deg(u)`` of residual and costs ``deg(u)`` edge visits, so the work is at most
``1 / ((1 - d) epsilon)`` edge visits, whatever the graph's size.

**Plain walks** (Fogaras et al.; ``method="walks"``): no push, the whole unit of residual stays at the seed and
``walks`` random walks start there, with the estimator below: the method the issue's probe measured, kept to be
measured against FORA.

**FORA** (Wang et al., KDD 2017; ``method="fora"``): the push stops early (a larger ``epsilon``) and the residual
it leaves is spent by random walks, ``ceil(r[u] walks)`` from each account ``u``, each stopping at every step with
probability ``1 - d``. Every account a walk visits, its start included, gets ``(1 - d)`` times ``r[u]`` over the
number of walks: a walk of geometric length visits an account ``x_u / (1 - d)`` times on average, so this is an
unbiased estimate of the part the push left, with less variance than adding ``r[u]`` only where a walk stops (the
visits near the start, which carry most of the mass, are counted, not sampled).

The walks draw the GPU twin's counter-based streams (splitmix64 of the seed, the start account and the walk's
number), so a walk's path depends on nothing else. They are split in equal ranges over numba's threads, and each
thread keeps ``_LANES`` walks in flight, one step of each in turn: a step waits on the follow the last one read
(a random read in the follows, which no cache holds on a large graph), and interleaving lets the processor have
that many reads under way instead of one. Each thread counts its visits as integers (units of 2^-60) and the
counts are summed at the end, so the estimate is the same bits on any number of threads, alone or in a batch, and
from run to run (``benchmarks/wtf_push.md``, 2026-12-07: 4.0-6.3x faster than one walk at a time on two threads).

The accounts are pushed in first-in first-out order from one queue, so a seed's result does not depend on the
other seeds of a call. The arrays (estimate, residual, flags, queue) are allocated once per graph and direction
and only the accounts a seed touched are cleared after it. ``benchmarks/wtf_push.md`` has the accuracy against
the exact method (top-1,000 circle of trust, top-20 lists) and the time per seed, with the epsilon chosen.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._jit import HAVE_NUMBA, njit, prange
from ..graphs import Graph, per_graph
from ..results import PageRank, walk_adjacency

__all__ = ["personalized_pagerank_push", "state"]


@njit(cache=True)
def _push(out_ptr, out_idx, seed, damping, eps, p, r, queued, seen, queue, touched):  # pragma: no cover - numba
    """Push from ``seed`` until no residual is above ``eps`` times its account's out-degree (1 for none).
    ``p``, ``r``, ``queued`` and ``seen`` are all zero on entry; the accounts touched are written to
    ``touched`` (their number is returned) so the caller can clear them; the queue ends empty, so ``queued``
    ends all zero. Returns (touched, pushes)."""
    cap = len(queue)  # n + 1: every account at most once in the queue, and a full queue is not an empty one
    head = 0
    tail = 0
    r[seed] = 1.0
    seen[seed] = 1
    touched[0] = seed
    n_touched = 1
    queue[tail] = seed
    tail = (tail + 1) % cap
    queued[seed] = 1
    pushes = 0
    while head != tail:
        u = queue[head]
        head = (head + 1) % cap
        queued[u] = 0
        ru = r[u]
        lo = out_ptr[u]
        hi = out_ptr[u + 1]
        deg = hi - lo
        if ru <= eps * max(deg, 1):
            continue
        r[u] = 0.0
        p[u] += (1.0 - damping) * ru
        pushes += 1
        if deg == 0:  # nowhere to go: back to the seed, as the exact method's dangling mass
            r[seed] += damping * ru
            if queued[seed] == 0:
                queued[seed] = 1
                queue[tail] = seed
                tail = (tail + 1) % cap
            continue
        share = damping * ru / deg
        for e in range(lo, hi):
            v = out_idx[e]
            r[v] += share
            if seen[v] == 0:
                seen[v] = 1
                touched[n_touched] = v
                n_touched += 1
            if queued[v] == 0 and r[v] > eps * max(out_ptr[v + 1] - out_ptr[v], 1):
                queued[v] = 1
                queue[tail] = v
                tail = (tail + 1) % cap
    return n_touched, pushes


# The walks' random numbers: splitmix64, counter-based, as the GPU twin draws them (``compute/gpu/wtf_push.py``):
# walk j of start account u for seed s starts from mix(s * GOLD ^ mix(u + C) ^ j) and adds GOLD before each draw;
# the draw's high 32 bits decide whether the walk goes on, its low 32 bits which follow it takes. So a walk's path
# depends only on (s, u, j), never on which thread or lane walks it, or when.
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_START = np.uint64(0x632BE59BD9B4E019)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S27, _S30, _S31, _S32 = (np.uint64(v) for v in (27, 30, 31, 32))
#: the visits are added as integers in units of 2^-60 (the GPU's fixed point): integer sums are the same in any
#: order, so the estimate is the same bits on any number of threads
_V_ONE = float(1 << 60)
#: walks in flight per thread: a walk's steps wait on each other (each reads where the last one led), so a thread
#: interleaves this many walks to keep that many memory reads under way
_LANES = 16
#: the most the walks' per-thread arrays may take (fewer threads walk on a graph too large for one each)
_PARTS_BYTES = 256 << 20


def numba_threads() -> int:
    """The threads numba's parallel loops use here (1 without numba)."""
    if not HAVE_NUMBA:
        return 1
    import numba

    return int(numba.get_num_threads())


if HAVE_NUMBA:

    @njit(cache=True, inline="always")
    def _wrap_add(a, b):  # pragma: no cover - numba
        return a + b

    @njit(cache=True, inline="always")
    def _wrap_mul(a, b):  # pragma: no cover - numba
        return a * b

    @njit(cache=True, inline="always")
    def _mix(z):  # pragma: no cover - numba
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return z ^ (z >> _S31)

else:  # the same 64-bit arithmetic with Python integers (NumPy's scalars warn when they wrap)
    _MASK = (1 << 64) - 1

    def _wrap_add(a, b):
        return np.uint64((int(a) + int(b)) & _MASK)

    def _wrap_mul(a, b):
        return np.uint64((int(a) * int(b)) & _MASK)

    def _mix(z):
        z = int(z)
        z = ((z ^ (z >> 30)) * int(_M1)) & _MASK
        z = ((z ^ (z >> 27)) * int(_M2)) & _MASK
        return np.uint64(z ^ (z >> 31))


@njit(cache=True)
def _walk_plan(r, touched, n_touched, per_unit, damping):  # pragma: no cover - numba
    """FORA's walks, from every touched account with residual ``r[u] > 0``: ``ceil(r[u] per_unit)`` of them, each
    adding ``(1 - damping) r[u] / count`` (fixed point) at every account it visits. The residuals are spent (set
    to 0). Returns (start accounts, one past each start's last walk (a running total), each start's weight)."""
    starts = np.empty(n_touched, dtype=np.int64)
    ends = np.empty(n_touched, dtype=np.int64)
    weights = np.empty(n_touched, dtype=np.uint64)
    k = 0
    total = 0
    for i in range(n_touched):
        u = touched[i]
        ru = r[u]
        if ru <= 0.0:
            continue
        r[u] = 0.0
        count = int(np.ceil(ru * per_unit))
        total += count
        starts[k] = u
        ends[k] = total
        weights[k] = np.uint64((1.0 - damping) * ru / count * _V_ONE)
        k += 1
    return starts[:k], ends[:k], weights[:k]


@njit(cache=True)
def _walk_state(base, u, j):  # pragma: no cover - numba
    """Walk ``j`` of start account ``u``'s first state (``base``: the seed times ``_GOLD``)."""
    # every operand cast: numba types a uint64 that fits in 63 bits, passed from Python, as int64, and an int64's
    # right shift would copy its sign bit
    return _mix(np.uint64(base) ^ _mix(_wrap_add(np.uint64(u), _START)) ^ np.uint64(j))


@njit(cache=True)
def _visit(vis, tl, n_tl, t, v, w):  # pragma: no cover - numba
    if vis[t, v] == 0:
        tl[t, n_tl[t]] = v
        n_tl[t] += 1
    vis[t, v] += w


@njit(cache=True)
def _take_walk(k, w, e, starts, ends, weights, base, lane_v, lane_state, lane_w, vis, tl, n_tl, t):  # pragma: no cover
    """Lane ``k`` takes walk ``w`` (``e``: the plan's entry of an earlier walk, moved on to ``w``'s and returned);
    the walk's start counts as a visit."""
    while ends[e] <= w:
        e += 1
    u = starts[e]
    lane_v[k] = u
    lane_state[k] = _walk_state(base, u, w - (ends[e - 1] if e else 0))
    lane_w[k] = weights[e]
    _visit(vis, tl, n_tl, t, u, weights[e])
    return e


@njit(cache=True, parallel=True)
def _walk_lanes(out_ptr, out_idx, seed, damping, starts, ends, weights, vis, tl, n_tl):  # pragma: no cover
    """The plan's walks, split in equal ranges over ``vis.shape[0]`` parts (threads); a part walks ``_LANES`` walks
    at a time, one step of each in turn, a finished walk's lane taking the part's next walk. Each part adds its
    visits to its own row of ``vis`` and lists the accounts it reached first in its row of ``tl``."""
    parts = vis.shape[0]
    total = ends[len(ends) - 1]
    go = np.uint64(damping * 4294967296.0)
    base = _wrap_mul(np.uint64(seed), _GOLD)
    for t in prange(parts):
        lo, hi = total * t // parts, total * (t + 1) // parts
        lane_v = np.zeros(_LANES, dtype=np.int64)
        lane_state = np.zeros(_LANES, dtype=np.uint64)
        lane_w = np.zeros(_LANES, dtype=np.uint64)
        live = np.zeros(_LANES, dtype=np.bool_)
        e = np.searchsorted(ends, lo, side="right")
        nxt = lo
        n_live = 0
        for k in range(_LANES):  # each lane takes the part's next walk
            if nxt < hi:
                e = _take_walk(k, nxt, e, starts, ends, weights, base, lane_v, lane_state, lane_w, vis, tl, n_tl, t)
                live[k] = True
                n_live += 1
                nxt += 1
        at = np.zeros(_LANES, dtype=np.int64)
        while n_live:  # one step of each live walk: first every lane's draw and row, then every lane's follow
            for k in range(_LANES):
                at[k] = -1
                if not live[k]:
                    continue
                st = _wrap_add(lane_state[k], _GOLD)
                lane_state[k] = st
                x = _mix(st)
                if (x >> _S32) >= go:  # this walk stops; the lane takes the part's next one
                    if nxt >= hi:
                        live[k] = False
                        n_live -= 1
                        continue
                    e = _take_walk(k, nxt, e, starts, ends, weights, base, lane_v, lane_state, lane_w, vis, tl, n_tl, t)
                    nxt += 1
                    continue
                v = lane_v[k]
                a = out_ptr[v]
                deg = out_ptr[v + 1] - a
                # nowhere to go (-2): back to the seed, as the exact method's dangling mass
                at[k] = a + np.int64(((x & _LOW32) * np.uint64(deg)) >> _S32) if deg else -2
            # the follows read apart from the draws: the lanes' reads do not wait on each other, so the
            # processor has all of them under way at once (one lane's whole step between them kept it to a few)
            for k in range(_LANES):
                if at[k] >= 0:
                    lane_v[k] = out_idx[at[k]]
                elif at[k] == -2:
                    lane_v[k] = seed
            for k in range(_LANES):
                if at[k] != -1:
                    _visit(vis, tl, n_tl, t, lane_v[k], lane_w[k])


@njit(cache=True)
def _merge_visits(vis, tl, n_tl, p, seen, touched, n_touched):  # pragma: no cover - numba
    """Every part's visits summed (integers: any order, the same total) into ``p``; the parts' rows cleared; the
    accounts first reached appended to ``touched``. Returns their number."""
    c0 = n_tl[0]
    for t in range(1, vis.shape[0]):
        for i in range(n_tl[t]):
            v = tl[t, i]
            if vis[0, v] == 0:
                tl[0, c0] = v
                c0 += 1
            vis[0, v] += vis[t, v]
            vis[t, v] = 0
        n_tl[t] = 0
    for i in range(c0):
        v = tl[0, i]
        p[v] += vis[0, v] / _V_ONE
        vis[0, v] = 0
        if seen[v] == 0:
            seen[v] = 1
            touched[n_touched] = v
            n_touched += 1
    n_tl[0] = 0
    return n_touched


class _State:
    """The walk's forward CSR and the push's work arrays, for one graph and direction."""

    def __init__(self, g: Graph, direction: str) -> None:
        (out_ptr, out_idx), _ = walk_adjacency(g, direction)
        n = g.n_nodes
        self.out_ptr, self.out_idx = out_ptr, out_idx
        self.p = np.zeros(n)
        self.r = np.zeros(n)
        self.queued = np.zeros(n, dtype=np.uint8)
        self.seen = np.zeros(n, dtype=np.uint8)
        self.queue = np.zeros(n + 1, dtype=np.int64)
        self.touched = np.zeros(max(n, 1), dtype=np.int64)
        self._walk_parts: tuple | None = None

    def _parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The walks' per-thread arrays (visits, accounts reached, their count), one row per part: as many parts
        as numba has threads, within ``_PARTS_BYTES`` (16 bytes an account a part); kept while the count holds."""
        n = max(len(self.p), 1)
        threads = numba_threads()
        parts = max(1, min(threads, _PARTS_BYTES // (16 * n)))
        if self._walk_parts is None or self._walk_parts[0].shape[0] != parts:
            self._walk_parts = (
                np.zeros((parts, n), dtype=np.uint64),
                np.zeros((parts, n), dtype=np.int64),
                np.zeros(parts, dtype=np.int64),
            )
        return self._walk_parts

    def run(
        self, seed: int, damping: float, epsilon: float | None, walks: float = 0.0
    ) -> tuple[np.ndarray, int, float]:
        """Push from ``seed`` (``epsilon`` None: no push, the whole unit of residual stays at the seed), then with
        ``walks`` > 0 spend the residual by that many walks per unit (FORA; without the push, plain Monte-Carlo
        walks from the seed); returns (the touched accounts, pushes, residual left by the push). ``self.p`` holds
        the estimate until :meth:`clear`."""
        if epsilon is None:
            self.r[seed], self.seen[seed], self.touched[0] = 1.0, 1, seed
            k, pushes = 1, 0
        else:
            k, pushes = _push(
                self.out_ptr, self.out_idx, seed, damping, epsilon, self.p, self.r, self.queued, self.seen,
                self.queue, self.touched,
            )  # fmt: skip
        residual = float(self.r[self.touched[:k]].sum())
        if walks > 0:
            starts, ends, weights = _walk_plan(self.r, self.touched, k, float(walks), damping)
            if len(starts):
                vis, tl, n_tl = self._parts()
                _walk_lanes(self.out_ptr, self.out_idx, seed, damping, starts, ends, weights, vis, tl, n_tl)
                k = _merge_visits(vis, tl, n_tl, self.p, self.seen, self.touched, k)
        return self.touched[:k], int(pushes), residual

    def clear(self, touched: np.ndarray) -> None:
        self.p[touched] = 0.0
        self.r[touched] = 0.0
        self.seen[touched] = 0


#: work arrays per graph (weakly held: they go with the graph)
_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def state(g: Graph, direction: str) -> _State:
    """The push's arrays for ``g`` and ``direction`` (made at the first call, kept while ``g`` lives)."""
    return per_graph(_STATES, g, direction, _State)


def personalized_pagerank_push(
    g: Graph, seeds: np.ndarray, *, direction: str, damping: float, epsilon: float | None, walks: float = 0.0
) -> PageRank:
    """The push estimate of each seed's PPR, as a dense (k x n) :class:`PageRank`: ``iterations`` counts the
    pushes, ``converged`` is always True and ``delta`` is the residual the push left: without walks the exact L1
    distance to the converged vector, with them the mass the walks estimated. ``epsilon`` None: no push, the
    ``walks`` start at the seed (the plain Monte-Carlo method, ``delta`` 1)."""
    st = state(g, direction)
    k = len(seeds)
    values = np.zeros((k, g.n_nodes))
    pushes = np.zeros(k, dtype=np.int64)
    delta = np.zeros(k)
    for j, seed in enumerate(seeds.tolist()):
        touched, pushes[j], delta[j] = st.run(seed, damping, epsilon, walks)
        values[j, touched] = st.p[touched]
        st.clear(touched)
    return PageRank(seeds.astype(np.int64), values, pushes, np.ones(k, dtype=bool), delta)
