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
visits near the start, which carry most of the mass, are counted, not sampled). The walks draw from NumPy's
generator in numba, seeded per seed account, so a seed's result is the same alone or in a batch, and from run to
run.

The accounts are pushed in first-in first-out order from one queue, so a seed's result does not depend on the
other seeds of a call. The arrays (estimate, residual, flags, queue) are allocated once per graph and direction
and only the accounts a seed touched are cleared after it. ``benchmarks/wtf_push.md`` has the accuracy against
the exact method (top-1,000 circle of trust, top-20 lists) and the time per seed, with the epsilon chosen.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._jit import njit
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


@njit(cache=True)
def _walks(out_ptr, out_idx, seed, damping, per_unit, rng_seed, p, r, seen, touched, n_touched):  # pragma: no cover
    """FORA's second half: from every account with residual ``r[u]``, ``ceil(r[u] per_unit)`` random walks that
    stop at each step with probability ``1 - damping`` (an account with nowhere to go sends the walk to the seed),
    each adding ``(1 - damping)`` times its share of ``r[u]`` to ``p`` at every account it visits, the start
    included: an unbiased estimate of ``sum_u r[u] x_u``. The residuals are spent (set to 0); accounts first
    reached are appended to ``touched``; returns their number."""
    np.random.seed(rng_seed)
    n_start = n_touched
    for i in range(n_start):
        u = touched[i]
        ru = r[u]
        if ru <= 0.0:
            continue
        r[u] = 0.0
        k = int(np.ceil(ru * per_unit))
        share = (1.0 - damping) * ru / k
        for _ in range(k):
            v = u
            while True:
                p[v] += share
                if seen[v] == 0:
                    seen[v] = 1
                    touched[n_touched] = v
                    n_touched += 1
                if np.random.random() >= damping:
                    break
                lo = out_ptr[v]
                deg = out_ptr[v + 1] - lo
                v = seed if deg == 0 else out_idx[lo + np.random.randint(0, deg)]
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
            rng_seed = (seed * 2654435761 + 97) % (1 << 32)  # the seed's own stream: alone or in a batch, the same
            k = _walks(self.out_ptr, self.out_idx, seed, damping, float(walks), rng_seed, self.p, self.r, self.seen,
                       self.touched, k)  # fmt: skip
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
