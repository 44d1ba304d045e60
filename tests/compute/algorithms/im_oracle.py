"""Exact Independent Cascade spreads by enumerating every live-edge world of a tiny graph (the oracle of the
influence-maximisation tests), and random tiny follower graphs to run it on."""

from __future__ import annotations

import itertools

import numpy as np

from compute.graphs import Graph, graph_from_edges


def tiny_graph(rng: np.random.Generator, n: int, m: int) -> Graph:
    """A random follower graph on ids 1..n with at most ``m`` distinct edges (no self follows)."""
    pairs = set()
    while len(pairs) < m:
        a, b = (int(x) for x in rng.integers(1, n + 1, 2))
        if a != b:
            pairs.add((a, b))
    src, dst = zip(*sorted(pairs))
    return graph_from_edges(src, dst, ids=np.arange(1, n + 1))


def reach_worlds(g: Graph, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probability of each of the 2^m worlds, reach bitmask int64[worlds, n]): node v's bit set in u's mask
    when u activates v in that world (influence: followee -> follower, along the live edges)."""
    n, m = g.n_nodes, g.n_edges
    assert m <= 18 and n <= 62
    src, dst = g.edges()  # follower -> followee; influence dst -> src
    worlds = np.arange(2**m, dtype=np.int64)
    live = (worlds[:, None] >> np.arange(m)) & 1  # [W, m]
    prob = np.prod(np.where(live == 1, probs, 1.0 - probs), axis=1)
    reach = np.broadcast_to(np.int64(1) << np.arange(n, dtype=np.int64), (len(worlds), n)).copy()
    for _ in range(n):  # closure: n rounds of "u reaches what its live followers reach"
        for e in range(m):
            u, f = int(dst[e]), int(src[e])
            on = live[:, e] == 1
            reach[on, u] |= reach[on, f]
    return prob, reach


def exact_spread(prob: np.ndarray, reach: np.ndarray, seeds, weights: np.ndarray) -> float:
    mask = np.zeros(len(prob), dtype=np.int64)
    for s in seeds:
        mask |= reach[:, s]
    n = reach.shape[1]
    bits = (mask[:, None] >> np.arange(n)) & 1
    return float(prob @ (bits @ weights))


def best_seed_set(prob, reach, k: int, weights) -> tuple[float, tuple]:
    n = reach.shape[1]
    best = (-1.0, ())
    for s in itertools.combinations(range(n), k):
        v = exact_spread(prob, reach, s, weights)
        if v > best[0] + 1e-12:
            best = (v, s)
    return best
