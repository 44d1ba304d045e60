"""Who amplifies whom (WTF, issue 15; "WTF, GPU!", Geil, Wang and Owens 2014): personalized PageRank from an
account gives its circle of trust, and Twitter's Money iteration on the bipartite graph of the circle and the
accounts it points to gives the similar accounts (hubs) and the relevant ones (authorities). CPU reference and
the public dispatchers :func:`wtf` and :func:`personalized_pagerank` (``backend="auto"|"cpu"|"gpu"``).

* PPR is the power iteration of the paper, restart and dangling mass going back to the seed (docs/wtf.md):
  ``x' = d (P x + dangling(x) e_s) + (1 - d) e_s`` from ``x = e_s``, until the L1 change is < ``tol`` or
  ``max_iter`` updates. It runs *pull*-style over the reverse CSR of the walk (:func:`compute.results.
  walk_adjacency`): each row sums its in-neighbours' ``x / out_degree``, so every sum has a fixed order.
* Seeds go in blocks (:func:`cpu_block`: 1 or 4 seeds here; the GPU's 64, :data:`compute.results.BATCH`): one
  sparse matrix x dense (n x k) block per iteration,
  each column stopping on its own convergence (the block shrinks to the columns still moving). Every column's
  arithmetic is the single-seed arithmetic (SciPy's CSR times a C-ordered block sums each row's terms in
  index order per column; reductions run per column along a contiguous row), so a seed's results are bitwise
  the same alone or in any batch (``tests/compute/algorithms/test_wtf.py`` checks it).
* Money (:func:`money`) is the corrected Algorithm 2 of the paper: its line 13 adds the relevance a hub
  gathers to the *destination's* similarity; it must go to the source's (docs/wtf.md shows why).

The product (benchmarks/wtf_cpu.md): a numba kernel over the rows in parallel, faster than SciPy's single-threaded
CSR product at 1 and 64 columns on the twitter preset; without numba, SciPy's product, which adds each row's
terms in the same order (same bits).
"""

from __future__ import annotations

import types
import weakref

import numpy as np

from .._jit import HAVE_NUMBA, njit, prange
from ..arrays import unique
from ..backends import resolve_backend
from ..graphs import Graph, per_graph
from ..results import (
    BATCH,
    DEFAULT_EPSILON,
    DEFAULT_WALKS,
    RANK_SLACK,
    WTF_DIRECTIONS,
    WTF_METHODS,
    MoneyScores,
    PageRank,
    Recommendations,
    check_local,
    check_wtf,
    circle_of_trust,
    push_epsilon,
    recommendations,
    walk_adjacency,
)
from .wtf_push import personalized_pagerank_push
from .wtf_push import state as push_state

__all__ = [
    "BATCH",
    "DEFAULT_EPSILON",
    "DEFAULT_WALKS",
    "WTF_DIRECTIONS",
    "WTF_METHODS",
    "MoneyScores",
    "PageRank",
    "Recommendations",
    "money",
    "personalized_pagerank",
    "personalized_pagerank_cpu",
    "wtf",
    "wtf_cpu",
]


# --------------------------------------------------------------------------------------------------------------
# Dispatchers
# --------------------------------------------------------------------------------------------------------------


