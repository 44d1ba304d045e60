"""The paper-sized follower graphs of the influence-maximisation benchmarks."""

from __future__ import annotations

import numpy as np
import pytest

from compute.generators.im_graphs import PAPER_GRAPHS, paper_graph


@pytest.mark.parametrize("name", ["nethept", "netphy"])
def test_it_has_exactly_the_papers_nodes_and_edges(name):
    g = paper_graph(name, seed=3)
    assert (g.n_nodes, g.n_edges) == PAPER_GRAPHS[name]
    src, dst = g.edges()
    assert not np.any(src == dst)  # no self follows; Graph itself checks rows are sorted and distinct


def test_it_is_heavy_tailed_on_followers_and_reproducible():
    g = paper_graph("amazon", scale=0.05, seed=1)
    followers = g.in_degree
    assert followers.max() > 20 * followers.mean() and g.out_degree.max() < followers.max()
    h = paper_graph("amazon", scale=0.05, seed=1)
    assert np.array_equal(g.indices, h.indices) and np.array_equal(g.indptr, h.indptr)
    with pytest.raises(ValueError):
        paper_graph("facebook")
