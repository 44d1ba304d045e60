"""Positions for drawing one cascade's spreading graph (the explorer, issue 19 item 3).

Real cascades are wide and shallow: a publisher, thousands of accounts that saw the tweet from it, a few
levels below those. A layered drawing (one row per level) flattens them into a strip; a force layout of 20,000
nodes takes seconds in the browser and moves every time. This is a **radial tree layout** computed once per
cascade, in NumPy, on the server:

* The publisher sits at the centre. Each other account hangs from one *tree parent*: among the accounts it
  could have seen the tweet from, the one closest to the publisher (a breadth-first tree of the spreading
  graph; ties go to the lower index, so the layout is deterministic). Accounts no path reaches (orphans) form
  the outermost band.
* Each account gets an angular sector in proportion to the leaves below it, inside its parent's sector; its
  children go round the sector in golden-ratio steps of their ``weight`` rank (the influence), so the biggest
  spreaders, which the explorer labels, are spread over the sector rather than crowded into one part of it.
* Accounts of one level lie in a band around the centre. When the level is too crowded for one ring (the
  star-shaped cascade: 6,902 retweeters of one publisher), consecutive accounts go to consecutive rings of
  the band (columns of rings, see :func:`_rings`), so the band fills as a disc instead of a one-pixel circle;
  the band's ring count is what keeps two neighbours at least ``spacing`` apart.

The guarantee (checked by the tests): every two nodes of one band are at least ``spacing`` apart, bands are at
least ``spacing`` apart, and a child's angle lies in its parent's sector.

The Network pages' drawings (a neighbourhood, a component, the conversations: up to 2,000 accounts and no tree
to hang them from) use :func:`force_layout` instead: a fixed number of Fruchterman-Reingold steps compiled with
numba, from a seeded start, so the same graph always gets the same picture and the browser only draws it
(cytoscape's ``cose`` on the page's main thread took 10 s for 250 accounts; benchmarks/drawing.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from ._jit import njit

__all__ = ["force_layout", "radial_layout"]

TWO_PI = 2.0 * math.pi
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
MAX_RINGS = 4096  # per band: a level of a million accounts still gets a finite band
# force_layout's pull to the centre, per unit of distance: weak beside a spring (a neighbour 1 away pulls with 1),
# but it keeps separate components (a conversation graph is many) on one screen instead of drifting apart
GRAVITY = 0.3


def radial_layout(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    root: int,
    *,
    weight: np.ndarray | None = None,
    spacing: float = 1.0,
    ring_gap: float = 6.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of ``n`` nodes; edges ``src[i] -> dst[i]`` say ``src`` could have seen the tweet from ``dst``
    (``dst`` is nearer the publisher ``root``). ``weight`` orders siblings (largest first); ``spacing`` is the
    smallest distance between two nodes; ``ring_gap`` the distance from a band to the next, in spacings."""
    if not 0 <= root < n:
        raise ValueError(f"root: {root} is not a node of {n}")
    src, dst = _edges(n, src, dst)
    if spacing <= 0 or ring_gap < 1:
        raise ValueError("spacing must be positive and ring_gap at least 1")
    w = np.zeros(n) if weight is None else np.asarray(weight, dtype=np.float64)

    parent, depth = _bfs_tree(n, src, dst, root)
    leaves = _leaves(parent, depth)
    angle = _angles(parent, depth, leaves, w, root)

    x = np.zeros(n)
    y = np.zeros(n)
    radius = 0.0
    for d in range(1, int(depth.max()) + 1):
        level = np.flatnonzero(depth == d)
        if not len(level):
            continue
        level = level[np.argsort(angle[level], kind="stable")]
        a = angle[level]
        base = radius + ring_gap * spacing
        # the smallest angular gap between neighbours around the circle (the wrap included)
        gaps = np.diff(np.append(a, a[0] + TWO_PI)) if len(a) > 1 else np.array([TWO_PI])
        g = max(float(gaps.min()), 1e-12)
        # a crowded level moves out to where its band is thinnest overall: the band's outer radius
        # base + spacing^2 / (g base) is smallest at base = spacing / sqrt(g) (a disc about half full)
        base = max(base, spacing / math.sqrt(g))
        need = spacing / (g * base)  # rings so that two nodes of one ring (a column apart) are far enough
        ring = _rings(len(level), int(min(max(math.ceil(need), 1), MAX_RINGS, len(level))))
        r = base + spacing * ring
        x[level] = r * np.cos(a)
        y[level] = r * np.sin(a)
        radius = base + spacing * int(ring.max())
    return x, y


