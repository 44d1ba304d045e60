from __future__ import annotations

import numpy as np
import pytest

from compute.structures import Cascades, FollowerGraph, SpreadingGraphs, load_archive, save_archive

from .helpers import given_graphs


def _sample(times=True, labels=True) -> SpreadingGraphs:
    g = given_graphs(
        [([1, 2, 3], [(0, 2), (1, 2)], 2), ([5], [], 0), ([7, 9], [(1, 0)], 0)],
        times=[[2.0, 1.5, 0.0], [4.0], [0.0, 1e9 + 0.25]] if times else None,
    )
    c = g.cascades
    if labels:
        c = Cascades(
            c.node_offsets,
            c.user_ids,
            c.followers,
            c.publisher,
            c.tweet_ids,
            c.times,
            "retweeters",
            np.array(["false", None, "non-rumor"], dtype=object),
        )
        g = SpreadingGraphs(c, g.edge_offsets, g.edge_src.astype(np.int32), g.edge_dst.astype(np.int32), "attach")
    return g


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("times", [True, False])
def test_it_round_trips_the_archive_exactly(tmp_path, compress, times):
    g = _sample(times=times)
    path = tmp_path / "graphs.npz"
    save_archive(g, path, compress=compress)
    back = load_archive(path)
    for name in ("node_offsets", "user_ids", "followers", "publisher", "tweet_ids"):
        a, b = getattr(g.cascades, name), getattr(back.cascades, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    if times:
        assert np.array_equal(g.cascades.times, back.cascades.times)
    else:
        assert back.cascades.times is None
    for name in ("edge_offsets", "edge_src", "edge_dst"):
        a, b = getattr(g, name), getattr(back, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert back.orphans == "attach" and back.cascades.unit == "retweeters"
    assert back.cascades.labels.tolist() == ["false", None, "non-rumor"]


def test_it_keeps_the_file_name_it_was_given(tmp_path):
    save_archive(_sample(), tmp_path / "x.graphs")
    assert (tmp_path / "x.graphs").exists()


def test_it_names_the_missing_array_of_a_broken_archive(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, node_offsets=np.array([0, 1]))
    with pytest.raises(ValueError, match=r"bad\.npz.*missing array\(s\) user_ids"):
        load_archive(path)


def test_it_names_an_edge_that_leaves_its_cascade():
    c = Cascades([0, 2, 3], [1, 2, 3], [1, 1, 1], [0, 2], [10, 11])
    with pytest.raises(ValueError, match=r"edge_dst\[0\]=2 is not a node of cascade 0"):
        SpreadingGraphs(c, [0, 1, 1], [1], [2])


def test_it_names_a_publisher_outside_its_cascade():
    with pytest.raises(ValueError, match=r"publisher\[1\]=0 lies outside cascade 1"):
        Cascades([0, 2, 3], [1, 2, 3], [1, 1, 1], [0, 0], [10, 11])


def test_it_builds_a_deduplicated_csr_in_both_directions():
    g = FollowerGraph.from_edges([5, 5, 7, 5, 9], [7, 7, 5, 5, 5])  # a duplicate and a self-follow
    assert g.user_ids.tolist() == [5, 7, 9]
    assert g.friends_indptr.tolist() == [0, 1, 2, 3]
    assert g.user_ids[g.friends_indices].tolist() == [7, 5, 5]
    indptr, idx = g.followers()
    assert indptr.tolist() == [0, 2, 3, 3]
    assert g.user_ids[idx].tolist() == [7, 9, 5]
    assert g.index_of([9, 6, 5]).tolist() == [2, -1, 0]


def test_it_subsets_cascades_with_renumbered_indices():
    g = _sample()
    sub = g.subset([2, 0])
    assert sub.cascades.tweet_ids.tolist() == [1002, 1000]
    assert sub.cascades.node_offsets.tolist() == [0, 2, 5]
    assert sub.cascades.publisher.tolist() == [0, 4]
    assert list(zip(sub.edge_src.tolist(), sub.edge_dst.tolist())) == [(1, 0), (2, 4), (3, 4)]
    assert sub.cascades.labels.tolist() == ["non-rumor", "false"]
