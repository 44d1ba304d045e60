from __future__ import annotations

import numpy as np
import pytest

from compute.collection import save_collection
from compute.formats import InputError, detect_format, iter_follows, iter_tweets, read
from compute.structures import Cascades, FollowerGraph, SpreadingGraphs, save_archive
from compute.tables import TweetTable, concat_follows, concat_tweets


def _graphs() -> SpreadingGraphs:
    c = Cascades(
        node_offsets=[0, 3, 5],
        user_ids=[10, 11, 12, 20, 21],
        followers=[1, 2, 3, 4, 5],
        publisher=[0, 3],
        tweet_ids=[100, 200],
        times=[0, 1, 2, 0, 1],
        labels=np.array(["true", None], dtype=object),
    )
    return SpreadingGraphs(c, [0, 2, 3], np.array([1, 2, 4], np.int32), np.array([0, 1, 3], np.int32))


def test_it_reads_a_spreading_graph_archive(tmp_path):
    p = tmp_path / "g.npz"
    save_archive(_graphs(), p)
    assert detect_format(p) == "npz"
    res = read(p)
    g = res.graphs
    assert res.format == "npz" and res.tweets is None and res.follower_graph is None
    assert g.cascades.tweet_ids.tolist() == [100, 200] and g.edge_src.tolist() == [1, 2, 4]
    assert g.cascades.times.tolist() == [0, 1, 2, 0, 1]
    assert res.labels == {100: "true"} and res.report.n_good == 2


T0 = 1577836800.0  # 2020-01-01: a collection's times are epoch seconds, range-checked like any tweet's


def _collection(tmp_path):
    tweets = TweetTable.from_rows(
        [
            (1, None, 10, T0, 5),
            (2, 1, 11, T0 + 1, 3),
            (3, 1, 12, T0 + 2, None),
        ]
    )
    graph = FollowerGraph.from_edges([11, 12, 12], [10, 10, 11])
    p = tmp_path / "c.npz"
    save_collection(p, tweets, graph, labels={1: "false"})
    return p, tweets, graph


def test_it_reads_a_collection_archive(tmp_path):
    p, tweets, graph = _collection(tmp_path)
    assert detect_format(p) == "npz"
    res = read(p)
    assert np.array_equal(res.tweets.tweet_id, tweets.tweet_id)
    assert np.isnan(res.tweets.followers_count[2])
    assert np.array_equal(res.follower_graph.friends_indices, graph.friends_indices)
    assert res.labels == {1: "false"} and res.graphs is None and res.follows is None


def test_it_streams_a_collection_archive(tmp_path):
    p, tweets, _ = _collection(tmp_path)
    assert np.array_equal(concat_tweets(list(iter_tweets(p, chunk_size=2))).user_id, tweets.user_id)
    f = concat_follows(list(iter_follows(p, chunk_size=2)))
    assert sorted(zip(f.follower_id.tolist(), f.followee_id.tolist())) == [(11, 10), (12, 10), (12, 11)]


def test_it_refuses_other_archives(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros(3))
    with pytest.raises(ValueError, match="neither a spreading-graph nor a collection archive"):
        detect_format(p)
    with pytest.raises(InputError, match=r"x.npz: neither a spreading-graph nor a collection archive: arrays: a"):
        read(p, "npz")
    assert read(p, "npz", mode="skip-bad").report.n_bad == 1


def test_it_reports_an_inconsistent_archive(tmp_path):
    p = tmp_path / "bad.npz"
    g = _graphs()
    c = g.cascades
    np.savez(
        p,
        node_offsets=c.node_offsets,
        user_ids=c.user_ids[:4],
        followers=c.followers,
        publisher=c.publisher,
        edge_offsets=g.edge_offsets,
        edge_src=g.edge_src,
        edge_dst=g.edge_dst,
        tweet_ids=c.tweet_ids,
    )
    with pytest.raises(InputError, match=r"bad.npz: bad archive: user_ids has length 4, expected N=5"):
        read(p)
