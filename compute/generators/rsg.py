"""Random spreading graphs: the thesis' Algorithm 10 (Lindberg 2020, §7.1.2) and the calibrated ``rsg`` preset.

Algorithm 10 draws a graph of ``n`` nodes (``n`` uniform in ``[lo, hi]``): every node ``u < n-1`` is an
*outlier* with probability 5% and then has an edge to every ``v > u``; otherwise it gets each edge ``u -> v``
(``v > u``) independently with probability ``percent``. Finally every ``u < n-1`` left without an out-edge
gets the edge ``u -> n-1``, so ``n-1`` (the publisher) is the only sink and everything reaches it.

Edges are stored ``edge_src = u, edge_dst = v``: ``v`` receives ``u``'s share, i.e. ``u`` retweeted later
than ``v``. Times therefore *decrease* with the node index: the publisher ``n-1`` has time 0 and node ``u``
is later than every node above it. Within a graph the edges are sorted by ``(src, dst)``.

The Bernoulli edges are drawn by geometric skipping over the upper-triangle index space (one geometric gap
per generated edge rather than one uniform per candidate pair), so the 450M-edge full preset costs about as
many random numbers as it has non-outlier edges.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import _jit
from ..structures import Cascades, SpreadingGraphs
from ._common import ProgressFn, make_progress, next_prime, scaled_counts, snowflake_ids, stream

__all__ = ["Batch", "RSG_BATCHES", "RSG_USERS", "OUTLIER_PROBABILITY", "generate_n_dags", "rsg", "algorithm10_graph"]

#: Chance that a node is an outlier (edges to every later-indexed node), as in the thesis.
OUTLIER_PROBABILITY = 0.05

#: Users in the RSG pool (Table 7.1: U = 29.7K); a graph's nodes are distinct users of the pool.
RSG_USERS = 29_700


@dataclass(frozen=True)
class Batch:
    """``count`` graphs with ``n`` uniform in ``[lo, hi]`` and edge probability ``percent`` (a fraction)."""

    count: int
    lo: int
    hi: int
    percent: float

    @property
    def size_class(self) -> str:
        return size_class(self.hi)


def size_class(n: int) -> str:
    """Thesis Table 6.1: Empty n<=1, Small 1<n<=32, Medium 32<n<=1024, Large n>1024."""
    return "empty" if n <= 1 else "small" if n <= 32 else "medium" if n <= 1024 else "large"


# Calibrated so that the preset matches Table 7.1 / 7.3 (docs/generators.md shows the arithmetic):
# * class counts are exact (170 / 5250 / 9845 / 170) because no batch straddles a class boundary;
# * median n = 74: 2,300 of the 9,845 Medium graphs have n <= 74, which puts graph 7,718 (of 15,435) at ~74;
# * median m = 262: the n~74 graphs use percent 4%, where E[m | n=74] = (0.05 + 0.95*0.04)*74*73/2 + ~20
#   sink edges ~ 260;
# * max n / max m: one graph with n in [29000, 29700] at 4.46% gives ~29.4K nodes and ~40M edges;
# * M = 450M: almost all edges sit in the Large graphs, E[m | n] ~ (0.05 + 0.95 p) n^2 / 2; the Large batches
#   use narrow n ranges so the total varies by only ~2.5% (1 sd) from seed to seed;
# * N = 2.9M: the Medium graphs are mostly small (mean ~215) because the Large ones already hold ~0.7M nodes.
RSG_BATCHES: tuple[Batch, ...] = (
    Batch(170, 1, 1, 0.10),
    Batch(5250, 2, 32, 0.10),
    Batch(2300, 33, 74, 0.04),
    Batch(5200, 75, 200, 0.04),
    Batch(2345, 200, 920, 0.08),
    Batch(80, 1025, 2000, 0.10),
    Batch(40, 2000, 4000, 0.12),
    Batch(25, 4000, 7000, 0.14),
    Batch(15, 7000, 10000, 0.14),
    Batch(6, 10000, 14000, 0.12),
    Batch(3, 14000, 20000, 0.10),
    Batch(1, 29000, 29700, 0.0446),
)


def _bernoulli_positions(length: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions in ``[0, length)`` each kept independently with probability ``p`` (geometric skipping)."""
    if length <= 0 or p <= 0:
        return np.zeros(0, dtype=np.int64)
    parts = []
    start = -1  # position of the last kept element so far
    expect = p * length
    block = int(expect + 6.0 * np.sqrt(expect * (1.0 - p)) + 16)
    while True:
        gaps = rng.geometric(p, size=block)
        pos = np.cumsum(gaps, dtype=np.int64)
        pos += start
        if pos[-1] >= length:
            parts.append(pos[: np.searchsorted(pos, length)])
            break
        parts.append(pos)
        start = int(pos[-1])
        block = max(block // 4, 1024)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def algorithm10_graph(
    n: int, p: float, rng: np.random.Generator, outlier_probability: float = OUTLIER_PROBABILITY
) -> tuple[np.ndarray, np.ndarray]:
    """One graph of Algorithm 10: ``(out_degree int64[n], dst int32[m])`` with local node indices.

    Edges are grouped by source in increasing order (the source of edge ``k`` is implied by the out-degrees)
    and sorted by destination within a source; the sink ``n-1`` has out-degree 0.
    """
    if n <= 1:
        return np.zeros(max(n, 0), dtype=np.int64), np.zeros(0, dtype=np.int32)
    k = n - 1  # rows u = 0..n-2 can have out-edges
    outlier = rng.random(k) < outlier_probability
    row_len = np.arange(k, 0, -1, dtype=np.int64)  # n-1-u candidates v = u+1..n-1
    row_start = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(row_len, out=row_start[1:])
    pos = _bernoulli_positions(int(row_start[-1]), p, rng)
    cnt = np.diff(np.searchsorted(pos, row_start))  # sampled edges per row
    deg = np.where(outlier, row_len, np.maximum(cnt, 1))
    out_off = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(deg, out=out_off[1:])
    dst = np.empty(int(out_off[-1]), dtype=np.int32)
    if _jit.HAVE_NUMBA:  # looked up per call so tests can force the NumPy path
        _fill_rows_jit(n, pos, row_start, outlier, out_off, dst)
    else:
        _fill_rows_numpy(n, pos, row_start, outlier, cnt, out_off, dst)
    out_degree = np.zeros(n, dtype=np.int64)
    out_degree[:k] = deg
    return out_degree, dst


