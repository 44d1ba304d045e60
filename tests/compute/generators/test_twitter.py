"""The twitter preset: a follower graph plus retweet cascades spread over it (CRGP bigger4 at scale 1)."""

from __future__ import annotations

import numpy as np
import pytest

import compute._jit as jit
from compute.generators import BIGGER4_TARGETS, collection_stats, twitter_collection
from compute.generators._common import TWITTER_EPOCH_MS
from compute.structures import FollowerGraph

SCALE = 0.002


@pytest.fixture(scope="module")
def collection():
    return twitter_collection(scale=SCALE, seed=11)


def _tweet_arrays(tweets) -> dict[str, np.ndarray]:
    return {
        k: getattr(tweets, k) for k in ("tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count")
    }


def test_it_is_reproducible_and_seed_dependent(collection):
    tweets, graph = collection
    again, graph2 = twitter_collection(scale=SCALE, seed=11)
    for k, a in _tweet_arrays(tweets).items():
        assert np.array_equal(a, _tweet_arrays(again)[k]), k
    assert np.array_equal(graph.friends_indptr, graph2.friends_indptr)
    assert np.array_equal(graph.friends_indices, graph2.friends_indices)
    assert np.array_equal(graph.user_ids, graph2.user_ids)
    other, graph3 = twitter_collection(scale=SCALE, seed=12)
    assert not np.array_equal(graph.friends_indices[:1000], graph3.friends_indices[:1000])
    assert not np.array_equal(tweets.user_id, other.user_id)


def test_it_gives_the_same_cascades_without_numba(monkeypatch):
    fast, _ = twitter_collection(scale=0.0005, seed=2)
    monkeypatch.setattr(jit, "HAVE_NUMBA", False)
    slow, _ = twitter_collection(scale=0.0005, seed=2)
    for k, a in _tweet_arrays(fast).items():
        assert np.array_equal(a, _tweet_arrays(slow)[k]), k


def test_it_builds_a_clean_sorted_friends_csr(collection):
    _, g = collection
    indptr, idx = g.friends_indptr, g.friends_indices
    assert idx.dtype == np.int32 and indptr[0] == 0 and indptr[-1] == len(idx)
    rows = np.repeat(np.arange(g.n_users), np.diff(indptr))
    assert not np.any(rows == idx), "self-follow"
    same_row = rows[1:] == rows[:-1]
    assert np.all(idx[1:][same_row] > idx[:-1][same_row]), "row not strictly increasing (unsorted or duplicate)"
    assert np.all(np.diff(g.user_ids) > 0)


def test_it_hands_over_the_followers_index_the_graph_would_build(collection):
    _, g = collection
    fresh = FollowerGraph(g.user_ids, g.friends_indptr, g.friends_indices)
    for a, b in zip(g.followers(), fresh.followers()):
        assert np.array_equal(a, b)


def test_it_matches_the_scaled_bigger4_targets(collection):
    tweets, g = collection
    s = collection_stats(tweets, g)
    assert s["cascades"] == round(BIGGER4_TARGETS["cascades"] * SCALE)
    for key in ("users", "follow_edges", "retweets"):
        assert abs(s[key] / (BIGGER4_TARGETS[key] * SCALE) - 1) <= 0.10, (key, s[key])
    assert s["followers_max"] > 10 * s["followers_median"]  # heavy-tailed follower counts
    assert s["cascade_size_max"] > 3 * s["cascade_size_avg"] > 3 * s["cascade_size_median"]


def test_it_writes_consistent_tweets(collection):
    tweets, g = collection
    rt = tweets.is_retweet
    assert len(np.unique(tweets.tweet_id)) == len(tweets)
    assert np.all(np.diff(tweets.created_at) >= 0), "rows are a time-ordered stream"
    assert np.all(tweets.created_at == np.floor(tweets.created_at))
    ms = (tweets.tweet_id >> 22) + TWITTER_EPOCH_MS
    assert np.array_equal(ms // 1000, tweets.created_at.astype(np.int64)), "snowflake time bits"
    orig = dict(zip(tweets.tweet_id[~rt].tolist(), zip(tweets.user_id[~rt].tolist(), tweets.created_at[~rt].tolist())))
    seen = set()
    for tid, uid, t in zip(
        tweets.retweeted_tweet_id[rt].tolist(), tweets.user_id[rt].tolist(), tweets.created_at[rt].tolist()
    ):
        pub, t0 = orig[tid]
        assert t > t0 and uid != pub
        assert (tid, uid) not in seen, "a user retweeted the same tweet twice"
        seen.add((tid, uid))
    indeg = np.diff(g.followers()[0])
    assert np.array_equal(tweets.followers_count, indeg[g.index_of(tweets.user_id)].astype(float))


def test_it_makes_most_retweeters_follow_an_earlier_participant(collection):
    tweets, g = collection
    rt = tweets.is_retweet
    dense = g.index_of(tweets.user_id)
    root = np.where(rt, tweets.retweeted_tweet_id, tweets.tweet_id)
    participants: dict[int, list[tuple[float, int]]] = {}
    follows_earlier = 0
    for i in range(len(tweets)):  # rows are in time order
        earlier = participants.setdefault(int(root[i]), [])
        if rt[i]:
            v = int(dense[i])
            friends = set(g.friends_indices[g.friends_indptr[v] : g.friends_indptr[v + 1]].tolist())
            t = tweets.created_at[i]
            follows_earlier += any(u in friends and tu < t for tu, u in earlier)
        earlier.append((tweets.created_at[i], int(dense[i])))
    share = follows_earlier / rt.sum()
    assert 0.92 <= share <= 0.99, share  # ~5% orphans found the tweet by search


def test_it_keeps_mean_degree_and_cascade_size_when_scaled():
    tw, g = twitter_collection(scale=0.0005, seed=1)
    s = collection_stats(tw, g)
    assert s["cascades"] == 50
    assert 95 <= s["follow_edges"] / s["users"] <= 120
    assert 30 <= s["retweets"] / s["cascades"] <= 40


def test_it_rejects_a_scale_without_cascades():
    with pytest.raises(ValueError, match="scale"):
        twitter_collection(scale=-1.0)
    with pytest.raises(ValueError, match="no cascade"):
        twitter_collection(scale=1e-6)


def test_it_ranks_followees_by_integer_thresholds_exactly():
    from compute.generators.twitter import _U53, _zipf_rank, _zipf_thresholds

    n = 5000
    th = _zipf_thresholds(n)
    k = np.random.default_rng(0).integers(0, _U53, 200_000, dtype=np.int64)
    k[: 3 * (n + 1)] = np.concatenate([th, th - 1, th + 1]).clip(0, _U53 - 1)  # draws on and next to boundaries
    assert np.array_equal(_zipf_rank(k, n, th), np.searchsorted(th, k, side="right") - 1)
