"""compute/graphs.py: the Graph structure, its builders and views against networkx, the choice of betweenness
sources (per-component sampling) and the grid that makes block sums exact."""

from __future__ import annotations

import numpy as np
import pytest

from compute.graphs import (
    SOURCE_BLOCK,
    Graph,
    betweenness_grid,
    betweenness_plan,
    betweenness_sources,
    follower_graph,
    graph_from_edges,
    interaction_graph,
    ordered_components,
    reciprocal,
    subgraph,
    top_overlap,
    transpose,
    undirected,
)
from compute.structures import FollowerGraph

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("networkx")
pytest.importorskip("hypothesis")
import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st


def _edges(g: Graph) -> set[tuple[int, int]]:
    src, dst = g.edges()
    return {(int(g.ids[a]), int(g.ids[b])) for a, b in zip(src, dst)}


@st.composite
def edge_lists(draw, max_nodes=14, max_edges=40):
    """External ids (some past 2**53), edges with self loops and duplicates, and a few isolated ids."""
    n = draw(st.integers(1, max_nodes))
    ids = draw(st.lists(st.integers(0, 2**62), min_size=n, max_size=n, unique=True))
    m = draw(st.integers(0, max_edges))
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), min_size=m, max_size=m))
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    return np.array(ids, dtype=np.int64), src, dst


# --------------------------------------------------------------------------------------------------------------
# Graph and builders
# --------------------------------------------------------------------------------------------------------------


def test_it_builds_a_directed_graph_keeping_self_loops_and_dropping_duplicates():
    g = graph_from_edges([5, 5, 7, 9, 9], [7, 7, 5, 9, 5], ids=[3])
    assert g.ids.tolist() == [3, 5, 7, 9]
    assert _edges(g) == {(5, 7), (7, 5), (9, 9), (9, 5)}
    assert g.weights is None and g.directed
    assert g.indices.dtype == np.int32
    assert g.out_degree.tolist() == [0, 1, 1, 2] and g.in_degree.tolist() == [0, 2, 1, 1]
    assert g.index_of([9, 4, 3]).tolist() == [3, -1, 0]


def test_it_merges_duplicate_edges_summing_their_weights():
    g = graph_from_edges([1, 1, 2, 1], [2, 2, 1, 3], weights=[1.0, 2.5, 4.0, 1.0])
    src, dst = g.edges()
    got = {(int(g.ids[a]), int(g.ids[b])): w for a, b, w in zip(src, dst, g.weights)}
    assert got == {(1, 2): 3.5, (2, 1): 4.0, (1, 3): 1.0}


