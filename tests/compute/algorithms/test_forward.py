from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.forward import forward

from ..helpers import edge_sets, follows, one_cascade, worked_example


def test_it_reproduces_the_thesis_worked_example_edges(backend):
    cascades, graph, expected = worked_example()
    got = edge_sets(forward(cascades, graph, backend=backend))
    want = {int(t): {tuple(e) for e in edges} for t, edges in expected["spreading_edges"].items()}
    assert got == want


def test_it_gives_no_edge_for_equal_times(backend):
    # 2 follows 1 but retweets at the publisher's own time
    c = one_cascade(1, [(2, 0.0), (3, 5.0)])
    g = follows((2, 1), (3, 1))
    assert edge_sets(forward(c, g, backend=backend))[1] == {(3, 1)}


def test_it_needs_strictly_later_times_between_retweeters(backend):
    c = one_cascade(1, [(2, 3.0), (3, 3.0), (4, 4.0)])
    g = follows((2, 1), (3, 2), (4, 3))
    # 3 ties with 2 so 3 is unreachable; 4 then only follows an unreached user
    assert edge_sets(forward(c, g, backend=backend))[1] == {(2, 1)}


def test_it_drops_edges_whose_earlier_end_is_unreachable(backend):
    # 3 follows 2, 2 follows nobody in the cascade: 2 is an orphan, so (3, 2) is not in S_t
    c = one_cascade(1, [(2, 1.0), (3, 2.0), (4, 3.0)])
    g = follows((3, 2), (4, 1))
    assert edge_sets(forward(c, g, backend=backend))[1] == {(4, 1)}


def test_it_leaves_orphans_isolated_under_strict(backend):
    c = one_cascade(1, [(2, 1.0), (3, 2.0)])
    g = follows((2, 1))  # 3 is not even in the follower graph
    sg = forward(c, g, orphans="strict", backend=backend)
    edges = edge_sets(sg)[1]
    assert edges == {(2, 1)}
    assert all(3 not in e for e in edges)


def test_it_attaches_orphans_to_the_publisher_and_lets_them_spread(backend):
    c = one_cascade(1, [(2, 1.0), (3, 2.0), (5, 3.0)])
    g = follows((2, 1), (5, 3))  # 3 is an orphan; 5 follows 3
    assert edge_sets(forward(c, g, orphans="attach", backend=backend))[1] == {(2, 1), (3, 1), (5, 3)}
    assert edge_sets(forward(c, g, orphans="strict", backend=backend))[1] == {(2, 1)}


def test_it_handles_a_publisher_missing_from_the_follower_graph(backend):
    c = one_cascade(1, [(2, 1.0), (3, 2.0)])
    g = follows((3, 2))
    assert edge_sets(forward(c, g, backend=backend))[1] == set()


def test_it_ignores_follow_edges_outside_the_cascade(backend):
    c = one_cascade(1, [(2, 1.0)])
    g = follows((2, 1), (9, 1), (2, 9), (8, 2))
    assert edge_sets(forward(c, g, backend=backend))[1] == {(2, 1)}


def test_it_finds_the_same_edges_whichever_side_of_the_lookup_is_shorter(backend):
    # user 50 follows 200 users (long friend list) in a short cascade, and in a long cascade the reverse
    friends = [(50, u) for u in range(1000, 1200)] + [(50, 1)]
    short = one_cascade(1, [(50, 1.0)], tweet_id=1)
    long = one_cascade(1, [(u, float(u)) for u in range(2, 40)] + [(50, 100.0)], tweet_id=2)
    g = follows(*friends, *((u, 1) for u in range(2, 40)))
    assert edge_sets(forward(short, g, backend=backend))[1] == {(50, 1)}
    assert edge_sets(forward(long, g, backend=backend))[2] == {(50, 1)} | {(u, 1) for u in range(2, 40)}


def test_it_records_the_orphan_policy_and_emits_compact_indices():
    cascades, graph, _ = worked_example()
    sg = forward(cascades, graph, orphans="attach", backend="cpu")
    assert sg.orphans == "attach"
    assert sg.edge_src.dtype == np.int32


def test_it_rejects_an_unknown_orphan_policy():
    cascades, graph, _ = worked_example()
    with pytest.raises(ValueError, match="orphans must be one of"):
        forward(cascades, graph, orphans="maybe")


def test_it_refuses_cascades_without_times():
    from compute.structures import Cascades

    c = Cascades([0, 1], [1], [1.0], [0], [7])
    with pytest.raises(ValueError, match="needs participation times"):
        forward(c, follows())