def wtf(
    g: Graph,
    seeds,
    *,
    direction: str = "follows",
    circle: int = 1000,
    top: int = 20,
    damping: float = 0.85,
    alpha: float = 0.15,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
    method: str = "exact",
    epsilon: float = DEFAULT_EPSILON,
    walks: float = DEFAULT_WALKS,
) -> list[Recommendations]:
    """Who-to-follow for each seed (node indices), in blocks (:func:`cpu_block`; :data:`BATCH` on the GPU): the
    circle of trust (top ``circle`` by PPR, the seed always in), then Money on it; the ``top`` relevant and similar
    accounts.
    ``method``: ``exact`` (the power iteration to ``tol``), ``push`` (the local forward push to ``epsilon``),
    ``fora`` (the push, then ``walks`` random walks per unit of the residual it left) or ``walks`` (``walks``
    random walks from the seed, no push); the local ones are
    :mod:`compute.algorithms.wtf_push` on the CPU and :mod:`compute.gpu.wtf_push` on the GPU (synchronous push
    rounds: another order of pushes within the same bound, and the same estimator from other random streams)."""
    s = check_wtf(
        g,
        seeds,
        direction=direction,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        circle=circle,
        top=top,
        alpha=alpha,
    )
    n_walks = check_local(method, epsilon, walks)
    if resolve_backend(backend) != "gpu":
        return wtf_cpu(
            g, s, direction=direction, circle=circle, top=top, damping=damping, alpha=alpha, tol=tol,
            max_iter=max_iter, local=None if n_walks is None else (push_epsilon(method, epsilon), n_walks),
        )  # fmt: skip
    from ..gpu.wtf import wtf as twin

    return twin(
        g,
        s,
        direction=direction,
        circle=circle,
        top=top,
        damping=damping,
        alpha=alpha,
        tol=tol,
        max_iter=max_iter,
        backend="gpu",
        method=method,
        epsilon=epsilon,
        walks=walks,
    )


def personalized_pagerank(
    g: Graph,
    seeds,
    *,
    direction: str = "follows",
    damping: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 100,
    backend: str = "auto",
    method: str = "exact",
    epsilon: float = DEFAULT_EPSILON,
    walks: float = DEFAULT_WALKS,
) -> PageRank:
    """The full PPR vector of each seed (k x n float64: mind the memory on a large graph); ``method`` as in
    :func:`wtf` (with ``push``, ``iterations`` counts the pushes and ``delta`` is the exact L1 error)."""
    s = check_wtf(g, seeds, direction=direction, damping=damping, tol=tol, max_iter=max_iter)
    n_walks = check_local(method, epsilon, walks)
    if resolve_backend(backend) != "gpu":
        if n_walks is not None:
            return personalized_pagerank_push(g, s, direction=direction, damping=damping,
                                              epsilon=push_epsilon(method, epsilon), walks=n_walks)  # fmt: skip
        return personalized_pagerank_cpu(g, s, direction=direction, damping=damping, tol=tol, max_iter=max_iter)
    from ..gpu.wtf import personalized_pagerank as twin

    return twin(g, s, direction=direction, damping=damping, tol=tol, max_iter=max_iter, backend="gpu",
                method=method, epsilon=epsilon, walks=walks)  # fmt: skip


# --------------------------------------------------------------------------------------------------------------
# PPR: the block power iteration
# --------------------------------------------------------------------------------------------------------------


class _Walk:
    """The walk in one direction, ready for the block iteration: the reverse CSR it pulls over, 1 / out-degree
    (0 for dangling accounts) and the dangling accounts. Built once per graph and direction (:func:`_walk`)."""

    def __init__(self, g: Graph, direction: str) -> None:
        (out_ptr, _), (in_ptr, in_idx) = walk_adjacency(g, direction)
        n = g.n_nodes
        out_deg = np.diff(out_ptr)
        self.n = n
        self.in_ptr, self.in_idx = in_ptr, in_idx
        self.inv_out = np.divide(1.0, out_deg, out=np.zeros(n), where=out_deg > 0)
        self.dangling = np.flatnonzero(out_deg == 0)
        self._scipy = None

    def pull(self, y: np.ndarray) -> np.ndarray:
        """Row v of the result: the sum of ``y``'s rows of v's in-neighbours, in index order, per column."""
        out = np.empty_like(y)
        if HAVE_NUMBA:
            # waking the threads costs milliseconds on a busy machine: small products run on one
            parallel = len(self.in_idx) * y.shape[1] >= _PARALLEL_WORK
            if y.shape[1] == 1:  # one seed (a page's panels): its own loop, 1.6-1.9x the block's on 1 or 16 cores
                (_pull_one_parallel if parallel else _pull_one_serial)(self.in_ptr, self.in_idx, y[:, 0], out[:, 0])
            else:
                (_pull_parallel if parallel else _pull_serial)(self.in_ptr, self.in_idx, y, out)
            return out
        if self._scipy is None:  # without numba the loop would run in Python: SciPy sums in the same order
            from scipy.sparse import csr_array

            self._scipy = csr_array((np.ones(len(self.in_idx)), self.in_idx, self.in_ptr), shape=(self.n, self.n))
        return self._scipy @ y


