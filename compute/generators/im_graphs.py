"""Follower graphs of the sizes IMGPU was measured on (Liu et al., Table 1), for the influence-maximisation
benchmarks: NetHEPT-like (15,233 nodes / 32,235 edges), NetPHY-like (37,154 / 180,826), Amazon-like
(262,111 / 1,234,877) and Twitter-like (11,316,811 / 85,331,846).

Directed Chung–Lu: each edge picks its follower with probability proportional to a lognormal activity weight
(sigma 1.0) and its followee proportional to a Zipf weight ``1 / (rank + 10)^0.9`` over a random ranking, so
follower counts are heavy-tailed (a few accounts followed by thousands) while followee counts stay moderate, as
on Twitter. Draws are deduplicated and self follows dropped, then topped up or cut at random so the graph has
exactly the preset's number of distinct edges. Not the real graphs (which we do not ship): their degree shapes
are what the spreads depend on most, and the benchmarks say so.
"""

from __future__ import annotations

import numpy as np

from ..arrays import unique
from ..graphs import Graph

__all__ = ["PAPER_GRAPHS", "paper_graph"]

PAPER_GRAPHS = {
    "nethept": (15_233, 32_235),
    "netphy": (37_154, 180_826),
    "amazon": (262_111, 1_234_877),
    "twitter": (11_316_811, 85_331_846),
}


def paper_graph(name: str, *, seed: int = 0, scale: float = 1.0) -> Graph:
    """The preset ``name`` of :data:`PAPER_GRAPHS` (nodes and edges times ``scale``) as a follower graph (edge
    follower -> followee, ids 1..n)."""
    if name not in PAPER_GRAPHS:
        raise ValueError(f"name must be one of {', '.join(PAPER_GRAPHS)}, not {name!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, not {scale!r}")
    n0, m0 = PAPER_GRAPHS[name]
    n = max(2, round(n0 * scale))
    m = min(round(m0 * scale), n * (n - 1))
    rng = np.random.default_rng([seed, n, m])
    out_w = np.cumsum(rng.lognormal(0.0, 1.0, n))
    rank = rng.permutation(n)
    in_w = np.cumsum(1.0 / (rank + 10.0) ** 0.9)
    keys = np.zeros(0, dtype=np.int64)
    while len(keys) < m:
        want = int((m - len(keys)) * 1.1) + 16
        a = np.searchsorted(out_w, rng.random(want) * out_w[-1], side="right")
        b = np.searchsorted(in_w, rng.random(want) * in_w[-1], side="right")
        a = np.minimum(a, n - 1)
        b = np.minimum(b, n - 1)
        keep = a != b
        keys = unique(np.concatenate([keys, a[keep] * n + b[keep]]))
    if len(keys) > m:
        keys = np.sort(rng.choice(keys, size=m, replace=False))
    src = keys // n
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return Graph(np.arange(1, n + 1, dtype=np.int64), indptr, (keys - src * n).astype(np.int32))
