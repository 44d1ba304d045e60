"""The rsg preset and the thesis' Algorithm 10 underneath it."""

from __future__ import annotations

import numpy as np
import pytest

import compute._jit as jit
from compute.generators import RSG_BATCHES, generate_n_dags, graph_stats, random_spreading_graphs
from compute.generators._common import scaled_counts
from compute.generators.rsg import algorithm10_graph

from .helpers import assert_same_arrays, assert_single_sink_dags, graph_arrays, reaches_sink_by_search


@pytest.fixture(scope="module")
def rsg_small():
    return random_spreading_graphs("rsg", scale=0.01, seed=3)


def _rows(out_degree: np.ndarray, dst: np.ndarray) -> list[list[int]]:
    off = np.concatenate([[0], np.cumsum(out_degree)])
    return [dst[off[u] : off[u + 1]].tolist() for u in range(len(out_degree))]


def test_it_gives_identical_arrays_for_the_same_seed(rsg_small):
    again = random_spreading_graphs("rsg", scale=0.01, seed=3)
    assert_same_arrays(graph_arrays(rsg_small), graph_arrays(again))


def test_it_gives_different_graphs_for_another_seed(rsg_small):
    other = random_spreading_graphs("rsg", scale=0.01, seed=4)
    assert other.n_cascades == rsg_small.n_cascades  # class counts depend on the scale only
    assert other.n_edges != rsg_small.n_edges or not np.array_equal(other.edge_dst, rsg_small.edge_dst)


def test_it_builds_single_sink_dags_that_reach_the_publisher(rsg_small):
    assert_single_sink_dags(rsg_small)
    c = rsg_small.cascades
    assert np.array_equal(c.publisher, c.node_offsets[1:] - 1)  # Algorithm 10: the sink is node n-1
    for t in range(0, rsg_small.n_cascades, 7):
        assert reaches_sink_by_search(rsg_small, t)


def test_it_keeps_users_distinct_within_a_graph_and_times_decreasing(rsg_small):
    c = rsg_small.cascades
    for t in range(rsg_small.n_cascades):
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        assert len(np.unique(c.user_ids[lo:hi])) == hi - lo
        assert c.times[hi - 1] == 0.0
        assert np.all(np.diff(c.times[lo:hi]) < 0)
    assert len(np.unique(c.tweet_ids)) == rsg_small.n_cascades
    assert np.all(c.followers >= 0) and np.all(c.followers == np.floor(c.followers))


def test_it_writes_only_the_sink_edge_for_non_outliers_when_percent_is_zero():
    rng = np.random.default_rng(0)
    n = 60
    out_degree, dst = algorithm10_graph(n, 0.0, rng)
    for u, row in enumerate(_rows(out_degree, dst)):
        if u == n - 1:
            assert row == []
        else:
            assert row in ([n - 1], list(range(u + 1, n))), (u, row)  # the sink edge, or an outlier's full row


def test_it_builds_the_complete_dag_when_percent_is_one():
    out_degree, dst = algorithm10_graph(40, 1.0, np.random.default_rng(1))
    assert [len(r) for r in _rows(out_degree, dst)] == list(range(39, -1, -1))
    assert all(row == list(range(u + 1, 40)) for u, row in enumerate(_rows(out_degree, dst)))


def test_it_handles_one_and_two_node_graphs():
    d, x = algorithm10_graph(1, 0.5, np.random.default_rng(0))
    assert d.tolist() == [0] and len(x) == 0
    d, x = algorithm10_graph(2, 0.0, np.random.default_rng(0))
    assert d.tolist() == [1, 0] and x.tolist() == [1]


def test_it_draws_edges_with_the_given_probability_and_five_percent_outliers():
    rng = np.random.default_rng(5)
    n, p = 400, 0.1
    full = cand = got = rows = 0
    for _ in range(20):
        out_degree, dst = algorithm10_graph(n, p, rng)
        for u, row in enumerate(_rows(out_degree, dst)[: n - 50]):  # long rows: a full row is an outlier
            rows += 1
            if len(row) == n - 1 - u:
                full += 1
            else:
                cand += n - 1 - u
                got += len(row)
            assert row == sorted(set(row)) and all(u < v < n for v in row)
    assert 0.035 < full / rows < 0.065
    assert abs(got / cand - p) < 0.005


def test_it_keeps_n_within_lo_and_hi():
    g = generate_n_dags(200, 5, 9, 0.2, seed=1)
    assert g.n_cascades == 200
    assert g.cascades.sizes.min() >= 5 and g.cascades.sizes.max() <= 9
    assert_single_sink_dags(g)


def test_it_gives_the_same_edges_with_and_without_numba(monkeypatch):
    cases = [(2, 0.5), (37, 0.0), (300, 0.03), (800, 0.17), (1500, 0.5)]
    fast = [algorithm10_graph(n, p, np.random.default_rng(n)) for n, p in cases]
    monkeypatch.setattr(jit, "HAVE_NUMBA", False)
    slow = [algorithm10_graph(n, p, np.random.default_rng(n)) for n, p in cases]
    for (d1, x1), (d2, x2) in zip(fast, slow):
        assert np.array_equal(d1, d2) and np.array_equal(x1, x2)


def test_it_scales_the_number_of_graphs_per_size_class():
    classes = [b.size_class for b in RSG_BATCHES]
    counts = [b.count for b in RSG_BATCHES]
    assert scaled_counts(counts, classes, 1.0) == counts
    tenth = scaled_counts(counts, classes, 0.1)
    by_class = {c: sum(n for n, k in zip(tenth, classes) if k == c) for c in classes}
    assert by_class == {"empty": 17, "small": 525, "medium": 984, "large": 17}
    assert sum(scaled_counts(counts, classes, 2.0)) == 2 * 15_435


def test_it_has_table_7_1_shapes_at_small_scale(rsg_small):
    s = graph_stats(rsg_small)
    assert s["T"] == 154
    assert (s["empty"], s["small"], s["medium"], s["large"]) == (2, 52, 98, 2)
    assert 60 <= s["median_n"] <= 90
    assert 200 <= s["median_m"] <= 330
    # the class shares follow the full preset; the giant graph of the full preset only appears at scale >= 0.5
    assert s["max_n"] <= 20_000


def test_it_rejects_bad_arguments():
    with pytest.raises(ValueError, match="scale"):
        random_spreading_graphs("rsg", scale=0)
    with pytest.raises(ValueError, match="unknown preset"):
        random_spreading_graphs("nope")
    with pytest.raises(ValueError, match="twitter_collection"):
        random_spreading_graphs("twitter")
    with pytest.raises(ValueError, match="percent"):
        generate_n_dags(3, 2, 5, 7.0)
    with pytest.raises(ValueError, match="no graph"):
        random_spreading_graphs("rsg", scale=1e-6)
