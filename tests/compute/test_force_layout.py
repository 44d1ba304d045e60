"""The Network pages' force layout (compute.drawing.force_layout): the same graph always gets the same picture,
no two nodes on one spot, neighbours nearer than strangers, two communities joined by one edge drawn apart, and
separate components kept on one screen."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

from compute.drawing import force_layout


def _cliques(k: int, size: int) -> tuple[int, np.ndarray, np.ndarray]:
    """``k`` cliques of ``size`` nodes, clique i joined to clique i + 1 by one edge."""
    src, dst = [], []
    for c in range(k):
        base = c * size
        for i in range(size):
            for j in range(i + 1, size):
                src.append(base + i)
                dst.append(base + j)
        if c + 1 < k:
            src.append(base)
            dst.append(base + size)
    return k * size, np.array(src), np.array(dst)


def _preferential(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(1, n), 2)
    dst = np.array([int(rng.integers(0, v)) for v in src])
    return src, dst


def test_it_gives_the_same_picture_for_the_same_graph_whichever_way_the_edges_point():
    src, dst = _preferential(300)
    x1, y1 = force_layout(300, src, dst)
    x2, y2 = force_layout(300, src, dst)
    x3, y3 = force_layout(300, dst, src)
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert np.allclose(x1, x3) and np.allclose(y1, y3)
    # duplicates and self-loops change nothing either: one spring per pair
    x4, y4 = force_layout(300, np.r_[src, src, 5], np.r_[dst, dst, 5])
    assert np.allclose(x1, x4) and np.allclose(y1, y4)


@pytest.mark.parametrize("n", [2, 50, 800])
def test_no_two_nodes_share_a_spot_and_neighbours_are_nearer_than_strangers(n):
    src, dst = _preferential(n)
    x, y = force_layout(n, src, dst)
    assert np.isfinite(x).all() and np.isfinite(y).all()
    pts = np.c_[x, y]
    d, _ = cKDTree(pts).query(pts, k=2)
    assert d[:, 1].min() > 0.05, d[:, 1].min()
    if n > 2:
        edge = np.hypot(x[src] - x[dst], y[src] - y[dst]).mean()
        rng = np.random.default_rng(0)
        a, b = rng.integers(0, n, 5000), rng.integers(0, n, 5000)
        stranger = np.hypot(x[a] - x[b], y[a] - y[b])[a != b].mean()
        assert edge < 0.5 * stranger, (edge, stranger)


def test_two_communities_joined_by_one_edge_are_drawn_apart():
    n, src, dst = _cliques(2, 15)
    x, y = force_layout(n, src, dst)
    pts = np.c_[x, y]
    a, b = pts[:15], pts[15:]
    spread = max(np.linalg.norm(a - a.mean(0), axis=1).max(), np.linalg.norm(b - b.mean(0), axis=1).max())
    # every node nearer its own community's middle than the other's, and the middles further apart than a radius
    assert np.linalg.norm(a.mean(0) - b.mean(0)) > spread
    for own, other in ((a, b), (b, a)):
        assert (np.linalg.norm(own - own.mean(0), axis=1) < np.linalg.norm(own - other.mean(0), axis=1)).all()


def test_separate_components_stay_on_one_screen():
    # forty pairs and forty lone accounts: repulsion alone would push them ever further out
    src, dst = np.arange(0, 80, 2), np.arange(1, 80, 2)
    x, y = force_layout(120, src, dst)
    extent = max(np.ptp(x), np.ptp(y))
    assert extent < 6 * np.sqrt(120), extent
    assert np.hypot(x[src] - x[dst], y[src] - y[dst]).max() < 0.25 * extent


def test_it_refuses_edges_outside_the_nodes():
    with pytest.raises(ValueError, match="outside"):
        force_layout(3, np.array([0]), np.array([3]))
    with pytest.raises(ValueError, match="lengths"):
        force_layout(3, np.array([0, 1]), np.array([2]))
    x, y = force_layout(0, np.array([], np.int64), np.array([], np.int64))
    assert len(x) == len(y) == 0
