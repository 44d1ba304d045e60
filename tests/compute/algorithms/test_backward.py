from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward

from ..helpers import given_graphs, influence_by_tweet, worked_example


def test_it_reproduces_the_thesis_worked_example_influence(backend):
    cascades, graph, expected = worked_example()
    res = backward(forward(cascades, graph, backend=backend), backend=backend)
    got = influence_by_tweet(cascades, res.influence)
    want = {int(t): {int(u): float(v) for u, v in d.items()} for t, d in expected["influence"].items()}
    assert got == want


def _diamond(order):
    # 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 ; publisher 3 ; followers 1, 2, 4, 8
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    return given_graphs([([1, 2, 4, 8], [edges[i] for i in order], 3)])


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]])
def test_it_gives_the_same_values_whatever_the_edge_order(backend, order):
    res = backward(_diamond(order), backend=backend)
    np.testing.assert_allclose(res.influence, [1, 2.5, 4.5, 15], rtol=1e-15)


def test_it_sends_everything_to_the_publisher(backend):
    # the publisher's influence is the sum of n_v over the nodes that reach it
    g = given_graphs([([1, 2, 4, 8, 16], [(0, 1), (1, 4), (2, 4)], 4)])  # node 3 is isolated
    res = backward(g, backend=backend)
    assert res.influence[4] == 1 + 2 + 4 + 16
    assert res.influence[3] == 8


def test_it_drops_forward_in_time_edges_of_a_cycle_and_names_the_cascade(backend):
    # cascade 1001 has the cycle 0 -> 1 -> 0; times say 1 is older than 0, so (1, 0) is dropped
    g = given_graphs(
        [([1, 1], [(0, 1)], 1), ([1, 2, 4], [(0, 1), (1, 0), (1, 2), (0, 2)], 2)],
        times=[[1.0, 0.0], [5.0, 3.0, 0.0]],
    )
    res = backward(g, backend=backend)
    assert res.cyclic.tolist() == [1]
    assert res.cyclic_tweet_ids == [1001]
    assert res.dropped_edges == 1
    np.testing.assert_allclose(res.influence[2:], [1, 2.5, 7])
    assert "1001" in res.lines()[0]


def test_it_rejects_a_cyclic_cascade_without_times(backend):
    g = given_graphs([([1, 1], [(0, 1)], 1), ([1, 1, 1], [(0, 1), (1, 0), (1, 2)], 2)])
    res = backward(g, backend=backend)
    assert res.rejected_tweet_ids == [1001]
    assert np.isnan(res.influence[2:]).all()
    np.testing.assert_allclose(res.influence[:2], [1, 2])
    assert "rejected" in res.lines()[-1]


def test_it_treats_a_self_loop_as_a_cycle(backend):
    g = given_graphs([([1, 1], [(0, 0), (0, 1)], 1)], times=[[1.0, 0.0]])
    res = backward(g, backend=backend)
    assert res.cyclic.tolist() == [0]
    np.testing.assert_allclose(res.influence, [1, 2])


def test_it_handles_empty_and_single_node_cascades(backend):
    g = given_graphs([([5], [], 0), ([3, 4], [(0, 1)], 1)])
    res = backward(g, backend=backend)
    np.testing.assert_allclose(res.influence, [5, 3, 7])


def test_it_gives_the_same_result_on_one_thread_and_many():
    rng = np.random.default_rng(3)
    cascades = []
    for _ in range(200):
        n = int(rng.integers(1, 30))
        edges = [(u, v) for u in range(n - 1) for v in range(u + 1, n) if rng.random() < 0.3]
        srcs = {u for u, _ in edges}
        edges += [(u, n - 1) for u in range(n - 1) if u not in srcs]
        rng.shuffle(edges)
        cascades.append((rng.integers(1, 100, n).tolist(), edges, n - 1))
    g = given_graphs(cascades)
    a = backward(g, backend="cpu", threads=1).influence
    b = backward(g, backend="cpu", threads=2).influence
    assert np.array_equal(a, b)


@pytest.mark.parametrize("sources_increase", [True, False])
@pytest.mark.parametrize("edges_point_up", [True, False])
def test_it_sweeps_every_monotone_edge_layout_like_the_queue(sources_increase, edges_point_up):
    """Edge lists grouped by source, in either memory order, with edges all pointing up or all down in index
    order (our forward output and Algorithm 10 graphs are two of these four) — plus a spoilt copy that must
    fall back to the queue — all give Algorithm 2's values."""
    from ..oracle import compute_influence

    rng = np.random.default_rng(11)
    n = 40
    edges = [(u, v) for u in range(n - 1) for v in range(u + 1, n) if rng.random() < 0.2 or v == u + 1]
    if not edges_point_up:  # mirror the node numbering: every edge now points down
        edges = [(n - 1 - u, n - 1 - v) for u, v in edges]
    edges.sort(reverse=not sources_increase)
    followers = rng.integers(1, 50, n).tolist()
    pub = n - 1 if edges_point_up else 0
    want = compute_influence(list(range(n)), set(edges), dict(enumerate(map(float, followers))), set(range(n)) - {pub})
    spoilt = edges[1:] + edges[:1]  # one run split in two: not sweepable
    g = given_graphs([(followers, edges, pub), (followers, spoilt, pub)])
    res = backward(g, backend="cpu")
    np.testing.assert_allclose(res.influence[:n], [want[v] for v in range(n)], rtol=1e-12)
    np.testing.assert_allclose(res.influence[n:], [want[v] for v in range(n)], rtol=1e-12)