#: walks built per graph (weakly held: they go with the graph), so a worker's requests on one graph share them
_WALKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _walk(g: Graph, direction: str) -> _Walk:
    return per_graph(_WALKS, g, direction, _Walk)


#: terms (edges x columns) from which a product runs on all cores
_PARALLEL_WORK = 1 << 20


def _pull_rows(indptr, indices, y, out):
    """``out[v, c] = sum of y[u, c] over u in row v``, each row's terms added in index order (what SciPy's CSR
    product does too, so the two give the same bits). Measured against SciPy's product in benchmarks/wtf_cpu.md."""
    n, k = out.shape
    for v in prange(n):
        for c in range(k):
            out[v, c] = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            for c in range(k):
                out[v, c] += y[u, c]


def _pull_one(indptr, indices, y, out):
    """:func:`_pull_rows` for one column: the same terms in the same order, summed in a local variable. The
    two-dimensional loop adds into ``out`` in memory, and since ``out`` might alias ``y`` the compiled loop must
    store each partial sum before the next gather, so the gathers run one after the other; here they overlap
    (34.2M follows on one core: 75 ms against 125-144 ms an iteration, benchmarks/wtf_cpu.md)."""
    for v in prange(len(out)):
        s = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            s += y[indices[e]]
        out[v] = s


def _renamed(f, name: str):
    """``f``'s code as a function of another name: numba's on-disk cache names an entry by the function's
    qualified name and signature, not by its flags, so the serial and the parallel builds of one kernel need two
    names to be cached side by side (before, the serial one was compiled again by every process: 0.5 s of the
    first look-alike panel a web process computed, benchmarks/wtf_on_open.md)."""
    g = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    g.__qualname__ = name
    return g


_pull_parallel = njit(parallel=True)(_pull_rows)
_pull_serial = njit(_renamed(_pull_rows, "_pull_rows_serial"))
_pull_one_parallel = njit(parallel=True)(_pull_one)
_pull_one_serial = njit(_renamed(_pull_one, "_pull_one_serial"))


def _column_sums(block: np.ndarray) -> np.ndarray:
    """Per-column sums of an (r, k) block, each summed along a contiguous row of its transpose: the same
    (pairwise) order for any k, so a column's sum does not depend on its neighbours in the block."""
    return np.ascontiguousarray(block.T).sum(axis=1)


def _ppr_block(walk: _Walk, seeds: np.ndarray, damping: float, tol: float, max_iter: int):
    """PPR of a block of seeds: (x (n, k) float64, iterations, converged, delta)."""
    k = len(seeds)
    cols = np.arange(k)
    x = np.zeros((walk.n, k))
    x[seeds, cols] = 1.0
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.full(k, np.inf)
    active = cols
    while len(active):
        full = len(active) == k
        # the moving columns, C-ordered: a gather then reads one contiguous row (indexing columns gives F order)
        cur = x if full else np.ascontiguousarray(x[:, active])
        nxt = walk.pull(cur * walk.inv_out[:, None])
        lost = _column_sums(cur[walk.dangling]) if len(walk.dangling) else np.zeros(len(active))
        nxt *= damping
        nxt[seeds[active], np.arange(len(active))] += damping * lost + (1.0 - damping)
        change = _column_sums(np.abs(nxt - cur))
        if full:
            x = nxt
        else:
            x[:, active] = nxt
        iterations[active] += 1
        delta[active] = change
        done = change < tol
        converged[active[done]] = True
        active = active[~done & (iterations[active] < max_iter)]
    return x, iterations, converged, delta


#: seeds per block of the exact iteration on the CPU where the follows outweigh the block's own arrays
CPU_BLOCK = 4


