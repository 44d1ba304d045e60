"""Invariants of the measure on generated cascades over a random follower graph (docs/measure.md)."""

from __future__ import annotations

import numpy as np

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.build import build_cascades
from compute.structures import FollowerGraph
from compute.tables import TweetTable


def _random_collection(seed: int, n_users=300, n_follows=4000, n_casc=60):
    rng = np.random.default_rng(seed)
    g = FollowerGraph.from_edges(rng.integers(0, n_users, n_follows), rng.integers(0, n_users, n_follows))
    rows = []
    for t in range(n_casc):
        pub = int(rng.integers(0, n_users))
        rows.append((10_000 + t, None, pub, 0.0, float(rng.integers(0, 500))))
        for u in rng.choice(n_users, int(rng.integers(0, 40)), replace=False):
            rows.append((0, 10_000 + t, int(u), float(rng.integers(0, 50)), float(rng.integers(0, 500))))
    c, _ = build_cascades(TweetTable.from_rows(rows))
    return c, g


def _reaches_publisher(n, src, dst, pub):
    """Local nodes that reach ``pub`` along spreading edges."""
    rev = {}
    for s, d in zip(src, dst):
        rev.setdefault(d, []).append(s)
    seen, stack = {pub}, [pub]
    while stack:
        for s in rev.get(stack.pop(), ()):
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def test_it_gives_the_publisher_the_followers_of_everyone_who_reaches_it(backend):
    for orphans in ("strict", "attach"):
        c, g = _random_collection(1)
        sg = forward(c, g, orphans=orphans, backend=backend)
        infl = backward(sg, backend=backend).influence
        for t in range(c.n_cascades):
            s, d = sg.edges_of(t)
            reach = _reaches_publisher(None, s.tolist(), d.tolist(), int(c.publisher[t]))
            assert np.isclose(infl[c.publisher[t]], c.followers[list(reach)].sum(), rtol=1e-12)


def test_it_never_gives_anyone_less_than_their_own_followers(backend):
    c, g = _random_collection(2)
    infl = backward(forward(c, g, backend=backend), backend=backend).influence
    assert np.all(infl >= c.followers)


def test_it_gives_orphans_no_edges_under_strict(backend):
    c, g = _random_collection(3)
    sg = forward(c, g, orphans="strict", backend=backend)
    for t in range(c.n_cascades):
        s, d = sg.edges_of(t)
        reach = _reaches_publisher(None, s.tolist(), d.tolist(), int(c.publisher[t]))
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        orphans = set(range(lo, hi)) - reach
        assert not orphans & (set(s.tolist()) | set(d.tolist()))


def test_it_makes_every_edge_go_back_in_time(backend):
    c, g = _random_collection(4)
    sg = forward(c, g, orphans="strict", backend=backend)
    assert np.all(c.times[sg.edge_src] > c.times[sg.edge_dst])