def _fill_rows_numpy(
    n: int,
    pos: np.ndarray,
    row_start: np.ndarray,
    outlier: np.ndarray,
    cnt: np.ndarray,
    out_off: np.ndarray,
    dst: np.ndarray,
) -> None:
    """Write every row's destinations into ``dst`` (vectorised twin of :func:`_fill_rows`)."""
    k = n - 1
    rows = np.arange(k, dtype=np.int64)
    if len(pos):
        # sample i of row u lands at out_off[u] + (i - first sample of u). Samples of outlier rows are written
        # too (inside their own row's range, as cnt <= row length) and then overwritten below: cheaper than a mask.
        cnt_off = np.zeros(k, dtype=np.int64)
        np.cumsum(cnt[:-1], out=cnt_off[1:])
        idx = np.arange(len(pos), dtype=np.int64)
        idx += np.repeat(out_off[:-1] - cnt_off, cnt)
        dst[idx] = pos + np.repeat(rows + 1 - row_start[:-1], cnt)
    if outlier.any():
        rows_o = rows[outlier]
        lens = (n - 1) - rows_o
        excl = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=excl[1:])
        run = np.arange(int(lens.sum()), dtype=np.int64)
        dst[np.repeat(out_off[rows_o] - excl, lens) + run] = np.repeat(rows_o + 1 - excl, lens) + run
    sinks = rows[~outlier & (cnt == 0)]
    dst[out_off[sinks]] = n - 1