def test_it_builds_the_undirected_view_directly_and_refuses_weights_there():
    g = graph_from_edges([1, 2, 3, 3], [2, 1, 3, 1], directed=False)
    assert not g.directed and _edges(g) == {(1, 2), (2, 1), (1, 3), (3, 1)}
    with pytest.raises(ValueError, match="weights"):
        graph_from_edges([1], [2], weights=[1.0], directed=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(ids=[1, 2], indptr=[0, 1], indices=[1]), "indptr"),
        (dict(ids=[2, 1], indptr=[0, 0, 0], indices=[]), "ids"),
        (dict(ids=[1, 2], indptr=[0, 2, 2], indices=[1, 0]), "row 0"),
        (dict(ids=[1, 2], indptr=[0, 2, 2], indices=[1, 1]), "row 0"),
        (dict(ids=[1, 2], indptr=[0, 1, 1], indices=[5]), "indices"),
        (dict(ids=[1, 2], indptr=[0, 1, 1], indices=[1], weights=[1.0, 2.0]), "weights"),
        (dict(ids=[1, 2], indptr=[0, 1, 2], indices=[0, 0], directed=False), "self loop"),
    ],
)
def test_it_refuses_a_malformed_graph(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Graph(**kwargs)


def test_the_follower_graph_is_follower_to_followee_without_a_copy():
    fg = FollowerGraph.from_edges([10, 10, 20, 30], [20, 30, 30, 10])
    g = follower_graph(fg)
    assert g.indices is fg.friends_indices or np.shares_memory(g.indices, fg.friends_indices)
    assert _edges(g) == {(10, 20), (10, 30), (20, 30), (30, 10)}


def test_the_interaction_graph_counts_retweets_drops_self_retweets_and_adds_spreading_edges():
    g = interaction_graph([1, 1, 2, 3, 3], [9, 9, 9, 3, 1], spreading_src=[2, 4], spreading_dst=[9, 2])
    src, dst = g.edges()
    got = {(int(g.ids[a]), int(g.ids[b])): w for a, b, w in zip(src, dst, g.weights)}
    assert got == {(1, 9): 2.0, (2, 9): 2.0, (3, 1): 1.0, (4, 2): 1.0}
    with pytest.raises(ValueError, match="spreading_dst"):
        interaction_graph([1], [2], spreading_src=[1])


# --------------------------------------------------------------------------------------------------------------
# Views against networkx
# --------------------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(edge_lists())
def test_views_match_networkx(case):
    ids, src, dst = case
    g = graph_from_edges(src, dst, ids=ids)
    d = nx.DiGraph()
    d.add_nodes_from(ids.tolist())
    d.add_edges_from(zip(src.tolist(), dst.tolist()))
    assert _edges(g) == set(d.edges())

    u = undirected(g)
    ref = d.to_undirected()
    ref.remove_edges_from(list(nx.selfloop_edges(ref)))
    assert not u.directed and undirected(u) is u
    assert _edges(u) == set(ref.edges()) | {(b, a) for a, b in ref.edges()}

    r = reciprocal(g)
    assert _edges(r) == {(a, b) for a, b in d.edges() if a != b and d.has_edge(b, a)}

    keep = np.flatnonzero(np.arange(g.n_nodes) % 2 == 0)
    s = subgraph(g, keep[::-1])  # any order in; ids come out ascending
    assert s.ids.tolist() == g.ids[keep].tolist()
    assert _edges(s) == set(d.subgraph(g.ids[keep].tolist()).edges())

    indptr_t, indices_t, perm = transpose(g)
    rev = {
        (int(g.ids[indices_t[k]]), int(g.ids[j])) for j in range(g.n_nodes) for k in range(indptr_t[j], indptr_t[j + 1])
    }
    assert rev == _edges(g)
    assert all(np.all(np.diff(indices_t[indptr_t[j] : indptr_t[j + 1]]) > 0) for j in range(g.n_nodes))
    assert np.array_equal(g.indices[perm], np.repeat(np.arange(g.n_nodes), np.diff(indptr_t)))


def test_reciprocal_keeps_the_smaller_weight_and_subgraph_carries_weights():
    g = graph_from_edges([1, 2, 2, 3, 1], [2, 1, 3, 2, 3], weights=[5.0, 2.0, 1.0, 7.0, 4.0])
    r = reciprocal(g)
    src, dst = r.edges()
    got = {(int(r.ids[a]), int(r.ids[b])): w for a, b, w in zip(src, dst, r.weights)}
    assert got == {(1, 2): 2.0, (2, 1): 2.0, (2, 3): 1.0, (3, 2): 1.0}
    s = subgraph(g, [0, 2])
    assert s.ids.tolist() == [1, 3] and s.weights.tolist() == [4.0]


# --------------------------------------------------------------------------------------------------------------
# Components, sources, grid
# --------------------------------------------------------------------------------------------------------------


def test_components_are_numbered_by_size_then_smallest_node():
    c = ordered_components(np.array([7, 3, 3, 9, 7, 5, 5]))
    # sizes: 7 -> 2 (first node 0), 3 -> 2 (first 1), 5 -> 2 (first 5), 9 -> 1
    assert c.labels.tolist() == [0, 1, 1, 3, 0, 2, 2]
    assert c.sizes.tolist() == [2, 2, 2, 1]
    assert c.nodes(1).tolist() == [1, 2]


def _forest(sizes: list[int]) -> Graph:
    """Paths of the given sizes, one after another, as an undirected graph."""
    src, dst, ids, base = [], [], [], 0
    for s in sizes:
        ids += list(range(base, base + s))
        src += list(range(base, base + s - 1))
        dst += list(range(base + 1, base + s))
        base += s
    return graph_from_edges(src, dst, ids=ids, directed=False)


def test_it_uses_every_node_for_exact_betweenness():
    g = _forest([5, 3, 1])
    for samples in (0, 9, 50):
        src, scale = betweenness_sources(g, samples, 3)
        assert src.tolist() == list(range(9)) and scale.tolist() == [1.0] * 9


def test_it_allots_samples_by_size_with_at_least_one_each_and_never_more_than_the_size():
    g = _forest([40, 10, 5, 3, 2, 1])  # the 2 and the 1 have no betweenness: no source
    plan = betweenness_plan(g, 20, 0)
    labels = ordered_components(np.repeat(np.arange(6), [40, 10, 5, 3, 2, 1])).labels
    per = np.bincount(labels[plan.sources], minlength=6)
    assert per.sum() == 20 and per[4] == 0 and per[5] == 0
    assert (per[:4] >= 1).all() and (per[:4] <= [40, 10, 5, 3]).all()
    # 20 * (40, 10, 5, 3) / 58 = 13.79, 3.45, 1.72, 1.03: floors 13, 3, 1, 1; the 2 left go to .79 and .72
    assert per.tolist()[:4] == [14, 3, 2, 1]
    assert np.all(np.diff(plan.sources) > 0)
    np.testing.assert_array_equal(
        plan.scale, np.array([40, 10, 5, 3])[labels[plan.sources]] / per[labels[plan.sources]]
    )
    assert not plan.exact


def test_more_components_than_samples_leaves_the_smallest_without_a_source_and_says_so():
    plan = betweenness_plan(_forest([6, 5, 4, 3]), 2, 0)
    labels = ordered_components(np.repeat(np.arange(4), [6, 5, 4, 3])).labels
    assert sorted(labels[plan.sources].tolist()) == [0, 1]
    assert any("2 of 4 components" in note for note in plan.notes)


def test_samples_covering_every_eligible_node_are_exact():
    plan = betweenness_plan(_forest([4, 3, 2]), 8, 0)  # 8 < 9 nodes, but 7 sit in components of 3+
    assert plan.exact and plan.sources.tolist() == list(range(7))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8), st.integers(1, 40), st.integers(0, 2**32))