def cpu_block(walk: _Walk) -> int:
    """Seeds per block of the CPU's exact iteration. A block of k seeds reads the follows once per iteration for
    all k, but its dense arrays (about ten passes of 8 n k bytes) leave the caches as k grows: where the follows
    (4 bytes each, 8 a row) take less than one seed's passes (80 n bytes), there is nothing to share and one
    seed at a time is fastest; elsewhere 4 (``benchmarks/wtf_cpu.md``, 2026-12-07: on the project's 2-core
    machine, Twitter16's follower graph 0.19 s a seed at 1 against 1.33 s at 64; the `twitter` preset at scale 0.1
    0.31 s at 4 against 0.63 s at 64). A seed's bits do not depend on its block."""
    return 1 if 4 * len(walk.in_idx) + 8 * walk.n < 80 * walk.n else CPU_BLOCK


def personalized_pagerank_cpu(
    g: Graph, seeds: np.ndarray, *, direction: str, damping: float, tol: float, max_iter: int
) -> PageRank:
    walk = _walk(g, direction)
    k = len(seeds)
    values = np.zeros((k, g.n_nodes))
    iterations = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=bool)
    delta = np.zeros(k)
    width = cpu_block(walk)
    for lo in range(0, k, width):
        hi = lo + width
        x, it, conv, d = _ppr_block(walk, seeds[lo:hi], damping, tol, max_iter)
        values[lo:hi] = x.T
        iterations[lo:hi], converged[lo:hi], delta[lo:hi] = it, conv, d
    return PageRank(seeds.astype(np.int64), values, iterations, converged, delta)


def _circle_candidates(x: np.ndarray, seed: int, circle: int, among: np.ndarray | None = None) -> np.ndarray:
    """Nodes whose PPR reaches the (circle - 1)-th largest non-seed value, less the ranking's slack (ties and
    near-ties all kept), seed excluded. ``among``: the only nodes that can be positive (a local method's
    touched accounts), so the whole vector is not scanned."""
    pos = np.flatnonzero(x > 0) if among is None else np.sort(among[x[among] > 0])
    pos = pos[pos != seed]
    want = circle - 1
    if len(pos) <= want:
        return pos
    if want == 0:
        return pos[:0]
    vals = x[pos]
    kth = np.partition(vals, len(vals) - want)[len(vals) - want]
    return pos[vals >= kth * (1.0 - RANK_SLACK)]


# --------------------------------------------------------------------------------------------------------------
# Money
# --------------------------------------------------------------------------------------------------------------