def _fill_rows(
    n: int, pos: np.ndarray, row_start: np.ndarray, outlier: np.ndarray, out_off: np.ndarray, dst: np.ndarray
) -> None:
    """One sequential pass over the rows: outlier rows get every later node, others their sampled edges or
    the sink. Same output as :func:`_fill_rows_numpy`; compiled with numba when present."""
    i = 0
    npos = len(pos)
    for u in range(n - 1):
        end = row_start[u + 1]
        o = out_off[u]
        if outlier[u]:
            for v in range(u + 1, n):
                dst[o] = v
                o += 1
            while i < npos and pos[i] < end:
                i += 1
        else:
            first = i
            base = u + 1 - row_start[u]
            while i < npos and pos[i] < end:
                dst[o] = pos[i] + base
                o += 1
                i += 1
            if i == first:
                dst[o] = n - 1


_fill_rows_jit = _jit.njit(_fill_rows)


@dataclass
class _Graph:
    n: int
    out_degree: np.ndarray
    dst: np.ndarray
    users: np.ndarray  # indices into the user pool
    times: np.ndarray


def _make_graph(seed: int, preset: str, b: int, j: int, batch: Batch, pool: int) -> _Graph:
    rng = stream(seed, preset, b, j)
    n = int(rng.integers(batch.lo, batch.hi + 1))
    out_degree, dst = algorithm10_graph(n, batch.percent, rng)
    # distinct users within the graph: an affine walk modulo the (prime) pool size never repeats in < pool steps
    a = int(rng.integers(0, pool))
    step = int(rng.integers(1, pool))
    users = (a + step * np.arange(n, dtype=np.int64)) % pool
    # the publisher (n-1) is earliest; every lower index is later than all above it (>= 1 s apart)
    gaps = 1.0 + np.floor(rng.lognormal(np.log(60.0), 1.5, size=n))
    gaps[-1] = 0.0
    times = np.cumsum(gaps[::-1])[::-1].copy()
    return _Graph(n, out_degree, dst, users, times)


