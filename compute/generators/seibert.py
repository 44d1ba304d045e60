"""The ``seibert`` preset: small, real-looking spreading DAGs shaped like the thesis' Seibert set (Table 7.1).

Model (per cascade): the publisher is node 0 and retweeters follow in time order (node ``i`` retweeted after
every node ``< i``, at least 1 s later). Retweeter ``i`` gets one edge to an earlier node: the publisher with
probability 60%, otherwise a uniformly chosen earlier node, which gives the shallow star-ish trees real
cascades have. Most cascades then get almost no extra edges (rate 0.5% per retweeter); 1.5% of them are
"dense" (a retweeter following several earlier participants) with 0.5 to 2.2 extra edges per retweeter
(Poisson, distinct earlier nodes). Every node reaches the publisher through its first edge, so each graph is
a DAG whose only sink is the publisher. Unlike ``rsg``, times *increase* with the node index here.

Sizes: the class counts of Table 7.3 (764 with n = 1, 1,870 Small, 506 Medium) and within a class
``P(n) ∝ exp(-n / decay)`` over the class's range, with ``decay`` fitted to the Seibert mean (16) and median
(12) of n. The real set's cycles are not reproduced (our graphs are DAGs by construction).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..structures import SpreadingGraphs
from ._common import ProgressFn, make_progress, stream
from .rsg import _assemble, _Graph, size_class

__all__ = ["SeibertBatch", "SEIBERT_BATCHES", "SEIBERT_USERS", "seibert"]

#: Users in the Seibert pool (Table 7.1: U = 14K).
SEIBERT_USERS = 14_000

_PUBLISHER_PREFERENCE = 0.6
_DENSE_FRACTION = 0.015
_BASE_EXTRA_RATE = 0.005


@dataclass(frozen=True)
class SeibertBatch:
    """``count`` graphs with ``n`` in ``[lo, hi]``, ``P(n) ∝ exp(-n / decay)``."""

    count: int
    lo: int
    hi: int
    decay: float

    @property
    def size_class(self) -> str:
        return size_class(self.hi)


SEIBERT_BATCHES: tuple[SeibertBatch, ...] = (
    SeibertBatch(764, 1, 1, 1.0),
    SeibertBatch(1870, 2, 32, 40.0),  # mean 15.0, P(n <= 12) = 0.45 -> overall median 12
    SeibertBatch(506, 33, 49, 15.0),  # mean 39.4
)


def _make_seibert_graph(seed: int, preset: str, b: int, j: int, batch: SeibertBatch, pool: int) -> _Graph:
    rng = stream(seed, preset, b, j)
    sizes = np.arange(batch.lo, batch.hi + 1)
    w = np.exp(-(sizes - batch.lo) / batch.decay)
    n = int(sizes[np.searchsorted(np.cumsum(w), rng.random() * w.sum(), side="right").clip(0, len(sizes) - 1)])
    a = int(rng.integers(0, pool))
    step = int(rng.integers(1, pool))
    users = (a + step * np.arange(n, dtype=np.int64)) % pool
    gaps = 1.0 + np.floor(rng.lognormal(np.log(300.0), 1.6, size=n))
    gaps[0] = 0.0
    times = np.cumsum(gaps)
    if n <= 1:
        return _Graph(n, np.zeros(n, dtype=np.int64), np.zeros(0, dtype=np.int32), users, times)

    i = np.arange(1, n)
    # first edge: the publisher, or any earlier node (which may again be the publisher)
    parent = np.where(rng.random(n - 1) < _PUBLISHER_PREFERENCE, 0, np.floor(rng.random(n - 1) * i).astype(np.int64))
    rate = rng.uniform(0.5, 2.2) if rng.random() < _DENSE_FRACTION else _BASE_EXTRA_RATE
    extra = np.minimum(rng.poisson(rate, size=n - 1), i - 1)  # i-1 earlier nodes besides the parent
    adj = np.zeros((n, n), dtype=bool)  # adj[i, j]: edge i -> j (j earlier)
    adj[i, parent] = True
    if extra.any():
        # the `extra` earlier non-parent nodes with the smallest random keys
        key = rng.random((n, n))
        key[np.triu_indices(n)] = np.inf  # only j < i
        key[i, parent] = np.inf
        ranks = np.argsort(np.argsort(key, axis=1), axis=1)
        e = np.zeros(n, dtype=np.int64)
        e[1:] = extra
        adj |= ranks < e[:, None]
    src, dst = np.nonzero(adj)  # row-major: sorted by (src, dst)
    out_degree = np.bincount(src, minlength=n).astype(np.int64)
    return _Graph(n, out_degree, dst.astype(np.int32), users, times)


def seibert(*, scale: float = 1.0, seed: int = 0, progress: ProgressFn | bool | None = None) -> SpreadingGraphs:
    """The ``seibert`` preset (3,140 graphs at scale 1)."""
    return _assemble(
        seed,
        "seibert",
        SEIBERT_BATCHES,
        scale,
        SEIBERT_USERS,
        _make_seibert_graph,
        make_progress(progress),
        threads=1,  # 3,140 tiny graphs: thread hand-offs would cost more than they save
        publisher_first=True,
    )