def _edges(n: int, src, dst) -> tuple[np.ndarray, np.ndarray]:
    """``src`` and ``dst`` as int64 arrays, checked to be edges between the ``n`` nodes."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if len(src) != len(dst):
        raise ValueError("src and dst: different lengths")
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"src/dst: a node index outside 0..{n - 1}")
    return src, dst


def _rings(m: int, k: int) -> np.ndarray:
    """The ring of each of ``m`` nodes in angular order when a band needs at least ``k`` rings: the nodes are
    cut into columns of ``k`` or a few more consecutive nodes, a node's ring is its place in its column. Two
    nodes on one ring are then a whole column (at least ``k`` gaps) apart around the circle, the wrap from the
    last column to the first included, which plain ``i mod k`` breaks when ``k`` does not divide ``m``."""
    cols = m // k
    lengths = np.full(cols, m // cols, dtype=np.int64)
    lengths[: m % cols] += 1
    starts = np.cumsum(lengths) - lengths
    return np.arange(m) - np.repeat(starts, lengths)


def _bfs_tree(n: int, src: np.ndarray, dst: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Each node's tree parent (-1 for the root and the unreached) and level (unreached: one past the deepest)."""
    # walk from the publisher outwards: dst -> src; duplicate edges are harmless in a BFS
    g = csr_matrix((np.ones(len(src), dtype=np.int8), (dst, src)), shape=(n, n))
    g.sort_indices()  # the lowest index first: a deterministic tree
    order, pred = breadth_first_order(g, root, directed=True, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    depth = np.full(n, -1, dtype=np.int64)
    depth[root] = 0
    for v in order[1:]:  # BFS order: a parent's level is known before its children's
        depth[v] = depth[parent[v]] + 1
    unreached = depth < 0
    if unreached.any():
        # orphans hang from the publisher, in a band outside everything it reached
        parent[unreached] = root
        depth[unreached] = int(depth.max()) + 1
    parent[root] = -1
    return parent, depth


def _leaves(parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Leaves under each node (a leaf counts itself)."""
    n = len(parent)
    has_child = np.zeros(n, dtype=bool)
    has_child[parent[parent >= 0]] = True
    leaves = np.where(has_child, 0, 1).astype(np.int64)
    for d in range(int(depth.max()), 0, -1):
        level = np.flatnonzero(depth == d)
        np.add.at(leaves, parent[level], leaves[level])
    return leaves


def _angles(parent: np.ndarray, depth: np.ndarray, leaves: np.ndarray, weight: np.ndarray, root: int) -> np.ndarray:
    """The centre angle of each node's sector; siblings share their parent's sector by leaves, heaviest first."""
    n = len(parent)
    start = np.zeros(n)
    span = np.zeros(n)
    span[root] = TWO_PI
    children_total = _children_leaves(parent, leaves)
    # orphans sit one band out but share the publisher's sector with its direct children: allocate children of
    # a parent in one pass over all levels that have that parent (level order keeps parents before children)
    for d in range(1, int(depth.max()) + 1):
        level = np.flatnonzero(depth == d)
        if not len(level):
            continue
        p = parent[level]
        order = np.lexsort((level, -weight[level], p))  # by parent, then heaviest, then index
        level, p = level[order], p[order]
        # siblings go round their parent's sector in golden-ratio steps of their weight rank, so the heaviest
        # (the accounts the explorer labels) spread over the sector instead of crowding its first part
        first = np.r_[True, p[1:] != p[:-1]]
        rank = np.arange(len(level)) - np.maximum.accumulate(np.where(first, np.arange(len(level)), 0))
        spread = np.lexsort(((rank * GOLDEN) % 1.0, p))
        level, p = level[spread], p[spread]
        lv = leaves[level].astype(np.float64)
        csum = np.cumsum(lv)
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(level)), 0))
        before = csum - lv - (csum[group_start] - lv[group_start])
        # a parent's children (over every level they sit on) share its sector by their leaves
        total = children_total[p]
        offset = _earlier_siblings(parent, depth, leaves, d)[p]
        frac = span[p] / np.maximum(total, 1)
        start[level] = start[p] + (offset + before) * frac
        span[level] = lv * frac
    return start + span / 2.0


def _children_leaves(parent: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """Sum of the children's leaves, per parent."""
    out = np.zeros(len(parent))
    kids = np.flatnonzero(parent >= 0)
    np.add.at(out, parent[kids], leaves[kids])
    return out


def _earlier_siblings(parent: np.ndarray, depth: np.ndarray, leaves: np.ndarray, d: int) -> np.ndarray:
    """Per parent: the leaves of its children on levels before ``d`` (the publisher's reached children come
    before its orphans, which sit on the outer band)."""
    out = np.zeros(len(parent))
    kids = np.flatnonzero((parent >= 0) & (depth < d))
    np.add.at(out, parent[kids], leaves[kids])
    return out


def force_layout(
    n: int, src: np.ndarray, dst: np.ndarray, *, iterations: int | None = None, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of ``n`` nodes joined by edges ``src[i] -- dst[i]`` (direction, duplicates and self-loops are
    ignored), by Fruchterman-Reingold: every pair repels (``k^2 / d``), every edge attracts (``d^2 / k``), a weak
    pull to the centre keeps separate components on screen, and each step moves a node at most a temperature
    that cools linearly to zero. ``k`` (the ideal edge length) is 1, so two nodes end about 1 apart and
    neighbours closer than strangers. ``iterations`` defaults to 300 for small graphs, falling to 100 at 2,000
    nodes (every step costs ``n^2``; the start is a seeded disc, deterministic for a given ``seed``)."""
    src, dst = _edges(n, src, dst)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    if iterations is None:
        iterations = int(min(300, max(100, 300 * 400 / n)))
    if iterations < 1:
        raise ValueError("iterations: at least 1")
    # each undirected pair once: a follow both ways is one spring, not two
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    pairs = np.unique(np.c_[lo[keep], hi[keep]], axis=0) if keep.any() else np.zeros((0, 2), np.int64)
    rng = np.random.default_rng(seed)
    # a uniform disc of about one unit of area per node: the layout's final size, so little has to move far
    radius = math.sqrt(n / math.pi)
    r = radius * np.sqrt(rng.random(n))
    a = TWO_PI * rng.random(n)
    pos = np.c_[r * np.cos(a), r * np.sin(a)]
    _fruchterman_reingold(pos, pairs[:, 0].copy(), pairs[:, 1].copy(), iterations, max(radius / 4.0, 1.0))
    pos -= pos.mean(axis=0)
    return pos[:, 0].copy(), pos[:, 1].copy()


@njit
def _fruchterman_reingold(pos, a, b, iterations, t0):  # pragma: no cover - numba compiles it; the tests call it
    n = pos.shape[0]
    disp = np.zeros((n, 2))
    for it in range(iterations):
        t = t0 * (1.0 - it / iterations) + 0.005
        for i in range(n):
            disp[i, 0] = -GRAVITY * pos[i, 0]
            disp[i, 1] = -GRAVITY * pos[i, 1]
        # every pair repels, each pair once: n^2 / 2 steps, 2 ms for 2,000 nodes. The grid variant (repulsion
        # cut off at a few edge lengths) was tried and is slower here: without the far repulsion the springs
        # pull a dense graph into a ball, and the ball's cells hold hundreds of nodes each
        for i in range(n):
            xi = pos[i, 0]
            yi = pos[i, 1]
            fx = 0.0
            fy = 0.0
            for j in range(i + 1, n):
                dx = xi - pos[j, 0]
                dy = yi - pos[j, 1]
                d2 = dx * dx + dy * dy
                if d2 < 1e-6:  # two nodes on one spot: push apart along a fixed, index-dependent direction
                    dx = 1e-3 * ((i * 7 + j * 13) % 11 - 5)
                    dy = 1e-3 * ((i * 5 + j * 3) % 7 - 3) + 1e-4
                    d2 = dx * dx + dy * dy
                f = 1.0 / d2  # k = 1: repulsion k^2 / d along the unit vector (dx / d)
                fx += dx * f
                fy += dy * f
                disp[j, 0] -= dx * f
                disp[j, 1] -= dy * f
            disp[i, 0] += fx
            disp[i, 1] += fy
        for e in range(len(a)):
            i = a[e]
            j = b[e]
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            d = math.sqrt(dx * dx + dy * dy)  # attraction d^2 / k along the unit vector: (dx / d) * d^2
            disp[i, 0] -= dx * d
            disp[i, 1] -= dy * d
            disp[j, 0] += dx * d
            disp[j, 1] += dy * d
        for i in range(n):
            length = math.sqrt(disp[i, 0] ** 2 + disp[i, 1] ** 2)
            if length > 0.0:
                step = min(length, t) / length
                pos[i, 0] += disp[i, 0] * step
                pos[i, 1] += disp[i, 1] * step