def _assemble(
    seed: int,
    preset: str,
    batches: tuple[Batch, ...],
    scale: float,
    pool_size: int,
    make,
    progress: ProgressFn,
    threads: int | None = None,
    publisher_first: bool = False,
) -> SpreadingGraphs:
    """Generate every graph (thread pool), shuffle graph order, and lay them out as flat arrays.

    The publisher is each graph's last node (Algorithm 10) or, with ``publisher_first``, its first node.
    """
    counts = scaled_counts([bt.count for bt in batches], [bt.size_class for bt in batches], scale)
    jobs = [(b, j) for b, c in enumerate(counts) for j in range(c)]
    if not jobs:
        raise ValueError(f"scale={scale} leaves no graph in preset {preset!r}")
    max_n = max(batches[b].hi for b, c in enumerate(counts) if c)
    pool = next_prime(max(pool_size, max_n))
    # biggest graphs first so the two threads finish together; results are placed by job index
    order = sorted(range(len(jobs)), key=lambda i: -batches[jobs[i][0]].hi)
    graphs: list[_Graph | None] = [None] * len(jobs)
    weight = np.array([float(batches[b].hi) ** 2 + 64 for b, _ in jobs])
    done_w, total_w = 0.0, float(weight.sum())
    progress(f"{preset}: graphs", 0.0)
    workers = threads or min(2, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futs = {i: ex.submit(make, seed, preset, *jobs[i], batches[jobs[i][0]], pool) for i in order}
        for i in order:
            graphs[i] = futs[i].result()
            done_w += weight[i]
            progress(f"{preset}: graphs", done_w / total_w)

    # the user pool (ids, follower counts) has its own stream so a user looks the same at every scale
    pool_rng = stream(seed, preset, 1_000_000, 1)
    pool_ids = _pool_user_ids(pool, pool_rng)
    # heavy-tailed follower counts, one per pool user (the same user has the same count in every graph)
    pool_followers = np.floor(pool_rng.lognormal(np.log(120.0), 1.8, size=pool))
    rng = stream(seed, preset, 1_000_000, 0)  # layout stream: graph order, tweet ids
    perm = rng.permutation(len(graphs))  # a real collection is not sorted by size class
    graphs = [graphs[i] for i in perm]
    t = len(graphs)
    sizes = np.array([g.n for g in graphs], dtype=np.int64)
    node_offsets = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_offsets[1:])
    n_nodes = int(node_offsets[-1])
    idx_dtype = np.int32 if n_nodes < 2**31 else np.int64
    out_degree = np.concatenate([g.out_degree for g in graphs])
    edge_counts = np.array([len(g.dst) for g in graphs], dtype=np.int64)
    edge_offsets = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(edge_counts, out=edge_offsets[1:])
    progress(f"{preset}: layout", 0.0)
    # edges are grouped by source node in node order, so the global sources are a repeat of the node index
    edge_src = np.repeat(np.arange(n_nodes, dtype=idx_dtype), out_degree)
    edge_dst = np.empty(int(edge_offsets[-1]), dtype=idx_dtype)
    for k, g in enumerate(graphs):
        # an offset of the output dtype keeps the add in int32 (a mixed int64 add casts through a slow buffer)
        np.add(g.dst, idx_dtype(node_offsets[k]), out=edge_dst[edge_offsets[k] : edge_offsets[k + 1]])
        g.dst = None  # type: ignore[assignment]  # free as we go: the per-graph copies are half the peak
    progress(f"{preset}: layout", 0.5)

    users = np.concatenate([g.users for g in graphs])
    user_ids = pool_ids[users]
    followers = pool_followers[users]
    del users
    times = np.concatenate([g.times for g in graphs])
    publisher = node_offsets[:-1].copy() if publisher_first else node_offsets[1:] - 1
    # tweets published over 30 days of 2020; the node times are relative to their publisher (time 0)
    t0_ms = 1_590_969_600_000 + rng.integers(0, 30 * 86_400_000, size=t, dtype=np.int64)
    tweet_ids = snowflake_ids(t0_ms, rng)
    cascades = Cascades(
        node_offsets=node_offsets,
        user_ids=user_ids,
        followers=followers,
        publisher=publisher,
        tweet_ids=tweet_ids,
        times=times,
    )
    progress(f"{preset}: layout", 1.0)
    return SpreadingGraphs(cascades, edge_offsets, edge_src, edge_dst, orphans="given")


def _pool_user_ids(pool: int, rng: np.random.Generator) -> np.ndarray:
    """``pool`` distinct user ids in random order."""
    ids = 10_000 + np.cumsum(rng.integers(1, 200_000, size=pool, dtype=np.int64))
    return ids[rng.permutation(pool)]


def rsg(*, scale: float = 1.0, seed: int = 0, progress: ProgressFn | bool | None = None) -> SpreadingGraphs:
    """The ``rsg`` preset: the thesis' RSG dataset (Table 7.1) from :data:`RSG_BATCHES`."""
    return _assemble(seed, "rsg", RSG_BATCHES, scale, RSG_USERS, _make_graph, make_progress(progress))


def generate_n_dags(
    count: int, lo: int, hi: int, percent: float, *, seed: int = 0, users: int | None = None
) -> SpreadingGraphs:
    """Algorithm 10 itself: ``GENERATE_N_DAGS(count, lo, hi, percent)`` as one batch (no shuffling by class).

    ``percent`` is a probability in [0, 1] (0.02 for the thesis' "2%"). ``users`` is the size of the user pool
    (default: ``hi``, so user ids within a graph are distinct).
    """
    if not 1 <= lo <= hi:
        raise ValueError(f"need 1 <= lo <= hi, got lo={lo}, hi={hi}")
    if not 0.0 <= percent <= 1.0:
        raise ValueError(f"percent is a probability in [0, 1], not {percent}")
    batch = Batch(int(count), int(lo), int(hi), float(percent))
    return _assemble(seed, "dags", (batch,), 1.0, users or hi, _make_graph, make_progress(None), threads=1)
