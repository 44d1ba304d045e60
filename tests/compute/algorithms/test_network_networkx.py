"""The network analytics (compute/algorithms/network.py) against networkx, on the hand-made graphs of
test_network.py and on random ones (hypothesis), through the ``backend`` fixture: the same bodies run on the GPU
twin where one is. networkx and hypothesis are test extras: where they are not installed (a GPU machine with
only the engine's dependencies, ``make test-gpu``) this module is skipped, and test_network.py still runs.

Exactness (docs/network.md): degrees, components, cores, conversations and neighbourhoods are equal;
clustering and betweenness within 1e-9 relative."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms import network as net
from compute.graphs import Graph, graph_from_edges

from .test_network import HAND_MADE

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("networkx")
pytest.importorskip("hypothesis")
import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

RTOL = 1e-9


def _case(src, dst, ids=()):
    """(our Graph, networkx DiGraph, networkx simple undirected Graph) over the same external ids."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    g = graph_from_edges(src, dst, ids=np.asarray(ids, dtype=np.int64))
    d = nx.DiGraph()
    d.add_nodes_from(g.ids.tolist())
    d.add_edges_from(zip(src.tolist(), dst.tolist()))
    u = nx.Graph(d.to_undirected())
    u.remove_edges_from(list(nx.selfloop_edges(u)))
    return g, d, u


def _by_id(g: Graph, mapping: dict) -> np.ndarray:
    return np.array([mapping[i] for i in g.ids.tolist()])


def _partition(labels: np.ndarray, g: Graph) -> set[frozenset]:
    return {frozenset(g.ids[labels == c].tolist()) for c in np.unique(labels)}


@st.composite
def random_graphs(draw, max_nodes=16, max_edges=45):
    n = draw(st.integers(1, max_nodes))
    ids = draw(st.lists(st.integers(0, 2**62), min_size=n, max_size=n, unique=True))
    m = draw(st.integers(0, max_edges))
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), min_size=m, max_size=m))
    return [p[0] for p in pairs], [p[1] for p in pairs], ids


def _check_all(g, d, u, backend):
    deg = net.degrees(g, backend=backend)
    assert deg.in_degree.tolist() == _by_id(g, dict(d.in_degree())).tolist()
    assert deg.out_degree.tolist() == _by_id(g, dict(d.out_degree())).tolist()
    assert deg.in_degree.dtype == np.int64 and deg.out_degree.dtype == np.int64

    for comps, ref in (
        (net.components(g, backend=backend), nx.weakly_connected_components(d)),
        (net.strong_components(g, backend=backend), nx.strongly_connected_components(d)),
    ):
        assert _partition(comps.labels, g) == {frozenset(c) for c in ref}
        assert comps.sizes.tolist() == np.bincount(comps.labels).tolist()
        assert np.all(np.diff(comps.sizes) <= 0)
        firsts = [np.flatnonzero(comps.labels == c)[0] for c in range(len(comps.sizes))]
        for c in range(len(comps.sizes) - 1):  # ties in size: the component with the smaller node first
            if comps.sizes[c] == comps.sizes[c + 1]:
                assert firsts[c] < firsts[c + 1]

    cores = net.core_numbers(g, backend=backend)
    assert cores.dtype == np.int64 and cores.tolist() == _by_id(g, nx.core_number(u)).tolist()

    cl = net.clustering(g, backend=backend)
    np.testing.assert_allclose(cl.local, _by_id(g, nx.clustering(u)), rtol=RTOL, atol=0)
    assert cl.triangles.tolist() == _by_id(g, nx.triangles(u)).tolist()
    assert cl.transitivity == pytest.approx(nx.transitivity(u), rel=RTOL, abs=0)

    bc = net.betweenness(g, backend=backend)
    np.testing.assert_allclose(
        bc.values, _by_id(g, nx.betweenness_centrality(u, normalized=False)), rtol=RTOL, atol=1e-12
    )
    assert bc.exact and bc.samples == 0 and bc.sources.tolist() == list(range(g.n_nodes))

    conv = net.conversations(g, backend=backend)
    rec = {(a, b) for a, b in d.edges() if a != b and d.has_edge(b, a)}
    nodes = {x for e in rec for x in e}
    assert conv.graph.ids.tolist() == sorted(nodes)
    src, dst = conv.graph.edges()
    assert {(int(conv.graph.ids[a]), int(conv.graph.ids[b])) for a, b in zip(src, dst)} == rec
    assert (conv.nodes_before, conv.edges_before) == (g.n_nodes, g.n_edges)
    assert (conv.nodes_after, conv.edges_after) == (len(nodes), len(rec))
    assert _partition(conv.components.labels, conv.graph) == {
        frozenset(c) for c in nx.connected_components(nx.Graph(list(rec)))
    }


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_every_analysis_matches_networkx_on_hand_made_graphs(name, backend):
    _check_all(*_case(*HAND_MADE[name]), backend)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_graphs())
def test_every_analysis_matches_networkx_on_random_graphs(backend, case):
    _check_all(*_case(*case), backend)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_graphs(), st.integers(0, 3), st.sampled_from(["out", "in", "both"]), st.data())
def test_the_neighbourhood_is_networkx_ego_graph(backend, case, depth, direction, data):
    g, d, _ = _case(*case)
    node = data.draw(st.integers(0, g.n_nodes - 1))
    r = net.neighbourhood(g, node, depth=depth, direction=direction, backend=backend)
    centre = int(g.ids[node])
    ref = {"out": d, "in": d.reverse(), "both": d.to_undirected()}[direction]
    dist = nx.single_source_shortest_path_length(ref, centre, cutoff=depth)
    assert r.graph.ids.tolist() == sorted(dist)
    assert r.distance.tolist() == [dist[i] for i in sorted(dist)]
    src, dst = r.graph.edges()
    got = {(int(r.graph.ids[a]), int(r.graph.ids[b])) for a, b in zip(src, dst)}
    assert got == set(d.subgraph(dist).edges())
