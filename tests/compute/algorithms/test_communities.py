"""Communities (networkit's PLM on the undirected simple view): the modularity computed here is networkx's on small
graphs; planted communities are found and numbered by size; the same seed gives the same communities; accounts
without edges are communities of their own; bad arguments and the GPU are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.communities import (
    MOVE_ITERATIONS,
    communities,
    community_table,
    edges_once,
    modularity,
    number_by_size,
    upper_csr,
)
from compute.graphs import graph_from_edges, undirected

pytest.importorskip("networkit")
nx = pytest.importorskip("networkx")
pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def random_graph(seed: int, n: int, m: int):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    ids = np.arange(n) * 7 + 3
    return graph_from_edges(ids[src], ids[dst], ids=ids), rng


def as_networkx(u) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(u.n_nodes))
    src = np.repeat(np.arange(u.n_nodes), np.diff(u.indptr))
    g.add_edges_from(zip(src.tolist(), u.indices.tolist()))
    return g


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 60), st.integers(1, 200), st.sampled_from([0.5, 1.0, 2.0]))
def test_the_modularity_is_networkxs_on_small_graphs(seed, n, m, resolution):
    g, rng = random_graph(seed, n, m)
    u = undirected(g)
    labels = rng.integers(0, 4, n)
    groups = [set(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)]
    want = nx.community.modularity(as_networkx(u), groups, resolution=resolution) if u.n_edges else 0.0
    assert modularity(u, labels, resolution) == pytest.approx(want, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 60), st.integers(1, 200), st.sampled_from([0.5, 1.0, 2.0]))
def test_each_communitys_modularity_term_is_networkxs_and_the_terms_add_up(seed, n, m, resolution):
    g, rng = random_graph(seed, n, m)
    u = undirected(g)
    labels, sizes = number_by_size(rng.integers(0, 4, n))
    table = community_table(u, labels, resolution)
    nxg = as_networkx(u)
    assert table.sizes.tolist() == sizes.tolist()
    for c in range(1, len(sizes) + 1):
        part = set(np.flatnonzero(labels == c).tolist())
        assert table.inside[c - 1] == nxg.subgraph(part).number_of_edges()
        assert table.degree_sums[c - 1] == sum(d for _n, d in nxg.degree(part))
    assert table.contributions.sum() == pytest.approx(modularity(u, labels, resolution), abs=1e-12)


def test_planted_communities_are_found_and_numbered_by_size():
    # cliques of 8, 6 and 6 accounts, one follow between each pair of them, and two accounts with no edge
    blocks = [np.arange(0, 8), np.arange(8, 14), np.arange(14, 20)]
    src, dst = [], []
    for b in blocks:
        for i in b:
            for j in b:
                if i < j:
                    src.append(i)
                    dst.append(j)
    src += [0, 8]
    dst += [8, 14]
    ids = np.arange(22) + 100
    g = graph_from_edges(ids[np.array(src)], ids[np.array(dst)], ids=ids)
    c = communities(g, seed=3)
    assert c.labels[:8].tolist() == [1] * 8
    assert c.labels[8:14].tolist() == [2] * 6 and c.labels[14:20].tolist() == [3] * 6  # a tie: smallest node first
    assert c.labels[20:].tolist() == [4, 5] and c.sizes.tolist() == [8, 6, 6, 1, 1]
    groups = [set(np.flatnonzero(c.labels == k).tolist()) for k in range(1, 6)]
    assert c.modularity == pytest.approx(nx.community.modularity(as_networkx(undirected(g)), groups), abs=1e-12)


def test_it_is_at_least_as_good_as_networkx_louvain_on_the_karate_club():
    k = nx.karate_club_graph()
    a, b = np.array(k.edges()).T
    g = graph_from_edges(a, b, ids=np.arange(k.number_of_nodes()))
    ours = communities(g, seed=0).modularity
    found = nx.community.louvain_communities(k, weight=None, seed=0)  # the club's edges carry weights: not here
    theirs = nx.community.modularity(k, found, weight=None)
    assert ours >= theirs - 1e-9 and ours == pytest.approx(0.41979, abs=1e-5)  # the best partition known


def test_the_same_seed_gives_the_same_communities():
    g, _ = random_graph(5, 3_000, 12_000)
    a, b = communities(g, seed=11), communities(g, seed=11)
    assert np.array_equal(a.labels, b.labels) and a.modularity == b.modularity
    assert a.labels.min() == 1 and np.array_equal(np.bincount(a.labels)[1:], a.sizes)
    assert np.all(np.diff(a.sizes) <= 0)


def test_numbering_goes_by_size_then_smallest_member():
    labels, sizes = number_by_size(np.array([9, 9, 4, 4, 7, 4, 9, 1]))
    # 9: {0, 1, 6} and 4: {2, 3, 5} tie at 3 (9 holds node 0 first); 7: {4}, 1: {7}
    assert labels.tolist() == [1, 1, 2, 2, 3, 2, 1, 4] and sizes.tolist() == [3, 3, 1, 1]


def test_bad_arguments_and_the_gpu_are_refused_by_name():
    g, _ = random_graph(1, 10, 20)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        communities(g, seed=-1)
    for bad in (0, -1.0, True, "1"):
        with pytest.raises(ValueError, match="resolution must be a number > 0"):
            communities(g, resolution=bad)
    with pytest.raises(ValueError, match="communities have no GPU twin"):
        communities(g, backend="gpu")
    with pytest.raises(ValueError, match="backend must be one of"):
        communities(g, backend="tpu")


def test_networkit_builds_the_same_graph_and_finds_the_same_communities_from_the_upper_csr():
    import networkit as nk

    g, _rng = random_graph(4, 2000, 12_000)
    u = undirected(g)
    m = upper_csr(u)
    a, b = edges_once(u)
    coo = sorted(zip(a.tolist(), b.tolist(), strict=True))
    rows = np.repeat(np.arange(u.n_nodes), np.diff(m.indptr))
    assert sorted(zip(rows.tolist(), m.indices.tolist(), strict=True)) == coo  # each edge once, a < b
    threads = nk.getMaxNumberOfThreads()
    nk.setNumberOfThreads(1)
    try:
        found = []
        for graph in (nk.GraphFromCoo((a, b), n=u.n_nodes), nk.GraphFromCsr(m, directed=False)):
            assert graph.numberOfEdges() == len(a) and not graph.isDirected()
            nk.setSeed(9, False)
            plm = nk.community.PLM(graph, refine=True, gamma=1.0, maxIter=MOVE_ITERATIONS)
            plm.run()
            found.append(np.asarray(plm.getPartition().getVector()))
    finally:
        nk.setNumberOfThreads(threads)
    assert np.array_equal(found[0], found[1])
    assert np.array_equal(communities(g, seed=9).labels, number_by_size(found[1])[0])
