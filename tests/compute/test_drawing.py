"""The explorer's radial layout: every node placed, neighbours never closer than the spacing, levels outwards,
orphans outermost, a star-shaped cascade drawn as a disc (not a one-pixel ring)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import cKDTree

from compute.drawing import radial_layout

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def nearest(x: np.ndarray, y: np.ndarray) -> float:
    pts = np.c_[x, y]
    d, _ = cKDTree(pts).query(pts, k=2)
    return float(d[:, 1].min())


def bfs_levels(n, src, dst, root):
    levels = {root: 0}
    frontier = [root]
    while frontier:
        nxt = []
        for u in frontier:
            for s, d in zip(src, dst, strict=True):
                if d == u and s not in levels:
                    levels[s] = levels[u] + 1
                    nxt.append(s)
        frontier = nxt
    return levels


@st.composite
def cascades(draw):
    n = draw(st.integers(2, 60))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, n)]
    src = list(range(1, n))
    dst = parents
    extra = draw(st.lists(st.tuples(st.integers(1, n - 1), st.integers(0, n - 1)), max_size=30))
    src += [s for s, d in extra if d < s]
    dst += [d for s, d in extra if d < s]
    cut = draw(st.integers(1, n))  # nodes >= cut lose their edges: orphans
    keep = [i for i, s in enumerate(src) if s < cut]
    return n, np.array([src[i] for i in keep], dtype=np.int64), np.array([dst[i] for i in keep], dtype=np.int64)


@settings(max_examples=80, deadline=None)
@given(cascades(), st.floats(0.5, 3.0))
def test_no_two_nodes_are_closer_than_the_spacing_and_levels_go_outwards(case, spacing):
    n, src, dst = case
    x, y = radial_layout(n, src, dst, 0, weight=np.arange(n, dtype=float), spacing=spacing)
    assert np.isfinite(x).all() and np.isfinite(y).all()
    assert nearest(x, y) >= spacing * (1 - 1e-9)
    r = np.hypot(x, y)
    assert r[0] == 0.0  # the publisher in the centre
    levels = bfs_levels(n, src.tolist(), dst.tolist(), 0)
    reached = sorted(levels, key=levels.get)
    for a in reached:
        for b in reached:
            if levels[a] < levels[b]:
                assert r[a] < r[b]
    orphans = [v for v in range(n) if v not in levels]
    if orphans:
        assert r[orphans].min() > r[reached].max()
    again = radial_layout(n, src, dst, 0, weight=np.arange(n, dtype=float), spacing=spacing)
    assert np.array_equal(again[0], x) and np.array_equal(again[1], y)  # deterministic


@pytest.mark.parametrize("n", [7, 150, 6_902, 20_000])
def test_a_star_is_drawn_as_a_disc_about_half_full(n):
    src = np.arange(1, n)
    x, y = radial_layout(n, src, np.zeros(n - 1, dtype=np.int64), 0)
    assert nearest(x, y) >= 1 - 1e-9
    # a disc of n unit-spaced points has radius ~sqrt(n / pi); a single ring would need n / 2 pi
    assert np.hypot(x, y).max() <= max(6.0, 2.1 * math.sqrt(n / (2 * math.pi)) + 6)


def test_children_sit_in_their_parents_sector():
    # publisher 0; 1 and 2 saw it from 0; 3, 4, 5 from 1; 6 from 2
    src = np.array([1, 2, 3, 4, 5, 6])
    dst = np.array([0, 0, 1, 1, 1, 2])
    x, y = radial_layout(7, src, dst, 0, weight=np.array([0, 5, 1, 0, 0, 0, 0.0]))
    ang = np.arctan2(y, x) % (2 * math.pi)
    # 1 has three leaves of four: its sector is [0, 3/4 of the circle), 2's the last quarter
    assert all(0 <= ang[v] < 1.5 * math.pi for v in (1, 3, 4, 5))
    assert 1.5 * math.pi <= ang[2] < 2 * math.pi and 1.5 * math.pi <= ang[6] < 2 * math.pi


def test_it_refuses_nonsense():
    with pytest.raises(ValueError, match="root"):
        radial_layout(3, np.array([1]), np.array([0]), 5)
    with pytest.raises(ValueError, match="outside"):
        radial_layout(3, np.array([7]), np.array([0]), 0)
    with pytest.raises(ValueError, match="lengths"):
        radial_layout(3, np.array([1, 2]), np.array([0]), 0)
