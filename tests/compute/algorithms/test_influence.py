"""Both phases in one call (``compute.algorithms.influence``): the numbers are exactly those of the forward phase
followed by the backward phase, on either backend."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.algorithms.influence import influence
from compute.build import build_cascades
from compute.generators import twitter_collection

from ..helpers import edge_sets, influence_by_tweet, worked_example


def test_it_reproduces_the_thesis_worked_example(backend):
    cascades, graph, expected = worked_example()
    res = influence(cascades, graph, backend=backend)
    want_edges = {int(t): {tuple(e) for e in edges} for t, edges in expected["spreading_edges"].items()}
    assert edge_sets(res.graphs) == want_edges
    want = {int(t): {int(u): float(v) for u, v in d.items()} for t, d in expected["influence"].items()}
    assert influence_by_tweet(cascades, res.influence) == want


@pytest.mark.parametrize("orphans", ["strict", "attach"])
def test_it_equals_the_forward_phase_then_the_backward_phase(backend, orphans):
    tweets, graph = twitter_collection(scale=0.001, seed=7)
    cascades, _ = build_cascades(tweets)
    res = influence(cascades, graph, orphans=orphans, backend=backend)
    graphs = forward(cascades, graph, orphans=orphans, backend=backend)
    assert res.graphs.n_edges == graphs.n_edges > 0
    assert edge_sets(res.graphs) == edge_sets(graphs)
    assert res.graphs.orphans == orphans
    want = backward(graphs, backend=backend).influence
    assert np.array_equal(res.influence, want, equal_nan=True)


def test_it_rejects_an_unknown_orphan_policy():
    cascades, graph, _ = worked_example()
    with pytest.raises(ValueError, match="orphans must be one of"):
        influence(cascades, graph, orphans="adopt", backend="cpu")


def test_it_refuses_cascades_without_times():
    cascades, graph, _ = worked_example()
    from compute.structures import Cascades

    no_times = Cascades(cascades.node_offsets, cascades.user_ids, cascades.followers, cascades.publisher,
                        cascades.tweet_ids)  # fmt: skip
    with pytest.raises(ValueError, match="participation times"):
        influence(no_times, graph, backend="cpu")