def money(
    g: Graph,
    seed: int,
    circle,
    *,
    direction: str = "follows",
    alpha: float = 0.15,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> MoneyScores:
    """Money on the bipartite graph of ``circle`` (hubs, must hold ``seed``) and the accounts they point to in
    ``direction`` (authorities), the corrected Algorithm 2: from sim = e_seed, each iteration

    ``rel(y) = sum_{(x,y)} sim(x) / d_out(x)``, ``sim(x) = alpha [x = seed] + (1 - alpha) sum_{(x,y)} rel(y) / d_in(y)``

    with d_out a hub's out-degree in ``direction`` (all its edges are in the bipartite graph) and d_in the number of
    hubs pointing to an authority. Stops when the L1 change of sim is < ``tol`` or after ``max_iter``; the
    relevance returned is the one the last iteration computed (from the similarity before it), as in the paper."""
    check_wtf(g, [seed], direction=direction, damping=0.5, tol=tol, max_iter=max_iter, alpha=alpha)
    hubs = unique(np.asarray(circle, dtype=np.int64))
    if not len(hubs) or hubs[0] < 0 or hubs[-1] >= g.n_nodes:
        raise ValueError(f"circle must be node indices 0..{g.n_nodes - 1}")
    pos = np.searchsorted(hubs, seed)
    if pos >= len(hubs) or hubs[pos] != seed:
        raise ValueError("circle must contain the seed")
    return _money(g, int(seed), hubs, direction, alpha, tol, max_iter)


def _money(g: Graph, seed: int, hubs: np.ndarray, direction: str, alpha: float, tol: float, max_iter: int):
    from scipy.sparse import csr_array

    (out_ptr, out_idx), _ = walk_adjacency(g, direction)
    starts, ends = out_ptr[hubs], out_ptr[hubs + 1]
    d_out = (ends - starts).astype(np.int64)
    row_ptr = np.zeros(len(hubs) + 1, dtype=np.int64)
    np.cumsum(d_out, out=row_ptr[1:])
    # the hubs' rows, concatenated: one gather through a flat index of their edge positions
    edge_pos = np.repeat(starts - row_ptr[:-1], d_out) + np.arange(row_ptr[-1])
    targets = out_idx[edge_pos].astype(np.int64)
    authorities, col = np.unique(targets, return_inverse=True)
    d_in = np.bincount(col, minlength=len(authorities)).astype(np.float64)
    b = csr_array((np.ones(len(col)), col, row_ptr), shape=(len(hubs), len(authorities)))
    bt = b.T.tocsr()  # authorities' rows: the relevance step is a row sum too
    inv_out = np.divide(1.0, d_out, out=np.zeros(len(hubs)), where=d_out > 0)
    inv_in = np.divide(1.0, d_in, out=np.zeros(len(d_in)), where=d_in > 0)
    s = int(np.searchsorted(hubs, seed))
    sim = np.zeros(len(hubs))
    sim[s] = 1.0
    rel = np.zeros(len(authorities))
    iterations, converged = 0, False
    while iterations < max_iter and not converged:
        rel = bt @ (sim * inv_out)
        new = b @ (rel * inv_in)
        new *= 1.0 - alpha
        new[s] += alpha
        change = float(np.abs(new - sim).sum())
        sim = new
        iterations += 1
        converged = change < tol
    return MoneyScores(hubs, sim, authorities, rel, iterations, converged)


# --------------------------------------------------------------------------------------------------------------
# The whole pipeline, per block of seeds
# --------------------------------------------------------------------------------------------------------------


def wtf_cpu(
    g: Graph,
    seeds: np.ndarray,
    *,
    direction: str,
    circle: int,
    top: int,
    damping: float,
    alpha: float,
    tol: float,
    max_iter: int,
    local: tuple[float, float] | None = None,
) -> list[Recommendations]:
    """The CPU pipeline. ``local``: ``(epsilon, walks)`` for the local estimate (:mod:`compute.algorithms.wtf_push`:
    the push, then ``walks`` per unit of residual if > 0), one seed at a time, whose PPR iterations are the pushes,
    ``converged`` True and change the residual the push left; None for the exact block iteration."""
    out: list[Recommendations] = []
    if local is not None:
        st = push_state(g, direction)
        for seed in seeds.tolist():
            touched, pushes, residual = st.run(seed, damping, *local)
            try:  # the estimate is read here, before the clear
                stats = (pushes, True, residual)
                out.append(_recommend(g, seed, st.p, touched, stats, direction, circle, top, alpha, tol, max_iter))
            finally:
                st.clear(touched)
        return out
    walk = _walk(g, direction)
    width = cpu_block(walk)
    for lo in range(0, len(seeds), width):
        block = seeds[lo : lo + width]
        x, iterations, converged, delta = _ppr_block(walk, block, damping, tol, max_iter)
        for j, seed in enumerate(block.tolist()):
            col = np.ascontiguousarray(x[:, j])
            stats = (iterations[j], converged[j], delta[j])
            out.append(_recommend(g, seed, col, None, stats, direction, circle, top, alpha, tol, max_iter))
    return out


def _recommend(g, seed, col, among, ppr_stats, direction, circle, top, alpha, tol, max_iter) -> Recommendations:
    """One seed's lists from its PPR vector ``col`` (``among``: the only accounts where it can be positive, or
    None): the circle of trust, Money on it, and the two top lists."""
    (out_ptr, out_idx), _ = walk_adjacency(g, direction)
    cand = _circle_candidates(col, seed, circle, among=among)
    members, ppr = circle_of_trust(cand, col[cand], seed, col[seed], circle)
    scores = _money(g, seed, np.sort(members), direction, alpha, tol, max_iter)
    return recommendations(
        g,
        seed=seed,
        direction=direction,
        ppr_stats=ppr_stats,
        circle=(members, ppr),
        money=scores,
        linked=out_idx[out_ptr[seed] : out_ptr[seed + 1]],
        top=top,
        ppr_of=col.__getitem__,
    )