def test_sources_are_reproducible_and_never_miss_a_component_when_there_are_samples_enough(sizes, samples, seed):
    g = _forest(sizes)
    a = betweenness_sources(g, samples, seed)
    b = betweenness_sources(g, samples, seed)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    if samples >= g.n_nodes:
        return
    labels = ordered_components(np.repeat(np.arange(len(sizes)), sizes)).labels
    sz = np.bincount(labels)
    eligible = np.flatnonzero(sz >= 3)
    hit = set(labels[a[0]].tolist())
    assert hit <= set(eligible.tolist())
    if samples >= len(eligible):
        assert hit == set(eligible.tolist())
        assert len(a[0]) == min(samples, int(sz[eligible].sum()))
    # the scales of a component add up to its size: the estimate is unbiased
    for c in hit:
        assert np.isclose(a[1][labels[a[0]] == c].sum(), sz[c])


def test_the_grid_is_a_power_of_two_per_component_and_makes_any_grouping_of_blocks_exact():
    g = _forest([300, 3])
    q = betweenness_grid(g)
    assert np.all(q[:300] == q[0]) and np.all(q[300:] == q[300]) and q[300] < q[0]
    assert np.all(np.frexp(q)[0] == 0.5)  # powers of two
    rng = np.random.default_rng(0)
    bound = 300 * 298 / 2  # the largest value a node of the big component can have
    blocks = [np.rint(rng.random(g.n_nodes) * bound / 8 / q) * q for _ in range(8)]
    serial = np.zeros(g.n_nodes)
    for b in blocks:
        serial += b
    halves = (blocks[0] + blocks[1] + blocks[2]) + (blocks[3] + blocks[4] + blocks[5] + blocks[6] + blocks[7])
    assert np.array_equal(serial, halves)
    # without the grid, the same sums differ in the last bits: the test would catch a grid that does nothing
    raw = [rng.random(g.n_nodes) * bound / 8 for _ in range(8)]
    assert not np.array_equal(
        sum(raw[:3], np.zeros(g.n_nodes)) + sum(raw[3:], np.zeros(g.n_nodes)), sum(raw, np.zeros(g.n_nodes))
    )


def test_source_block_is_the_fixed_api_value():
    assert SOURCE_BLOCK == 64


def test_top_overlap_counts_shared_members_of_the_top_sets():
    a = np.array([9.0, 8, 7, 0, 0, 1, 2, 3, 4, 5])
    b = np.array([9.0, 0, 7, 8, 0, 1, 2, 3, 4, 5])
    assert top_overlap(a, a, 1.0) == 1.0
    assert top_overlap(a, b, 20.0) == 0.5  # top 2 of 8 positives: {0, 1} vs {0, 3}
    assert top_overlap(np.zeros(4), np.zeros(4), 5.0) == 1.0
