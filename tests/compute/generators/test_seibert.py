"""The seibert preset: small real-looking spreading DAGs (thesis Table 7.1, Seibert column)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compute.generators import SEIBERT_TARGETS, graph_stats, random_spreading_graphs

from .helpers import assert_same_arrays, assert_single_sink_dags, graph_arrays, reaches_sink_by_search


@pytest.fixture(scope="module")
def seibert_full():
    return random_spreading_graphs("seibert", seed=0)


def test_it_matches_the_seibert_column_of_table_7_1(seibert_full):
    s = graph_stats(seibert_full)
    assert s["T"] == 3140
    assert (s["empty"], s["small"], s["medium"], s["large"]) == (764, 1870, 506, 0)
    for key in ("T", "avg_n", "max_n", "N", "M", "median_n", "avg_m"):
        assert abs(s[key] / SEIBERT_TARGETS[key] - 1) <= 0.10, (key, s[key])
    assert 10 <= s["median_m"] <= 12
    assert 80 <= s["max_m"] <= 160
    assert 12_000 <= s["U"] <= 14_100


def test_it_builds_time_ordered_single_sink_dags(seibert_full):
    assert_single_sink_dags(seibert_full)
    c = seibert_full.cascades
    assert np.array_equal(c.publisher, c.node_offsets[:-1])  # publisher first, retweeters in time order
    for t in range(0, seibert_full.n_cascades, 13):
        assert reaches_sink_by_search(seibert_full, t)
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        assert np.all(np.diff(c.times[lo:hi]) > 0)
        assert len(np.unique(c.user_ids[lo:hi])) == hi - lo


def test_it_makes_star_ish_trees_with_few_extra_edges(seibert_full):
    c = seibert_full.cascades
    dst = seibert_full.edge_dst
    to_publisher = np.isin(dst, c.publisher).mean()
    assert 0.55 < to_publisher < 0.85
    assert seibert_full.n_edges < 1.05 * (c.n_nodes - c.n_cascades)


def test_it_is_reproducible_and_seed_dependent():
    a = random_spreading_graphs("seibert", scale=0.1, seed=1)
    b = random_spreading_graphs("seibert", scale=0.1, seed=1)
    c = random_spreading_graphs("seibert", scale=0.1, seed=2)
    assert_same_arrays(graph_arrays(a), graph_arrays(b))
    assert not np.array_equal(a.cascades.node_offsets, c.cascades.node_offsets)


def test_it_scales_the_number_of_graphs_and_keeps_each_graph():
    small = random_spreading_graphs("seibert", scale=0.1, seed=5)
    big = random_spreading_graphs("seibert", scale=0.2, seed=5)
    assert small.n_cascades == 314 and big.n_cascades == 628
    assert random_spreading_graphs("seibert", scale=2.0, seed=5).n_cascades == 6280

    def shapes(g):
        c = g.cascades
        users = [tuple(c.user_ids[c.node_offsets[t] : c.node_offsets[t + 1]].tolist()) for t in range(g.n_cascades)]
        return Counter(zip(c.sizes.tolist(), np.diff(g.edge_offsets).tolist(), users))

    # graph j of each batch is the same at every scale that contains it
    assert not shapes(small) - shapes(big)
